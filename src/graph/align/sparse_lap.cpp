// Maximum-weight assignment on a sparse candidate graph: a maximum-cardinality matching
// (Hopcroft-Karp) picks the rows to cover, then Bertsekas' forward auction with epsilon-scaling
// assigns them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/lap.hpp"

namespace birkhoff::align {
namespace {

// Hopcroft-Karp: a maximum-cardinality matching of the candidate graph (row -> column, -1).
std::vector<std::int64_t> maximum_matching(const SparseWeights& w) {
  const std::int64_t n = w.n_rows, m = w.n_cols;
  std::vector<std::int64_t> row_of(static_cast<std::size_t>(m), -1);
  std::vector<std::int64_t> col_of(static_cast<std::size_t>(n), -1), level(col_of.size());
  std::vector<std::int64_t> queue, next(col_of.size()), stack;
  constexpr std::int64_t kFar = std::numeric_limits<std::int64_t>::max();
  for (;;) {
    // Layers from the free rows along alternating paths.
    queue.clear();
    for (std::int64_t i = 0; i < n; ++i) {
      level[i] = col_of[i] < 0 ? 0 : kFar;
      if (col_of[i] < 0) queue.push_back(i);
    }
    bool found = false;
    for (std::size_t h = 0; h < queue.size(); ++h) {
      const std::int64_t i = queue[h];
      for (std::int64_t k = w.indptr[i]; k < w.indptr[i + 1]; ++k) {
        const std::int64_t r = row_of[w.cols[k]];
        if (r < 0) {
          found = true;
        } else if (level[r] == kFar) {
          level[r] = level[i] + 1;
          queue.push_back(r);
        }
      }
    }
    if (!found) return col_of;
    // Vertex-disjoint shortest augmenting paths by iterative depth-first search.
    for (std::int64_t i = 0; i < n; ++i) next[i] = w.indptr[i];
    for (std::int64_t start = 0; start < n; ++start) {
      if (col_of[start] >= 0) continue;
      stack.assign(1, start);
      while (!stack.empty()) {
        const std::int64_t i = stack.back();
        if (next[i] == w.indptr[i + 1]) {
          level[i] = kFar;  // dead end
          stack.pop_back();
          continue;
        }
        const std::int64_t j = w.cols[next[i]];
        const std::int64_t r = row_of[j];
        if (r < 0) {
          // Augment along the stack: each row takes the column its search stands on.
          for (std::size_t q = stack.size(); q-- > 0;) {
            const std::int64_t row = stack[q];
            const std::int64_t col = w.cols[next[row]];
            col_of[row] = col;
            row_of[col] = row;
          }
          stack.clear();
        } else if (level[r] == level[i] + 1) {
          stack.push_back(r);
        } else {
          ++next[i];
        }
      }
    }
  }
}

}  // namespace

std::vector<std::int64_t> sparse_assignment(const SparseWeights& w, double tolerance) {
  const std::int64_t n = w.n_rows, m = w.n_cols;
  require(n >= 0 && m >= 0, "weights", "needs n_rows, n_cols >= 0");
  require(static_cast<std::int64_t>(w.indptr.size()) == n + 1 && w.indptr.front() == 0, "weights",
          "indptr must have n_rows + 1 entries starting at 0");
  require(w.cols.size() == w.weights.size() &&
              static_cast<std::int64_t>(w.cols.size()) == w.indptr.back(),
          "weights", "cols and weights must have indptr[n_rows] entries");
  require(tolerance > 0 && tolerance < 1, "tolerance", "must lie in (0, 1)");
  double lo = 0, hi = 0;
  for (std::size_t k = 0; k < w.cols.size(); ++k) {
    require(w.cols[k] >= 0 && w.cols[k] < m, "weights",
            "column " + std::to_string(w.cols[k]) + " outside [0, " + std::to_string(m) + ")");
    require(std::isfinite(w.weights[k]), "weights", "holds NaN or inf");
    lo = k == 0 ? w.weights[k] : std::min(lo, w.weights[k]);
    hi = k == 0 ? w.weights[k] : std::max(hi, w.weights[k]);
  }
  std::vector<std::int64_t> assigned(static_cast<std::size_t>(n), -1);
  if (w.cols.empty()) return assigned;
  const double range = hi > lo ? hi - lo : std::max(1.0, std::abs(hi));
  // Rows that no maximum-cardinality matching needs stay out; the others can all be covered,
  // so the auction below ends. A row's only candidate is bid up as if its runner-up were worth
  // more than any reassignment of the others can gain less.
  const std::vector<std::int64_t> coverable = maximum_matching(w);
  const double runner_up = (static_cast<double>(n) + 1.0) * range;
  const double eps_final = tolerance * range;
  std::vector<double> price(static_cast<std::size_t>(m), 0.0);
  std::vector<std::int64_t> owner(static_cast<std::size_t>(m), -1), queue;
  queue.reserve(static_cast<std::size_t>(n));
  // One bidding phase from the current prices: every row ends within eps of its best column.
  const auto phase = [&](double eps) {
    std::fill(owner.begin(), owner.end(), -1);
    std::fill(assigned.begin(), assigned.end(), -1);
    queue.clear();
    for (std::int64_t i = n - 1; i >= 0; --i) {
      if (coverable[i] >= 0) queue.push_back(i);
    }
    while (!queue.empty()) {
      const std::int64_t i = queue.back();
      queue.pop_back();
      double best = -std::numeric_limits<double>::infinity(), second = best;
      std::int64_t best_col = -1;
      for (std::int64_t k = w.indptr[i]; k < w.indptr[i + 1]; ++k) {
        const double v = w.weights[k] - price[w.cols[k]];
        if (v > best) {
          second = best;
          best = v;
          best_col = w.cols[k];
        } else if (v > second) {
          second = v;
        }
      }
      price[best_col] += best - std::max(second, best - runner_up) + eps;
      const std::int64_t previous = owner[best_col];
      if (previous >= 0) {
        assigned[previous] = -1;
        queue.push_back(previous);
      }
      owner[best_col] = i;
      assigned[i] = best_col;
    }
  };
  // Epsilon-scaling carries prices from phase to phase, which is exact only when every column
  // ends assigned; otherwise one phase from zero prices (a free column then has price 0).
  std::int64_t rows = 0;
  for (const std::int64_t j : coverable) rows += j >= 0;
  if (rows == m) {
    for (double eps = std::max(range / 4, eps_final); eps > eps_final; eps /= 5) phase(eps);
  }
  phase(eps_final);
  return assigned;
}

}  // namespace birkhoff::align
