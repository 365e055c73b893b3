// Read-outs of QPAlign's final Pi: the rounded matching, the top-k candidates, the soft matrix.
#include <algorithm>
#include <vector>

#include "birkhoff/graph/align/lap.hpp"
#include "graph/align/steps.hpp"

namespace birkhoff::align::detail {

std::vector<std::int64_t> round_to_perm(const Problem& p, const std::vector<double>& pi) {
  const std::int64_t n = p.size, m = p.free;
  std::vector<std::int64_t> col_of(static_cast<std::size_t>(n));
  for (std::int64_t k = m; k < n; ++k) col_of[k] = k;
  if (m > 0) {
    const auto lap = linear_assignment({pi.data(), m, m, n}, true);
    for (std::int64_t i = 0; i < m; ++i) col_of[i] = lap[i];
  }
  std::vector<std::int64_t> perm(static_cast<std::size_t>(p.n1));
  for (std::int64_t i = 0; i < p.n1; ++i) perm[i] = p.orig2[col_of[p.pos1[i]]];
  return perm;
}

void top_k(const Problem& p, const std::vector<double>& pi, std::int64_t k,
           std::vector<std::int64_t>& ids, std::vector<double>& scores) {
  const std::int64_t n = p.size;
  std::vector<std::int64_t> real_cols;
  for (std::int64_t j = 0; j < n; ++j) {
    if (p.orig2[j] >= 0) real_cols.push_back(j);
  }
  ids.resize(static_cast<std::size_t>(p.n1 * k));
  scores.resize(ids.size());
  if (k == 0) return;
#pragma omp parallel num_threads(p.threads)
  {
    std::vector<std::int64_t> cols(real_cols);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < p.n1; ++i) {
      const double* row = pi.data() + p.pos1[i] * n;
      std::partial_sort(cols.begin(), cols.begin() + k, cols.end(),
                        [&](std::int64_t x, std::int64_t y) {
                          return row[x] > row[y] || (row[x] == row[y] && x < y);
                        });
      for (std::int64_t q = 0; q < k; ++q) {
        ids[i * k + q] = p.orig2[cols[q]];
        scores[i * k + q] = row[cols[q]];
      }
    }
  }
}

std::vector<double> soft_matrix(const Problem& p, const std::vector<double>& pi) {
  const std::int64_t n = p.size;
  std::vector<double> soft(static_cast<std::size_t>(p.n1 * p.n2));
  for (std::int64_t i = 0; i < p.n1; ++i) {
    for (std::int64_t j = 0; j < p.n2; ++j) soft[i * p.n2 + j] = pi[p.pos1[i] * n + p.pos2[j]];
  }
  return soft;
}

}  // namespace birkhoff::align::detail
