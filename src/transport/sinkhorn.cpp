#include "birkhoff/transport/sinkhorn.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "transport/solver.hpp"
#include "transport/state.hpp"

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

}  // namespace

template <class T>
Solver<T>::Solver(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias)
    : geometry_(problem.geometry),
      marginals_(problem.marginals),
      policy_(problem.marginals),
      options_(options),
      debias_(debias) {
  validate(problem, options);
  if (debias)
    require(reach_a(problem.marginals).has_value() == reach_b(problem.marginals).has_value(),
            "reach_b", "the debiased divergence needs both reach_a and reach_b, or neither");
  kappa_ = 2.0 * cost_scale(geometry_.cost());
  threads_ = resolve_threads(options.num_threads);
  a_ = make_weights(problem.a, geometry_.n());
  b_ = make_weights(problem.b, geometry_.m());
  x_ = x_side(geometry_, a_);
  y_ = y_side(geometry_, b_);
  const double diameter =
      options.diameter.value_or(std::max(geometry_.diameter(), std::sqrt(problem.epsilon)));
  // A fixed-epsilon run is stored as one epsilon repeated, not as a list of `iterations`.
  if (options.iterations > 0 && options.epsilons.empty()) {
    eps_ = {problem.epsilon};
    repeats_ = options.iterations;
  } else {
    eps_ = epsilon_schedule(options, problem.epsilon, diameter);
  }
}

