#include "birkhoff/graph/align/qpalign.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "birkhoff/graph/align/generate.hpp"
#include "birkhoff/graph/graph.hpp"
#include "birkhoff/kernels/gemm.hpp"
#include "birkhoff/kernels/scaling.hpp"
#include "graph/align/balance.hpp"
#include "graph/align/operator.hpp"

namespace birkhoff::align {
namespace {

void check_options(const QpAlignOptions& o) {
  auto finite_nonneg = [](double v, const char* name) {
    require(std::isfinite(v) && v >= 0.0, name, "must be finite and >= 0");
  };
  finite_nonneg(o.lambda_edge, "lambda_edge");
  finite_nonneg(o.lambda_feature, "lambda_feature");
  finite_nonneg(o.gamma, "gamma");
  finite_nonneg(o.sinkhorn_tol, "sinkhorn_tol");
  finite_nonneg(o.tol, "tol");
  require(std::isfinite(o.step) && o.step > 0.0, "step", "must be finite and > 0");
  require(o.max_iter >= 0, "max_iter", "must be >= 0");
  require(o.sinkhorn_sweeps >= 1, "sinkhorn_sweeps", "must be >= 1");
  require(o.top_k >= 0, "top_k", "must be >= 0");
  require(o.patience >= 0, "patience", "must be >= 0");
  require(o.sinkhorn_anderson >= 0, "sinkhorn_anderson", "must be >= 0");
  const bool mle = o.mle_rho >= 0.0 || o.mle_r >= 0.0;
  if (mle) {
    require(o.mle_rho >= 0.0 && o.mle_rho < 1.0, "mle_rho", "must be in [0, 1)");
    require(o.mle_r >= 0.0 && o.mle_r < 1.0, "mle_r", "must be in [0, 1)");
  }
}

void check_pairs(MatrixView<const std::int64_t> pairs, const char* name, std::int64_t n1,
                 std::int64_t n2) {
  if (pairs.empty() && pairs.rows == 0) return;
  require(pairs.cols == 2, name,
          "expected shape (k, 2) [node of G1, node of G2], got (" + std::to_string(pairs.rows) +
              ", " + std::to_string(pairs.cols) + ")");
  // Each node at most once per side: a matching (the metrics and the seed blocks assume it).
  std::vector<std::int64_t> row_of1(static_cast<std::size_t>(n1), -1),
      row_of2(static_cast<std::size_t>(n2), -1);
  for (std::int64_t k = 0; k < pairs.rows; ++k) {
    const std::int64_t i = pairs(k, 0), j = pairs(k, 1);
    require(i >= 0 && i < n1, name,
            "G1 node " + std::to_string(i) + " in row " + std::to_string(k) + " is outside [0, " +
                std::to_string(n1) + ")");
    require(j >= 0 && j < n2, name,
            "G2 node " + std::to_string(j) + " in row " + std::to_string(k) + " is outside [0, " +
                std::to_string(n2) + ")");
    require(row_of1[i] < 0, name,
            "G1 node " + std::to_string(i) + " is repeated (rows " + std::to_string(row_of1[i]) +
                " and " + std::to_string(k) + ")");
    require(row_of2[j] < 0, name,
            "G2 node " + std::to_string(j) + " is repeated (rows " + std::to_string(row_of2[j]) +
                " and " + std::to_string(k) + ")");
    row_of1[i] = k;
    row_of2[j] = k;
  }
}

// The problem in the solver's internal order: free real nodes first, then padding, then seeds
// (G2's seeds in the same order as their G1 partners, so the seed block of Pi is the identity).
struct Problem {
  std::int64_t n1 = 0, n2 = 0, size = 0, free = 0;
  std::vector<std::int64_t> pos1, pos2;  // original -> internal
  std::vector<std::int64_t> orig2;       // internal -> original G2 node, -1 for padding
  std::optional<detail::Operator> a, b;
  std::vector<double> dist;  // N x N feature distances (empty without features)
  double lambda_edge = 0, lambda_feature = 0, gamma = 0;
  int threads = 1;
};

Problem make_problem(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                     const QpAlignOptions& o) {
  check_options(o);
  require(g1.num_nodes >= 1, "num_nodes1", "must be at least 1");
  require(g2.num_nodes >= 1, "num_nodes2", "must be at least 1");
  Problem p;
  p.threads = detail::threads_for(std::max(g1.num_nodes, g2.num_nodes), o.num_threads);
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
    graph::require_finite(g1.x, "x1", o.num_threads);
    graph::require_finite(g2.x, "x2", o.num_threads);
  }
  p.a.emplace(g1, n, p.pos1, o.num_threads);
  p.b.emplace(g2, n, p.pos2, o.num_threads);

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
    std::vector<double> xs(static_cast<std::size_t>(n * d), 0.0), ys(xs.size(), 0.0);
    std::vector<double> nx(static_cast<std::size_t>(n), 0.0), ny(nx.size(), 0.0);
    for (std::int64_t i = 0; i < p.n1; ++i) {
      for (std::int64_t k = 0; k < d; ++k) xs[p.pos1[i] * d + k] = g1.x(i, k);
    }
    for (std::int64_t j = 0; j < p.n2; ++j) {
      for (std::int64_t k = 0; k < d; ++k) ys[p.pos2[j] * d + k] = g2.x(j, k);
    }
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

// F(Pi) and, on request, the gradient and the Barzilai-Borwein products of the next step.
struct Evaluation {
  double f = 0;
  double ss = 0,
         sy = 0;  // <S, S>, <S, Y> over the free block, S = pi - pi_old, Y = grad - grad_old
};

// Sums of one block of rows in evaluate().
struct Part {
  double edge = 0, feat = 0, penalty = 0, ss = 0, sy = 0;
};

// The feature and penalty terms of rows of Pi (sums, and their gradient when grad is not null),
// then the BB products over the free block when pi_old is not null. R consecutive rows run side
// by side (independent chains), each row summed in the order of j and the rows added in order.
struct RowTerms {
  const double *pi, *dist;
  double* grad;
  const double *pi_old, *grad_old;
  std::int64_t n, m;
  double lf, gm;

