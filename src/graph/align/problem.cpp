// QPAlign's problem: the internal node order, the adjacency operators and the feature distances.
#include "graph/align/problem.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/kernels/gemm.hpp"
#include "graph/align/pairs.hpp"

namespace birkhoff::align::detail {

std::vector<double> internal_features(MatrixView<const float> x,
                                      const std::vector<std::int64_t>& pos, std::int64_t size) {
  const std::int64_t d = x.cols;
  std::vector<double> out(static_cast<std::size_t>(size * d), 0.0);
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t k = 0; k < d; ++k) out[pos[i] * d + k] = x(i, k);
  }
  return out;
}

Problem make_problem(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                     const QpAlignOptions& o) {
  check_options(o);
  require(g1.num_nodes >= 1, "num_nodes1", "must be at least 1");
  require(g2.num_nodes >= 1, "num_nodes2", "must be at least 1");
  Problem p;
  p.threads = threads_for(std::max(g1.num_nodes, g2.num_nodes), o.num_threads);
  p.n1 = g1.num_nodes;
  p.n2 = g2.num_nodes;
  p.size = std::max(p.n1, p.n2);
  const std::int64_t n = p.size;
  check_pairs(o.seeds, "seeds", p.n1, p.n2);
  check_pairs(o.truth, "truth", p.n1, p.n2);
  const std::int64_t s = o.seeds.rows;
  std::vector<std::int64_t> seed_of1(static_cast<std::size_t>(p.n1), -1),
      seed_of2(static_cast<std::size_t>(p.n2), -1);
  for (std::int64_t k = 0; k < s; ++k) {
    seed_of1[o.seeds(k, 0)] = k;
    seed_of2[o.seeds(k, 1)] = k;
  }
  p.free = n - s;
  p.pos1.resize(static_cast<std::size_t>(p.n1));
  p.pos2.resize(static_cast<std::size_t>(p.n2));
  p.orig2.assign(static_cast<std::size_t>(n), -1);
  std::int64_t next = 0;
  for (std::int64_t i = 0; i < p.n1; ++i) {
    p.pos1[i] = seed_of1[i] >= 0 ? p.free + seed_of1[i] : next++;
  }
  next = 0;
  for (std::int64_t j = 0; j < p.n2; ++j) {
    p.pos2[j] = seed_of2[j] >= 0 ? p.free + seed_of2[j] : next++;
    p.orig2[p.pos2[j]] = j;
  }

  // The builders checked that the features are finite; here, that the two sides agree.
  const bool f1 = !g1.x.empty(), f2 = !g2.x.empty();
  require(f1 == f2, f1 ? "x2" : "x1", "features given for only one graph");
  if (f1) {
    require(g1.x.rows == p.n1, "x1",
            "expected " + std::to_string(p.n1) + " rows (one per node), got " +
                std::to_string(g1.x.rows));
    require(g2.x.rows == p.n2, "x2",
            "expected " + std::to_string(p.n2) + " rows (one per node), got " +
                std::to_string(g2.x.rows));
    require(g1.x.cols == g2.x.cols, "x2",
            "feature dimension " + std::to_string(g2.x.cols) + " differs from x1's " +
                std::to_string(g1.x.cols));
  }
  p.a.emplace(g1, n, p.pos1, o.num_threads);
  p.b.emplace(g2, n, p.pos2, o.num_threads);
  if (f1) {
    p.x1 = g1.x;
    p.x2 = g2.x;
  }

  p.lambda_edge = o.lambda_edge;
  p.lambda_feature = f1 ? o.lambda_feature : 0.0;
  p.gamma = o.gamma;
  if (o.mle_rho >= 0.0) {
    const double we = o.mle_rho / (4 * (1 - o.mle_rho * o.mle_rho));
    const double wf = f1 ? o.mle_r / (2 * (1 - o.mle_r * o.mle_r)) : 0.0;
    const double total = we + wf;
    p.lambda_edge = total > 0 ? we / total : 0.5;
    p.lambda_feature = total > 0 ? wf / total : (f1 ? 0.5 : 0.0);
  }

  if (f1) {
    const std::int64_t d = g1.x.cols;
    // Features in internal order, zero rows for padding, then D = |x|^2 + |y|^2 - 2 X Y^T.
    const std::vector<double> xs = internal_features(g1.x, p.pos1, n);
    const std::vector<double> ys = internal_features(g2.x, p.pos2, n);
    std::vector<double> nx(static_cast<std::size_t>(n), 0.0), ny(nx.size(), 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t k = 0; k < d; ++k) {
        nx[i] += xs[i * d + k] * xs[i * d + k];
        ny[i] += ys[i * d + k] * ys[i * d + k];
      }
    }
    p.dist.assign(static_cast<std::size_t>(n * n), 0.0);
    kernels::gemm(false, true, n, n, d, -2.0, xs.data(), d, ys.data(), d, 0.0, p.dist.data(), n);
    std::vector<char> real1(static_cast<std::size_t>(n), 0);
    for (std::int64_t i = 0; i < p.n1; ++i) real1[p.pos1[i]] = 1;
    double sum = 0;
#pragma omp parallel for schedule(static) num_threads(p.threads) reduction(+ : sum)
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double& v = p.dist[i * n + j];
        v = std::max(0.0, v + nx[i] + ny[j]);
        if (real1[i] && p.orig2[j] >= 0) sum += v;
      }
    }
    if (p.n1 != p.n2) {
      const double mean = sum / static_cast<double>(p.n1 * p.n2);
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          if (!real1[i] || p.orig2[j] < 0) p.dist[i * n + j] = mean;
        }
      }
    }
  }
  return p;
}

}  // namespace birkhoff::align::detail