template <class T>
void Solver<T>::sweep(double eps, double w, bool alternating) {
  softmin(x_, y_, gh_.data(), eps, kappa_, threads_, scratch_, cand_f_);
  if (alternating) policy_.update(Axis::X, fh_, cand_f_, x_.sqnorm, eps, w);
  softmin(y_, x_, fh_.data(), eps, kappa_, threads_, scratch_, cand_g_);
  if (!alternating) policy_.update(Axis::X, fh_, cand_f_, x_.sqnorm, eps, w);
  policy_.update(Axis::Y, gh_, cand_g_, y_.sqnorm, eps, w);
  if (debias_) {
    // Self terms are symmetric problems: averaged updates keep f_aa = g_aa ([feydy2019] §3.1).
    const double ws = alternating ? 0.5 : w;
    softmin(x_, x_, fah_.data(), eps, kappa_, threads_, scratch_, cand_f_);
    policy_.update(Axis::X, fah_, cand_f_, x_.sqnorm, eps, ws);
    softmin(y_, y_, gbh_.data(), eps, kappa_, threads_, scratch_, cand_g_);
    policy_.update(Axis::Y, gbh_, cand_g_, y_.sqnorm, eps, ws);
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
  fh_.assign(static_cast<std::size_t>(x_.n), T(0));
  gh_.assign(static_cast<std::size_t>(y_.n), T(0));
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
double Solver<T>::label_transport_cost() const {
  // sum_ij P_ij L[l_i, l_j]: a row pass whose values are the one-hot columns of y's labels
  // gives, per row, the plan's mass on each class.
  const std::int64_t v = x_.num_labels;
  std::vector<T> onehot(static_cast<std::size_t>(y_.n * v), T(0));
  for (std::int64_t j = 0; j < y_.n; ++j)
    onehot[static_cast<std::size_t>(j * v + y_.labels[j])] = 1;
  LseOut<T> out;
  lse_pass(x_, y_, gh_.data(), epsilon_, kappa_, threads_, out, onehot.data(), v);
  double cost = 0;
  for (std::int64_t i = 0; i < x_.n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const double factor = plan_row_factor(x_, fh_.data(), si, epsilon_, out.max[si]);
    for (std::int64_t k = 0; k < v; ++k)
      cost += factor * out.values[static_cast<std::size_t>(i * v + k)] *
              x_.label_cost[x_.labels[i] * v + k];
  }
  return cost;
}

template <class T>
SinkhornReport Solver<T>::report() const {
  // A row pass with values y gives the row masses r_i and (P y)_i; a column pass gives the
  // column masses c_j. Then <P, C> = sum_i r_i alpha_i + sum_j c_j beta_j - kappa sum_i
  // <x_i, (P y)_i>, with C_ij = alpha_i + beta_j - kappa <x_i, y_j>.
  SinkhornReport r;
  const std::int64_t d = x_.d;
  const double eps = epsilon_;
  LseOut<T> out;
  lse_pass(x_, y_, gh_.data(), eps, kappa_, threads_, out, y_.points, d);
  double row_err = 0, cost = 0;
  for (std::int64_t i = 0; i < x_.n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const double factor = plan_row_factor(x_, fh_.data(), si, eps, out.max[si]);
    const double mass = factor * out.sum[si];
    row_err += std::abs(mass - x_.weights[si]);
    double dot = 0;
    for (std::int64_t k = 0; k < d; ++k)
      dot += static_cast<double>(x_.points[i * d + k]) *
             out.values[static_cast<std::size_t>(i * d + k)];
    cost += mass * x_.sqnorm[si] - kappa_ * factor * dot;
  }
  out = {};
  lse_pass(y_, x_, fh_.data(), eps, kappa_, threads_, out);
  double col_err = 0;
  for (std::int64_t j = 0; j < y_.n; ++j) {
    const auto sj = static_cast<std::size_t>(j);
    const double mass = plan_row_factor(y_, gh_.data(), sj, eps, out.max[sj]) * out.sum[sj];
    col_err += std::abs(mass - y_.weights[sj]);
    cost += mass * y_.sqnorm[sj];
  }
  if (x_.label_cost) cost += label_transport_cost();
  r.transport_cost = cost;
  double err = 0;
  if (policy_.hard(Axis::X)) err = std::max(err, row_err / x_.mass);
  if (policy_.hard(Axis::Y)) err = std::max(err, col_err / y_.mass);
  // A NaN anywhere (a breakdown of the arithmetic) must not pass as converged.
  if (!std::isfinite(row_err) || !std::isfinite(col_err) || !std::isfinite(cost))
    err = std::numeric_limits<double>::quiet_NaN();
  r.marginal_error = err;
  r.converged = std::isfinite(err) && err <= options_.marginal_tol;
  r.epsilon = epsilon_;
  r.iterations = iterations_;
  r.stopped_early = stopped_early_;
  r.errors = errors_;
  return r;
}

template <class T>
Solution<T> Solver<T>::result() {
  auto s = std::make_shared<SolutionState<T>>();
  s->report = report();  // reads the shifted potentials, which are then moved into the state
  s->geometry = geometry_;
  s->marginals = marginals_;
  s->num_threads = options_.num_threads;
  s->f = take_standard(fh_, x_.sqnorm);
  s->g = take_standard(gh_, y_.sqnorm);
  s->f_grad = take_standard(fh_grad_, x_.sqnorm);
  s->g_grad = take_standard(gh_grad_, y_.sqnorm);
  // The products read shifted potentials; they are derived from the standard ones once, here.
  s->f_hat = shifted<T>(s->f, x_.sqnorm);
  s->g_hat = shifted<T>(s->g, y_.sqnorm);
  s->report.loss = policy_.value<T>(s->f, s->g, a_.w, b_.w, epsilon_);
  s->a = std::move(a_);
  s->b = std::move(b_);
  return Solution<T>(std::move(s));
}

template <class T>
DivergenceSolution<T> Solver<T>::divergence() {
  // The self terms read the weights, which result() moves into the cross solution.
  const Weights<T> a = a_, b = b_;
  auto s = std::make_shared<DivergenceState<T>>();
  s->xy = result();
  s->f_aa = take_standard(fah_, x_.sqnorm);
  s->g_bb = take_standard(gbh_, y_.sqnorm);
  s->f_aa_grad = take_standard(fah_grad_, x_.sqnorm);
  s->g_bb_grad = take_standard(gbh_grad_, y_.sqnorm);
  // Self terms: symmetric potentials (f = g = f_aa), so OT(a,a) = value(f_aa, f_aa).
  const double oaa = policy_.self(Axis::X).value<T>(s->f_aa, s->f_aa, a.w, a.w, epsilon_);
  const double obb = policy_.self(Axis::Y).value<T>(s->g_bb, s->g_bb, b.w, b.w, epsilon_);
  s->loss = s->xy.loss() - 0.5 * oaa - 0.5 * obb;
  return DivergenceSolution<T>(std::move(s));
}

template class Solver<float>;
template class Solver<double>;

}  // namespace detail

template <class T>
Solution<T> sinkhorn(const OtProblem<T>& problem, const SinkhornOptions& options) {
  detail::Solver<T> solver(problem, options, false);
  solver.run();
  return solver.result();
}

template <class T>
DivergenceSolution<T> sinkhorn_divergence(const OtProblem<T>& problem,
                                          const SinkhornOptions& options) {
  detail::Solver<T> solver(problem, options, true);
  solver.run();
  return solver.divergence();
}

template Solution<float> sinkhorn(const OtProblem<float>&, const SinkhornOptions&);
template Solution<double> sinkhorn(const OtProblem<double>&, const SinkhornOptions&);
template DivergenceSolution<float> sinkhorn_divergence(const OtProblem<float>&,
                                                       const SinkhornOptions&);
template DivergenceSolution<double> sinkhorn_divergence(const OtProblem<double>&,
                                                        const SinkhornOptions&);

}  // namespace birkhoff::transport