  template <int R>
  void rows(std::int64_t i0, Part& sums) const {
    // The loop body without the terms that are zero here (no features, no gradient, gamma 0).
    const bool f = dist != nullptr, g = grad != nullptr, p = gm != 0.0;
    if (f && g && p) return rows<R, true, true, true>(i0, sums);
    if (f && g) return rows<R, true, true, false>(i0, sums);
    if (f && p) return rows<R, true, false, true>(i0, sums);
    if (f) return rows<R, true, false, false>(i0, sums);
    if (g && p) return rows<R, false, true, true>(i0, sums);
    if (g) return rows<R, false, true, false>(i0, sums);
    if (p) return rows<R, false, false, true>(i0, sums);
    return rows<R, false, false, false>(i0, sums);
  }

  template <int R, bool kFeatures, bool kGrad, bool kPenalty>
  void rows(std::int64_t i0, Part& sums) const {
    const double* x[R];
    const double* d[R];
    double* g[R];
    double fr[R], pr[R];
    for (int r = 0; r < R; ++r) {
      x[r] = pi + (i0 + r) * n;
      d[r] = dist == nullptr ? nullptr : dist + (i0 + r) * n;
      g[r] = grad == nullptr ? nullptr : grad + (i0 + r) * n;
      fr[r] = 0;
      pr[r] = 0;
    }
    // A term left out is exactly zero: gm * (1 - 2 x) and x * 0 add nothing (up to the sign
    // of a zero), and gamma * penalty is 0 either way.
    for (std::int64_t j = 0; j < n; ++j) {
      for (int r = 0; r < R; ++r) {
        const double xv = x[r][j];
        if constexpr (kFeatures) {
          const double dx = d[r][j] * xv;
          fr[r] += dx * xv;
          if constexpr (kGrad && kPenalty) g[r][j] += 2 * lf * dx + gm * (1 - 2 * xv);
          if constexpr (kGrad && !kPenalty) g[r][j] += 2 * lf * dx;
        } else {
          if constexpr (kGrad && kPenalty) g[r][j] += gm * (1 - 2 * xv);
        }
        if constexpr (kPenalty) pr[r] += xv - xv * xv;
      }
    }
    for (int r = 0; r < R; ++r) {
      sums.feat += fr[r];
      sums.penalty += pr[r];
    }
    if (!kGrad || pi_old == nullptr || i0 >= m) return;
    const int live = static_cast<int>(std::min<std::int64_t>(R, m - i0));
    const double* xo[R];
    const double* go[R];
    double rs[R], ry[R];
    for (int r = 0; r < R; ++r) {
      xo[r] = pi_old + (i0 + r) * n;
      go[r] = grad_old + (i0 + r) * n;
      rs[r] = 0;
      ry[r] = 0;
    }
    for (std::int64_t j = 0; j < m; ++j) {
      for (int r = 0; r < R; ++r) {
        const double sv = x[r][j] - xo[r][j];
        rs[r] += sv * sv;
        ry[r] += sv * (g[r][j] - go[r][j]);
      }
    }
    for (int r = 0; r < live; ++r) {
      sums.ss += rs[r];
      sums.sy += ry[r];
    }
  }
};

// f(Pi) and, when grad is not null, its gradient; e is an N x N scratch buffer. With pi_old and
// grad_old (the previous iterate and its gradient) also the BB products, and with `best` the
// first column of the largest entry of each free row in the free block, in the same pass.
Evaluation evaluate(const Problem& p, const double* pi, double* e, double* grad,
                    const double* pi_old = nullptr, const double* grad_old = nullptr,
                    std::int64_t* best = nullptr) {
  const std::int64_t n = p.size, m = p.free;
  const bool features = !p.dist.empty() && p.lambda_feature > 0;
  const bool sparse = !p.a->dense() && !p.b->dense();
  const bool bb = grad != nullptr && pi_old != nullptr;
  const double le = p.lambda_edge, lf = p.lambda_feature, gm = p.gamma;
  // Sums per block of 4 rows, added up in block order afterwards: the result does not depend
  // on the number of threads or on which thread ran which block.
  std::vector<Part> part(static_cast<std::size_t>((n + 3) / 4));
  double edge = 0, feat = 0, penalty = 0, ss = 0, sy = 0;
  if (le > 0 && sparse) {
    // Row i of E = A Pi - Pi B needs rows of Pi only: one fused pass, no scattered writes.
#pragma omp parallel for schedule(dynamic, 1) num_threads(p.threads)
    for (std::int64_t i0 = 0; i0 < n; i0 += 4) {
      const std::int64_t rows = std::min<std::int64_t>(4, n - i0);
      double* block = e + i0 * n;
      for (std::int64_t i = i0; i < i0 + rows; ++i) {
        p.a->left_row(false, 1.0, pi, i, e + i * n, true);
      }
      p.b->right_rows(false, -1.0, pi + i0 * n, rows, block);
      double sq = 0;
#pragma omp simd reduction(+ : sq)
      for (std::int64_t j = 0; j < rows * n; ++j) sq += block[j] * block[j];
      part[i0 / 4].edge = sq;
    }
  } else if (le > 0) {
    p.a->left(false, 1.0, pi, 0.0, e);
    p.b->right(false, -1.0, pi, 1.0, e);
#pragma omp parallel for schedule(static) num_threads(p.threads)
    for (std::int64_t i0 = 0; i0 < n; i0 += 4) {
      const double* block = e + i0 * n;
      const std::int64_t count = std::min<std::int64_t>(4, n - i0) * n;
      double sq = 0;
#pragma omp simd reduction(+ : sq)
      for (std::int64_t j = 0; j < count; ++j) sq += block[j] * block[j];
      part[i0 / 4].edge = sq;
    }
    if (grad != nullptr) {
      p.a->left(true, 2 * le, e, 0.0, grad);
      p.b->right(true, -2 * le, e, 1.0, grad);
    }
  }
  const bool edge_rows = le > 0 && sparse && grad != nullptr;
  const bool fresh = le == 0 && grad != nullptr;
  // Per block of 4 rows: the edge gradient (sparse case), then per row the feature and penalty
  // terms and the BB products.
#pragma omp parallel for schedule(dynamic, 1) num_threads(p.threads)
  for (std::int64_t i0 = 0; i0 < n; i0 += 4) {
    Part& sums = part[i0 / 4];
    const std::int64_t rows = std::min<std::int64_t>(4, n - i0);
    if (fresh) std::fill(grad + i0 * n, grad + (i0 + rows) * n, 0.0);
    if (edge_rows) {
      for (std::int64_t i = i0; i < i0 + rows; ++i) {
        p.a->left_row(true, 2 * le, e, i, grad + i * n, true);
      }
      p.b->right_rows(true, -2 * le, e + i0 * n, rows, grad + i0 * n);
    }
    const RowTerms terms{
        pi, features ? p.dist.data() : nullptr, grad, bb ? pi_old : nullptr, grad_old, n, m, lf,
        gm};
    if (rows == 4) {
      terms.rows<4>(i0, sums);
    } else {
      for (std::int64_t i = i0; i < i0 + rows; ++i) terms.rows<1>(i, sums);
    }
    if (best != nullptr) {
      for (std::int64_t i = i0; i < std::min(i0 + rows, m); ++i) {
        const double* x = pi + i * n;
        best[i] = std::max_element(x, x + m) - x;
      }
    }
  }
  for (const Part& q : part) {
    edge += q.edge;
    feat += q.feat;
    penalty += q.penalty;
    ss += q.ss;
    sy += q.sy;
  }
  return {le * edge + lf * feat + gm * penalty, ss, sy};
}

}  // namespace

BalanceReport balance(MatrixView<double> matrix, std::int64_t max_sweeps, double tol,
                      int num_threads, std::int64_t anderson) {
  const std::int64_t m = matrix.rows;
  require(matrix.cols == m, "matrix", "must be square");
  require(max_sweeps >= 1, "max_sweeps", "must be >= 1");
  require(anderson >= 0, "anderson", "must be >= 0");
  const int threads = detail::threads_for(m, num_threads);
  const BalanceReport report =
      detail::balance_block(matrix.data, m, matrix.stride, max_sweeps, tol, anderson, threads,
                            [](std::int64_t, double*) {});
  require(report.sweeps >= 0, "matrix", "holds NaN or inf");
  return report;
}

double objective_and_gradient(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                              const QpAlignOptions& options, std::span<const double> pi,
                              std::span<double> gradient) {
  QpAlignOptions o = options;
  o.seeds = {};
  o.truth = {};
  require(g1.num_nodes == g2.num_nodes, "num_nodes2", "must equal num_nodes1 here");
  const Problem p = make_problem(g1, g2, o);
  const std::int64_t n = p.size;
  require(static_cast<std::int64_t>(pi.size()) == n * n, "pi", "expected n * n entries");
  require(static_cast<std::int64_t>(gradient.size()) == n * n, "gradient",
          "expected n * n entries");
  // Internal order equals the original order without seeds and padding.
  std::vector<double> e(pi.size());
  return evaluate(p, pi.data(), e.data(), gradient.data()).f;
}

Alignment qpalign(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                  const QpAlignOptions& o) {
  const Problem p = make_problem(g1, g2, o);
  const std::int64_t n = p.size, m = p.free;
  const std::size_t nn = static_cast<std::size_t>(n * n);
  Alignment out;
  out.n1 = p.n1;
  out.n2 = p.n2;
  out.lambda_edge = p.lambda_edge;
  out.lambda_feature = p.lambda_feature;

  // Pi: free block m x m (top left), identity on the seed block, zero elsewhere.
  std::vector<double> pi(nn, 0.0), pi_prev, grad(nn), grad_prev, e(nn);
  for (std::int64_t k = m; k < n; ++k) pi[k * n + k] = 1.0;
  if (m > 0) {
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
      const std::vector<double> da = p.a->row_sums(), db = p.b->row_sums();
      std::vector<double> sim(nn, 0.0);
      if (!g1.x.empty()) {
        // <x_i, y_j> from D: -(D - |x|^2 - |y|^2) / 2 would lose padding; recompute directly.
        const std::int64_t d = g1.x.cols;
        std::vector<double> xs(static_cast<std::size_t>(n * d), 0.0), ys(xs.size(), 0.0);
        for (std::int64_t i = 0; i < p.n1; ++i) {
          for (std::int64_t k = 0; k < d; ++k) xs[p.pos1[i] * d + k] = g1.x(i, k);
        }
        for (std::int64_t j = 0; j < p.n2; ++j) {
          for (std::int64_t k = 0; k < d; ++k) ys[p.pos2[j] * d + k] = g2.x(j, k);
        }
        kernels::gemm(false, true, n, n, d, 1.0, xs.data(), d, ys.data(), d, 0.0, sim.data(), n);
      }
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < m; ++j) {
          pi[i * n + j] = std::max(sim[i * n + j], 0.0) + 0.1 / (1.0 + std::abs(da[i] - db[j]));
        }
      }
    }
    balance({pi.data(), m, m, n}, o.sinkhorn_sweeps, o.sinkhorn_tol, p.threads,
            o.sinkhorn_anderson);
  }
  pi_prev = pi;
  grad_prev.assign(nn, 0.0);

  double f = evaluate(p, pi.data(), e.data(), grad.data()).f;
  double bb_ss = 0, bb_sy = 0;
  out.objective.push_back(f);
  report_progress(o.progress, "qpalign", 0, o.max_iter);
  std::vector<std::int64_t> argmax(static_cast<std::size_t>(m), -1), best(argmax.size());
  std::vector<char> hit(static_cast<std::size_t>(m));
  std::int64_t unchanged = 0;
  double last_alpha = o.step;
  for (std::int64_t t = 0; t < o.max_iter && m > 0; ++t) {
    double alpha = o.step;
    if (t > 0 && o.barzilai_borwein) {
      const double ss = bb_ss, sy = bb_sy;
      if (sy < -1e-12 && o.bb_negative_curvature == NegativeCurvature::Previous) {
        alpha = last_alpha;
      } else if (std::abs(sy) > 1e-12) {
        alpha = std::clamp(ss / std::max(sy, 1e-12), 1e-5, 0.5);
      }
    }
    // Step into pi_prev's buffer (Pi_{t-1} is no longer needed), fused with the first balancing
    // sweep; retry with a halved step on NaN.
    for (int attempt = 0;; ++attempt) {
      const BalanceReport report = detail::balance_block(
          pi_prev.data(), m, n, o.sinkhorn_sweeps, o.sinkhorn_tol, o.sinkhorn_anderson, p.threads,
          [&](std::int64_t i, double* row) {
            kernels::step_row(pi.data() + i * n, grad.data() + i * n, alpha, row, m);
          });
      if (report.sweeps >= 0 && std::isfinite(report.row_error)) break;
      require(attempt < 60, "step", "the iteration produced NaN even with tiny steps");
      alpha *= 0.5;
      ++out.nan_restarts;
    }
    last_alpha = alpha;
    std::swap(pi, pi_prev);
    const Evaluation ev = evaluate(p, pi.data(), e.data(), grad_prev.data(), pi_prev.data(),
                                   grad.data(), o.patience > 0 ? best.data() : nullptr);
    const double f_new = ev.f;
    bb_ss = ev.ss;
    bb_sy = ev.sy;
    std::swap(grad, grad_prev);
    out.objective.push_back(f_new);
    out.iterations = t + 1;
    report_progress(o.progress, "qpalign", t + 1, o.max_iter);
    if (std::abs(f_new - f) / (1.0 + std::abs(f)) < o.tol) {
      out.converged = true;
      break;
    }
    if (o.patience > 0) {
      bool bijection = true, same = true;
      std::fill(hit.begin(), hit.end(), 0);
      for (std::int64_t i = 0; i < m; ++i) {
        const std::int64_t j = best[i];
        same = same && argmax[i] == j;
        argmax[i] = j;
        bijection = bijection && !hit[j];
        hit[j] = 1;
      }
      unchanged = bijection && same ? unchanged + 1 : 0;
      if (unchanged >= o.patience) {
        out.stable = true;
        break;
      }
    }
    f = f_new;
  }
  std::vector<double>().swap(pi_prev);
  std::vector<double>().swap(grad);
  std::vector<double>().swap(grad_prev);
  std::vector<double>().swap(e);

  // Rounding: exact LAP on the free block maximising the total Pi.
  std::vector<std::int64_t> col_of(static_cast<std::size_t>(n));
  for (std::int64_t k = m; k < n; ++k) col_of[k] = k;
  if (m > 0) {
    const auto lap = linear_assignment({pi.data(), m, m, n}, true);
    for (std::int64_t i = 0; i < m; ++i) col_of[i] = lap[i];
  }
  out.perm.resize(static_cast<std::size_t>(p.n1));
  for (std::int64_t i = 0; i < p.n1; ++i) out.perm[i] = p.orig2[col_of[p.pos1[i]]];

  // Top-k over the real nodes of G2.
  std::vector<std::int64_t> real_cols;
  for (std::int64_t j = 0; j < n; ++j) {
    if (p.orig2[j] >= 0) real_cols.push_back(j);
  }
  const std::int64_t k = std::min<std::int64_t>(o.top_k, p.n2);
  out.top_k = k;
  out.topk.resize(static_cast<std::size_t>(p.n1 * k));
  out.topk_scores.resize(out.topk.size());
  if (k > 0) {
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
          out.topk[i * k + q] = p.orig2[cols[q]];
          out.topk_scores[i * k + q] = row[cols[q]];
        }
      }
    }
  }
  if (o.return_soft) {
    out.soft.resize(static_cast<std::size_t>(p.n1 * p.n2));
    for (std::int64_t i = 0; i < p.n1; ++i) {
      for (std::int64_t j = 0; j < p.n2; ++j)
        out.soft[i * p.n2 + j] = pi[p.pos1[i] * n + p.pos2[j]];
    }
  }
  if (o.truth.rows > 0) {
    AlignMetrics& mt = out.metrics;
    out.has_metrics = true;
    mt.pairs = o.truth.rows;
    std::int64_t correct = 0, unseeded = 0, correct_unseeded = 0;
    double h1 = 0, h5 = 0, h10 = 0, rr = 0;
    for (std::int64_t q = 0; q < o.truth.rows; ++q) {
      const std::int64_t i = o.truth(q, 0), j = o.truth(q, 1);
      const bool ok = out.perm[i] == j;
      const bool seeded = p.pos1[i] >= m;
      correct += ok;
      if (!seeded) {
        ++unseeded;
        correct_unseeded += ok;
      }
      const double* row = pi.data() + p.pos1[i] * n;
      const double target = row[p.pos2[j]];
      std::int64_t rank = 1;
      for (const std::int64_t c : real_cols) rank += row[c] > target;
      h1 += rank <= 1;
      h5 += rank <= 5;
      h10 += rank <= 10;
      rr += 1.0 / static_cast<double>(rank);
    }
    const auto t = static_cast<double>(o.truth.rows);
    mt.overlap = static_cast<double>(correct) / t;
    mt.overlap_unseeded =
        unseeded > 0 ? static_cast<double>(correct_unseeded) / static_cast<double>(unseeded)
                     : mt.overlap;
    mt.exact = correct == o.truth.rows;
    mt.hits1 = h1 / t;
    mt.hits5 = h5 / t;
    mt.hits10 = h10 / t;
    mt.mrr = rr / t;
  }
  return out;
}

}  // namespace birkhoff::align
