// Exact linear assignment by shortest augmenting paths with dual potentials (the Hungarian
// method in the Jonker-Volgenant formulation): one Dijkstra-like search per row, O(n^2 m).
#include "birkhoff/graph/align/lap.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::align {

std::vector<std::int64_t> linear_assignment(MatrixView<const double> cost, bool maximize) {
  const std::int64_t n = cost.rows, m = cost.cols;
  require(n <= m, "cost",
          "needs rows <= columns, got (" + std::to_string(n) + ", " + std::to_string(m) + ")");
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < m; ++j) {
      require(std::isfinite(cost(i, j)), "cost", "holds NaN or inf");
    }
  }
  const double sign = maximize ? -1.0 : 1.0;
  const double inf = std::numeric_limits<double>::infinity();
  // 1-based: column 0 is the virtual start of each search; owner[j] = row matched to column j.
  std::vector<double> u(static_cast<std::size_t>(n) + 1, 0.0), v(static_cast<std::size_t>(m) + 1);
  std::vector<std::int64_t> owner(static_cast<std::size_t>(m) + 1, 0), way(owner.size(), 0);
  std::vector<double> min_slack(owner.size());
  std::vector<char> used(owner.size());
  for (std::int64_t i = 1; i <= n; ++i) {
    owner[0] = i;
    std::int64_t j0 = 0;
    std::fill(min_slack.begin(), min_slack.end(), inf);
    std::fill(used.begin(), used.end(), 0);
    do {
      used[j0] = 1;
      const std::int64_t i0 = owner[j0];
      const double* row = cost.row(i0 - 1);
      double delta = inf;
      std::int64_t j1 = 0;
      for (std::int64_t j = 1; j <= m; ++j) {
        if (used[j]) continue;
        const double cur = sign * row[j - 1] - u[i0] - v[j];
        if (cur < min_slack[j]) {
          min_slack[j] = cur;
          way[j] = j0;
        }
        if (min_slack[j] < delta) {
          delta = min_slack[j];
          j1 = j;
        }
      }
      for (std::int64_t j = 0; j <= m; ++j) {
        if (used[j]) {
          u[owner[j]] += delta;
          v[j] -= delta;
        } else {
          min_slack[j] -= delta;
        }
      }
      j0 = j1;
    } while (owner[j0] != 0);
    do {
      const std::int64_t j1 = way[j0];
      owner[j0] = owner[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<std::int64_t> assignment(static_cast<std::size_t>(n), -1);
  for (std::int64_t j = 1; j <= m; ++j) {
    if (owner[j] != 0) assignment[owner[j] - 1] = j - 1;
  }
  return assignment;
}

}  // namespace birkhoff::align
