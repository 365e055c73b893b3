// QPAlign's objective and gradient, row block by row block (see objective.hpp).
#include "graph/align/objective.hpp"

#include <algorithm>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::align {
namespace detail {
namespace {

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

}  // namespace

Evaluation evaluate(const Problem& p, const double* pi, double* e, double* grad,
                    const double* pi_old, const double* grad_old, std::int64_t* best) {
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

}  // namespace detail

double objective_and_gradient(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                              const QpAlignOptions& options, std::span<const double> pi,
                              std::span<double> gradient) {
  QpAlignOptions o = options;
  o.seeds = {};
  o.truth = {};
  require(g1.num_nodes == g2.num_nodes, "num_nodes2", "must equal num_nodes1 here");
  const detail::Problem p = detail::make_problem(g1, g2, o);
  const std::int64_t n = p.size;
  require(static_cast<std::int64_t>(pi.size()) == n * n, "pi", "expected n * n entries");
  require(static_cast<std::int64_t>(gradient.size()) == n * n, "gradient",
          "expected n * n entries");
  // Internal order equals the original order without seeds and padding.
  std::vector<double> e(pi.size());
  return detail::evaluate(p, pi.data(), e.data(), gradient.data()).f;
}

}  // namespace birkhoff::align
