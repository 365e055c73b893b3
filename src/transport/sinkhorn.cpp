#include "birkhoff/transport/sinkhorn.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "transport/geometry.hpp"
#include "transport/solver.hpp"

namespace birkhoff::transport {
namespace detail {
namespace {

template <class T>
double max_abs_diff(const std::vector<T>& u, const std::vector<T>& v) {
  double e = 0;
  for (std::size_t i = 0; i < u.size(); ++i)
    e = std::max(e, std::abs(static_cast<double>(u[i]) - static_cast<double>(v[i])));
  return e;
}

// h <- (1 - w) h + w (lambda H - (1 - lambda) sqnorm): the damped, averaged update of a shifted
// potential (FlashSinkhorn §2.5; the sqnorm term makes damping act on the standard potential).
template <class T>
void relax(std::vector<T>& h, const std::vector<T>& candidate, const std::vector<T>& sqnorm,
           double w, double lambda) {
  for (std::size_t i = 0; i < h.size(); ++i) {
    const double target = lambda * candidate[i] - (1.0 - lambda) * sqnorm[i];
    h[i] = static_cast<T>((1.0 - w) * h[i] + w * target);
  }
}

}  // namespace

template <class T>
Solver<T>::Solver(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias)
    : problem_(problem), options_(options), debias_(debias) {
  validate(problem, options);
  if (debias)
    require(problem.reach_a.has_value() == problem.reach_b.has_value(), "reach_b",
            "the debiased divergence needs both reach_a and reach_b, or neither");
  const double cs = cost_scale(problem.cost);
  kappa_ = 2.0 * cs;
  threads_ = resolve_threads(options.num_threads);
  const auto centre = joint_centre(problem.x, problem.y);
  x_ = make_cloud(problem.x, problem.a, centre, cs);
  y_ = make_cloud(problem.y, problem.b, centre, cs);
  const double diameter =
      options.diameter.value_or(std::max(bounding_diameter(problem.x, problem.y), options.blur));
  // A fixed-epsilon run is stored as one epsilon repeated, not as a list of `iterations`.
  if (options.iterations > 0 && options.epsilons.empty()) {
    eps_ = {options.blur * options.blur};
    repeats_ = options.iterations;
  } else {
    eps_ = epsilon_schedule(options, diameter);
  }
}

template <class T>
void Solver<T>::sweep(double eps, double w, bool alternating) {
  const double la = damping(problem_.reach_a, eps), lb = damping(problem_.reach_b, eps);
  softmin(x_, y_, gh_.data(), eps, kappa_, threads_, scratch_, cand_f_);
  if (alternating) relax(fh_, cand_f_, x_.sqnorm, w, la);
  softmin(y_, x_, fh_.data(), eps, kappa_, threads_, scratch_, cand_g_);
  if (!alternating) relax(fh_, cand_f_, x_.sqnorm, w, la);
  relax(gh_, cand_g_, y_.sqnorm, w, lb);
  if (debias_) {
    // Self terms are symmetric problems: averaged updates keep f_aa = g_aa ([feydy2019] §3.1).
    const double ws = alternating ? 0.5 : w;
    softmin(x_, x_, fah_.data(), eps, kappa_, threads_, scratch_, cand_f_);
    relax(fah_, cand_f_, x_.sqnorm, ws, la);
    softmin(y_, y_, gbh_.data(), eps, kappa_, threads_, scratch_, cand_g_);
    relax(gbh_, cand_g_, y_.sqnorm, ws, lb);
  }
}

template <class T>
double Solver<T>::change_since(const std::vector<std::vector<T>>& snapshot) const {
  double e = std::max(max_abs_diff(fh_, snapshot[0]), max_abs_diff(gh_, snapshot[1]));
  if (debias_) e = std::max({e, max_abs_diff(fah_, snapshot[2]), max_abs_diff(gbh_, snapshot[3])});
  return e;
}

template <class T>
void Solver<T>::run() {
  fh_.assign(x_.sqnorm.size(), T(0));
  gh_.assign(y_.sqnorm.size(), T(0));
  for (std::size_t i = 0; i < fh_.size(); ++i) fh_[i] = -x_.sqnorm[i];
  for (std::size_t j = 0; j < gh_.size(); ++j) gh_[j] = -y_.sqnorm[j];
  if (debias_) {
    fah_ = fh_;
    gbh_ = gh_;
  }
  const bool alternating = options_.update == Update::Alternating;
  const std::int64_t steps = static_cast<std::int64_t>(eps_.size()) - 1 + repeats_;
  const std::int64_t total = steps + (alternating ? 0 : 2);
  auto eps_at = [&](std::int64_t k) {
    return k < static_cast<std::int64_t>(eps_.size()) ? eps_[static_cast<std::size_t>(k)]
                                                      : eps_.back();
  };
  std::int64_t done = 0;
  auto step = [&](double eps, double w) {
    sweep(eps, w, alternating);
    ++iterations_;
    report_progress(options_.progress, "sinkhorn", ++done, total);
  };
  // GeomLoss's initial softmin: one plain step from zero potentials at the first epsilon.
  if (!alternating) step(eps_.front(), 1.0);
  std::vector<std::vector<T>> snapshot;
  // Early stopping is checked only once epsilon has reached its final value, so a stop never
  // returns potentials of a larger epsilon than asked for (the reference can stop mid-annealing).
  std::int64_t final_steps = 0;
  for (std::int64_t k = 0; k < steps; ++k) {
    epsilon_ = eps_at(k);
    step(epsilon_, alternating ? 1.0 : 0.5);
    if (epsilon_ != eps_.back()) continue;
    ++final_steps;
    if (options_.tol && final_steps % options_.check_every == 0) {
      if (!snapshot.empty()) {
        const double e = change_since(snapshot);
        errors_.push_back(e);
        if (e <= *options_.tol) {
          stopped_early_ = true;
          break;
        }
      }
      snapshot = {fh_, gh_, fah_, gbh_};
    }
  }
  if (!alternating && options_.last_extrapolation) {
    fh_grad_ = fh_;
    gh_grad_ = gh_;
    fah_grad_ = fah_;
    gbh_grad_ = gbh_;
    // Extrapolation: f becomes an exact (damped) c-transform of g_grad, which makes the
    // envelope gradient computed from g_grad the gradient of the returned value.
    step(epsilon_, 1.0);
  }
  // The loop's scratch is not needed any more: give it back before the statistics pass.
  cand_f_ = {};
  cand_g_ = {};
  scratch_ = {};
}

template <class T>
std::vector<T> Solver<T>::take_standard(std::vector<T>& hat, const Cloud<T>& c) {
  std::vector<T> out = std::move(hat);  // empty (no extrapolation) stays empty
  for (std::size_t i = 0; i < out.size(); ++i) out[i] += c.sqnorm[i];
  return out;
}

template <class T>
double Solver<T>::dual_value(const std::vector<T>& f, const std::vector<T>& g, const Cloud<T>& a,
                             const Cloud<T>& b, const std::optional<double>& reach_a,
                             const std::optional<double>& reach_b, double eps) {
  // GeomLoss's value formulas (FlashSinkhorn §1.4, §4.3, with §13.14's semi-unbalanced fix):
  // a hard side contributes <w, h>; a relaxed side (rho + eps/2 if the other side is relaxed
  // too, else rho) <w, 1 - exp(-h/rho)>, written with expm1 so that a large reach does not
  // cancel. For unit masses this is the dual objective at the optimum; otherwise it differs
  // from the KL-regularised primal by a constant in the masses (docs/transport.md).
  const bool both = reach_a && reach_b;
  double value = 0;
  for (int side = 0; side < 2; ++side) {
    const auto& h = side == 0 ? f : g;
    const auto& c = side == 0 ? a : b;
    const auto& reach = side == 0 ? reach_a : reach_b;
    for (std::size_t i = 0; i < h.size(); ++i) {
      const double w = c.weights[i];
      if (w == 0) continue;
      if (reach) {
        const double rho = *reach * *reach;
        value +=
            (rho + (both ? 0.5 * eps : 0.0)) * w * -std::expm1(-static_cast<double>(h[i]) / rho);
      } else {
        value += w * static_cast<double>(h[i]);
      }
    }
  }
  return value;
}

template <class T>
void Solver<T>::plan_statistics(SinkhornResult<T>& r) const {
  // A row pass with values y gives the row masses r_i and (P y)_i; a column pass gives the
  // column masses c_j. Then <P, C> = sum_i r_i alpha_i + sum_j c_j beta_j - kappa sum_i
  // <x_i, (P y)_i>, with C_ij = alpha_i + beta_j - kappa <x_i, y_j>.
  const std::int64_t d = x_.d;
  const double eps = epsilon_;
  LseOut<T> out;
  lse_pass(x_, y_, gh_.data(), eps, kappa_, threads_, out, y_.points.data(), d);
  double row_err = 0, cost = 0;
  for (std::int64_t i = 0; i < x_.n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const double factor = plan_row_factor(x_, fh_, si, eps, out.max[si]);
    const double mass = factor * out.sum[si];
    row_err += std::abs(mass - x_.weights[si]);
    double dot = 0;
    for (std::int64_t k = 0; k < d; ++k)
      dot += static_cast<double>(x_.points[static_cast<std::size_t>(i * d + k)]) *
             out.values[static_cast<std::size_t>(i * d + k)];
    cost += mass * x_.sqnorm[si] - kappa_ * factor * dot;
  }
  out = {};
  lse_pass(y_, x_, fh_.data(), eps, kappa_, threads_, out);
  double col_err = 0;
  for (std::int64_t j = 0; j < y_.n; ++j) {
    const auto sj = static_cast<std::size_t>(j);
    const double mass = plan_row_factor(y_, gh_, sj, eps, out.max[sj]) * out.sum[sj];
    col_err += std::abs(mass - y_.weights[sj]);
    cost += mass * y_.sqnorm[sj];
  }
  r.transport_cost = cost;
  double err = 0;
  if (!problem_.reach_a) err = std::max(err, row_err / x_.mass);
  if (!problem_.reach_b) err = std::max(err, col_err / y_.mass);
  // A NaN anywhere (a breakdown of the arithmetic) must not pass as converged.
  if (!std::isfinite(row_err) || !std::isfinite(col_err) || !std::isfinite(cost))
    err = std::numeric_limits<double>::quiet_NaN();
  r.marginal_error = err;
  r.converged = std::isfinite(err) && err <= options_.marginal_tol;
}

template <class T>
SinkhornResult<T> Solver<T>::result() {
  SinkhornResult<T> r;
  plan_statistics(r);  // reads the shifted potentials, which are then moved into the result
  r.f = take_standard(fh_, x_);
  r.g = take_standard(gh_, y_);
  r.f_grad = take_standard(fh_grad_, x_);
  r.g_grad = take_standard(gh_grad_, y_);
  r.epsilon = epsilon_;
  r.iterations = iterations_;
  r.stopped_early = stopped_early_;
  r.errors = errors_;
  r.loss = dual_value(r.f, r.g, x_, y_, problem_.reach_a, problem_.reach_b, epsilon_);
  return r;
}

template <class T>
DivergenceResult<T> Solver<T>::divergence() {
  DivergenceResult<T> r;
  r.xy = result();
  r.f_aa = take_standard(fah_, x_);
  r.g_bb = take_standard(gbh_, y_);
  r.f_aa_grad = take_standard(fah_grad_, x_);
  r.g_bb_grad = take_standard(gbh_grad_, y_);
  // Self terms: symmetric potentials (f = g = f_aa), so OT(a,a) = dual_value(f_aa, f_aa).
  const double oaa =
      dual_value(r.f_aa, r.f_aa, x_, x_, problem_.reach_a, problem_.reach_a, epsilon_);
  const double obb =
      dual_value(r.g_bb, r.g_bb, y_, y_, problem_.reach_b, problem_.reach_b, epsilon_);
  r.loss = r.xy.loss - 0.5 * oaa - 0.5 * obb;
  return r;
}

template class Solver<float>;
template class Solver<double>;

}  // namespace detail

template <class T>
SinkhornResult<T> sinkhorn(const OtProblem<T>& problem, const SinkhornOptions& options) {
  detail::Solver<T> solver(problem, options, false);
  solver.run();
  return solver.result();
}

template <class T>
DivergenceResult<T> sinkhorn_divergence(const OtProblem<T>& problem,
                                        const SinkhornOptions& options) {
  detail::Solver<T> solver(problem, options, true);
  solver.run();
  return solver.divergence();
}

template SinkhornResult<float> sinkhorn(const OtProblem<float>&, const SinkhornOptions&);
template SinkhornResult<double> sinkhorn(const OtProblem<double>&, const SinkhornOptions&);
template DivergenceResult<float> sinkhorn_divergence(const OtProblem<float>&,
                                                     const SinkhornOptions&);
template DivergenceResult<double> sinkhorn_divergence(const OtProblem<double>&,
                                                      const SinkhornOptions&);

}  // namespace birkhoff::transport
