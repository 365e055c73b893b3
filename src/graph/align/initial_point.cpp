// QPAlign's initial point (similarity, random or barycentre), balanced.
#include <algorithm>
#include <cmath>
#include <vector>

#include "birkhoff/graph/align/balance.hpp"
#include "birkhoff/graph/align/generate.hpp"
#include "birkhoff/kernels/gemm.hpp"
#include "graph/align/steps.hpp"

namespace birkhoff::align::detail {

std::vector<double> initial_point(const Problem& p, const QpAlignOptions& o) {
  const std::int64_t n = p.size, m = p.free;
  const std::size_t nn = static_cast<std::size_t>(n * n);
  std::vector<double> pi(nn, 0.0);
  for (std::int64_t k = m; k < n; ++k) pi[k * n + k] = 1.0;
  if (m == 0) return pi;
  if (o.init == Init::Random) {
    Rng rng(o.seed);
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < m; ++j) pi[i * n + j] = rng.uniform();
    }
  } else if (o.init == Init::Barycenter) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < m; ++j) pi[i * n + j] = 1.0 / static_cast<double>(m);
    }
  } else {
    // max(<x_i, y_j>, 0) + 0.1 / (1 + |deg_A(i) - deg_B(j)|), weighted out-degrees.
    const std::vector<double> da = p.a->row_sums(), db = p.b->row_sums();
    std::vector<double> sim(nn, 0.0);
    if (!p.x1.empty()) {
      // <x_i, y_j> from D: -(D - |x|^2 - |y|^2) / 2 would lose padding; recompute directly.
      const std::int64_t d = p.x1.cols;
      const std::vector<double> xs = internal_features(p.x1, p.pos1, n);
      const std::vector<double> ys = internal_features(p.x2, p.pos2, n);
      kernels::gemm(false, true, n, n, d, 1.0, xs.data(), d, ys.data(), d, 0.0, sim.data(), n);
    }
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < m; ++j) {
        pi[i * n + j] = std::max(sim[i * n + j], 0.0) + 0.1 / (1.0 + std::abs(da[i] - db[j]));
      }
    }
  }
  balance({pi.data(), m, m, n}, o.sinkhorn_sweeps, o.sinkhorn_tol, p.threads, o.sinkhorn_anderson);
  return pi;
}

}  // namespace birkhoff::align::detail
