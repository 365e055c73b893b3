// QPAlign's driver: the projected-gradient iteration between the initial point and the
// read-outs (see steps.hpp), and the result.
#include "birkhoff/graph/align/qpalign.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/presets.hpp"
#include "birkhoff/kernels/scaling.hpp"
#include "birkhoff/transport/kernel_matrix.hpp"
#include "graph/align/objective.hpp"
#include "graph/align/problem.hpp"
#include "graph/align/steps.hpp"

namespace birkhoff::align {
namespace {

// The stopping rule `patience`: counts the iterations over which the row-wise argmax of the
// free block stayed the same bijection.
class StableMatching {
 public:
  explicit StableMatching(std::int64_t m)
      : argmax_(static_cast<std::size_t>(m), -1), hit_(static_cast<std::size_t>(m)) {}

  /// Takes this iteration's argmax per row; returns for how many iterations in a row it has
  /// been the same bijection.
  std::int64_t update(const std::vector<std::int64_t>& best) {
    bool bijection = true, same = true;
    std::fill(hit_.begin(), hit_.end(), 0);
    for (std::size_t i = 0; i < argmax_.size(); ++i) {
      const std::int64_t j = best[i];
      same = same && argmax_[i] == j;
      argmax_[i] = j;
      bijection = bijection && !hit_[j];
      hit_[j] = 1;
    }
    unchanged_ = bijection && same ? unchanged_ + 1 : 0;
    return unchanged_;
  }

 private:
  std::vector<std::int64_t> argmax_;
  std::vector<char> hit_;
  std::int64_t unchanged_ = 0;
};

// Pi <- Balance(max(Pi - alpha G, 0)) with Barzilai-Borwein steps until a stopping rule holds;
// pi holds the initial point on entry and the last iterate on return. Fills the objective
// trace, iterations, converged, stopped_by and nan_restarts of `out`.
void iterate(const detail::Problem& p, const QpAlignOptions& o, std::vector<double>& pi,
             Alignment& out) {
  const std::int64_t n = p.size, m = p.free;
  const std::size_t nn = static_cast<std::size_t>(n * n);
  std::vector<double> pi_prev = pi, grad(nn), grad_prev(nn, 0.0), e(nn);
  double f = detail::evaluate(p, pi.data(), e.data(), grad.data()).f;
  double bb_ss = 0, bb_sy = 0;
  out.objective.push_back(f);
  report_progress(o.progress, "qpalign", 0, o.max_iter);
  std::vector<std::int64_t> best(static_cast<std::size_t>(m));
  StableMatching matching(m);
  double last_alpha = o.step;
  if (m == 0) {
    out.converged = true;
    out.stopped_by = StopReason::Seeded;
  }
  transport::SinkhornKnoppOptions balancing;
  balancing.max_sweeps = o.sinkhorn_sweeps;
  balancing.tol = o.sinkhorn_tol;
  balancing.anderson_memory = o.sinkhorn_anderson;
  balancing.num_threads = p.threads;
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
      const transport::KernelMatrix step{
          {pi_prev.data(), m, m, n}, [&](std::int64_t i, double* row) {
            kernels::step_row(pi.data() + i * n, grad.data() + i * n, alpha, row, m);
          }};
      if (transport::sinkhorn_knopp(step, balancing).finite) break;
      require(attempt < 60, "step", "the iteration produced NaN even with tiny steps");
      alpha *= 0.5;
      ++out.nan_restarts;
    }
    last_alpha = alpha;
    std::swap(pi, pi_prev);
    const detail::Evaluation ev =
        detail::evaluate(p, pi.data(), e.data(), grad_prev.data(), pi_prev.data(), grad.data(),
                         o.patience > 0 ? best.data() : nullptr);
    const double f_new = ev.f;
    bb_ss = ev.ss;
    bb_sy = ev.sy;
    std::swap(grad, grad_prev);
    out.objective.push_back(f_new);
    out.iterations = t + 1;
    report_progress(o.progress, "qpalign", t + 1, o.max_iter);
    if (std::abs(f_new - f) / (1.0 + std::abs(f)) < o.tol) {
      out.converged = true;
      out.stopped_by = StopReason::Tolerance;
      break;
    }
    if (o.patience > 0 && matching.update(best) >= o.patience) {
      out.converged = true;
      out.stopped_by = StopReason::Patience;
      break;
    }
    f = f_new;
  }
}

}  // namespace

Alignment qpalign(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                  const QpAlignOptions& o) {
  const detail::Problem p = detail::make_problem(g1, g2, o);
  Alignment out;
  out.n1 = p.n1;
  out.n2 = p.n2;
  out.lambda_edge = p.lambda_edge;
  out.lambda_feature = p.lambda_feature;
  std::vector<double> pi = detail::initial_point(p, o);
  iterate(p, o, pi, out);
  out.perm = detail::round_to_perm(p, pi);
  out.likelihood = matching_likelihood(g1, g2, out.perm);
  out.top_k = std::min<std::int64_t>(o.top_k, p.n2);
  detail::top_k(p, pi, out.top_k, out.topk, out.topk_scores);
  if (o.return_soft || o.truth.rows > 0) {
    std::vector<double> soft = detail::soft_matrix(p, pi);
    std::vector<double>().swap(pi);
    if (o.truth.rows > 0) {
      out.has_metrics = true;
      out.metrics =
          score(out.perm, MatrixView<const double>{soft.data(), p.n1, p.n2}, o.truth, o.seeds);
    }
    if (o.return_soft) out.soft = std::move(soft);
  }
  return out;
}

}  // namespace birkhoff::align
