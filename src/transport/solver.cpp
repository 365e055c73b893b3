// The Sinkhorn loop of sinkhorn() and sinkhorn_divergence(): annealing, the converge and
// GeomLoss schedules, the statistics of the report and the solution it hands over.
#include "transport/solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "birkhoff/transport/anderson.hpp"
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

// The marginal error that rounding the logits to T leaves: their terms reach about
// logit_scale (the folded row terms and the dot product, or the cost itself) over epsilon, each
// carries half an ulp of it, and a relative error of z in a weight is a relative error of
// z ln 2 in its mass.
template <class T>
double precision_floor(const OtProblem<T>& problem) {
  const double bound = logit_scale(problem);
  return std::ldexp(1.0, -std::numeric_limits<T>::digits) * bound / problem.epsilon * kLog2e * kLn2;
}

template double precision_floor(const OtProblem<float>&);
template double precision_floor(const OtProblem<double>&);

template <class T>
Solver<T>::Solver(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias,
                  const RowBackend<T>& backend)
    : Solver(problem, options, debias, &backend, nullptr) {}

template <class T>
Solver<T>::Solver(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias,
                  Passes<T>& passes)
    : Solver(problem, options, debias, nullptr, &passes) {}

template <class T>
Solver<T>::Solver(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias,
                  const RowBackend<T>* backend, Passes<T>* passes)
    : geometry_(problem.geometry),
      marginals_(problem.marginals),
      policy_(problem.marginals),
      options_(options),
      debias_(debias) {
  validate(problem, options);
  if (debias) policy_.check_divergence();
  if (debias)
    require(reach_a(problem.marginals).has_value() == reach_b(problem.marginals).has_value(),
            "reach_b", "the debiased divergence needs both reach_a and reach_b, or neither");
  kappa_ = geometry_.cost()->kappa();
  threads_ = resolve_threads(options.num_threads);
  a_ = make_weights(problem.a, geometry_.n());
  b_ = make_weights(problem.b, geometry_.m());
  x_ = x_side(geometry_, a_);
  y_ = y_side(geometry_, b_);
  if (passes == nullptr) {
    owned_ = backend->passes(x_, y_, kappa_, threads_);
    passes = owned_.get();
  }
  passes_ = passes;
  geomloss_ =
      options.schedule == Schedule::GeomLoss ||
      (options.schedule == Schedule::Auto && (options.iterations > 0 || !options.epsilons.empty()));
  const double p = geometry_.cost()->exponent();
  const double diameter = options.diameter.value_or(
      std::max(support_diameter(problem),
               p == 2 ? std::sqrt(problem.epsilon) : std::pow(problem.epsilon, 1.0 / p)));
  precision_floor_ = precision_floor(problem);
  // A fixed-epsilon run is stored as one epsilon repeated, not as a list of `iterations`.
  if (geomloss_ && options.iterations > 0 && options.epsilons.empty()) {
    eps_ = {problem.epsilon};
    repeats_ = options.iterations;
  } else if (!options.init_f.empty()) {
    eps_ = {problem.epsilon};  // warm: no annealing
    const std::vector<T> f(options.init_f.begin(), options.init_f.end()),
        g(options.init_g.begin(), options.init_g.end());
    warm_start(f, g);
  } else {
    eps_ = epsilon_schedule(options, problem.epsilon, diameter, p);
  }
}

template <class T>
void Solver<T>::warm_start(std::span<const T> f, std::span<const T> g) {
  fh_ = shifted(f, x_.sqnorm);
  gh_ = shifted(g, y_.sqnorm);
  warm_ = true;
}

template <class T>
void Solver<T>::warm_start_self(std::span<const T> f_aa, std::span<const T> g_bb) {
  fah_ = shifted(f_aa, x_.sqnorm);
  gbh_ = shifted(g_bb, y_.sqnorm);
}

template <class T>
void Solver<T>::sweep(double eps, double w, bool alternating) {
  if (policy_.exact_blocks()) {
    // Exact block maximisers (partial OT's rows, columns, mass): always alternating.
    alternating_iteration(eps, 1.0);
    --iterations_;  // the caller counts the sweep
    return;
  }
  softmin(*passes_, Axis::X, Axis::Y, fh_, gh_, eps, scratch_, cand_f_);
  if (alternating) policy_.update(Axis::X, fh_, cand_f_, x_.sqnorm, eps, w);
  softmin(*passes_, Axis::Y, Axis::X, gh_, fh_, eps, scratch_, cand_g_);
  if (!alternating) policy_.update(Axis::X, fh_, cand_f_, x_.sqnorm, eps, w);
  policy_.update(Axis::Y, gh_, cand_g_, y_.sqnorm, eps, w);
  if (debias_) {
    // Self terms are symmetric problems: averaged updates keep f_aa = g_aa ([feydy2019] §3.1).
    const double ws = alternating ? 0.5 : w;
    softmin(*passes_, Axis::X, Axis::X, fah_, fah_, eps, scratch_, cand_f_);
    policy_.update(Axis::X, fah_, cand_f_, x_.sqnorm, eps, ws);
    softmin(*passes_, Axis::Y, Axis::Y, gbh_, gbh_, eps, scratch_, cand_g_);
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
double Solver<T>::alternating_iteration(double eps, double w) {
  // A policy with a level (partial OT) maximises the dual over one potential and its
  // multiplier jointly in each half step. The level can move the potential by many epsilons in
  // one step, past the pairs a pass read for the old one: such a half step is run again on the
  // pairs of the new potential. After a column step the rows shift by the level, which for the
  // pairs is the columns rising by it.
  auto level = [&](Axis rows, Axis cols, const std::vector<T>& h, const std::vector<T>& col_hat,
                   const Side<T>& side, std::vector<T>& cand) {
    double mu = policy_.level(cand, side.sqnorm, side.weights, eps);
    if (!policy_.exact_blocks()) return mu;
    std::vector<T> next = h;
    policy_.update(rows, next, cand, side.sqnorm, eps, w, mu);
    if (rows == Axis::Y)
      for (auto& v : next) v = static_cast<T>(v + mu);
    if (!passes_->holds(rows, cols, next, col_hat, eps)) {
      softmin(*passes_, rows, cols, next, col_hat, eps, scratch_, cand);
      mu = policy_.level(cand, side.sqnorm, side.weights, eps);
    }
    return mu;
  };
  softmin(*passes_, Axis::X, Axis::Y, fh_, gh_, eps, scratch_, cand_f_);
  const double mu_x = level(Axis::X, Axis::Y, fh_, gh_, x_, cand_f_);
  const auto [fd, ft] = policy_.residual(Axis::X, fh_, cand_f_, x_.sqnorm, x_.weights, eps, mu_x);
  policy_.update(Axis::X, fh_, cand_f_, x_.sqnorm, eps, w, mu_x);
  lambda_ = policy_.after_update(Axis::X, fh_, lambda_, mu_x);
  softmin(*passes_, Axis::Y, Axis::X, gh_, fh_, eps, scratch_, cand_g_);
  const double mu_y = level(Axis::Y, Axis::X, gh_, fh_, y_, cand_g_);
  const auto [gd, gt] = policy_.residual(Axis::Y, gh_, cand_g_, y_.sqnorm, y_.weights, eps, mu_y);
  policy_.update(Axis::Y, gh_, cand_g_, y_.sqnorm, eps, w, mu_y);
  lambda_ = policy_.after_update(Axis::Y, fh_, lambda_, mu_y);
  double error = std::max(fd / ft, gd / gt);
  if (debias_) {
    // Self terms: averaged symmetric updates (they converge in a few steps, [feydy2019] §3.1).
    softmin(*passes_, Axis::X, Axis::X, fah_, fah_, eps, scratch_, cand_f_);
    const auto [ad, at] =
        policy_.self(Axis::X).residual(Axis::X, fah_, cand_f_, x_.sqnorm, x_.weights, eps);
    policy_.update(Axis::X, fah_, cand_f_, x_.sqnorm, eps, 0.5);
    softmin(*passes_, Axis::Y, Axis::Y, gbh_, gbh_, eps, scratch_, cand_g_);
    const auto [bd, bt] =
        policy_.self(Axis::Y).residual(Axis::Y, gbh_, cand_g_, y_.sqnorm, y_.weights, eps);
    policy_.update(Axis::Y, gbh_, cand_g_, y_.sqnorm, eps, 0.5);
    error = std::max({error, ad / at, bd / bt});
  }
  ++iterations_;
  // A NaN (a breakdown of the arithmetic) is reported as such, never as small.
  return std::isnan(error) ? std::numeric_limits<double>::quiet_NaN() : error;
}

template <class T>
void Solver<T>::progress(std::int64_t done, std::int64_t total, double eps, double error) const {
  ProgressInfo info{"sinkhorn", done, total};
  info.epsilon = eps;
  info.error = error;
  report_progress(options_.progress, info);
}

template <class T>
void Solver<T>::run() {
  if (!warm_) {
    fh_.assign(static_cast<std::size_t>(x_.n), T(0));
    gh_.assign(static_cast<std::size_t>(y_.n), T(0));
    for (std::size_t i = 0; i < fh_.size(); ++i) fh_[i] = -x_.sqnorm[i];
    for (std::size_t j = 0; j < gh_.size(); ++j) gh_[j] = -y_.sqnorm[j];
  }
  if (debias_ && fah_.empty()) {
    fah_ = fh_;
    gbh_ = gh_;
  }
  if (geomloss_) {
    run_geomloss();
  } else {
    run_converge();
  }
  // The loop's scratch is not needed any more: give it back before the statistics pass.
  cand_f_ = {};
  cand_g_ = {};
  scratch_ = {};
}

template <class T>
void Solver<T>::run_converge() {
  // Annealing [schmitzer2019]: at each epsilon above the final one, alternating iterations
  // until the marginal error is at most 1e-2 (or the tolerance, if looser), at most
  // kLevelMaxIter of them. A level left that close hands the next a warm start that keeps the
  // final loop short where one sweep per level does not (clouds with sparse tails).
  constexpr int kLevelMaxIter = 100;
  const double level_tol = std::max(options_.marginal_tol, 1e-2);
  const auto anneal = static_cast<std::int64_t>(eps_.size()) - 1;
  const std::int64_t total = anneal + options_.max_iter;
  std::int64_t done = 0;
  for (std::int64_t k = 0; k < anneal; ++k) {
    epsilon_ = eps_[static_cast<std::size_t>(k)];
    for (int r = 0; r < kLevelMaxIter; ++r) {
      const double e = alternating_iteration(epsilon_, 1.0);
      progress(++done, total, epsilon_, e);
      if (e <= level_tol) break;
    }
  }
  if (anneal > 0)
    levels_.push_back(
        {"anneal", eps_.front(), eps_[anneal - 1], iterations_, passes_->kept_fraction()});
  // The final epsilon: iterate to the tolerance. The estimate reads the plan half an update
  // back, so a stop is confirmed by the exact check of report() (two passes); after a failed
  // check the estimate must fall by a fifth before the next. An estimate that has not improved
  // by 1 % in 200 iterations near the arithmetic's floor has stalled: the run stops there. (Far
  // above the floor a plateau is slow progress, such as mass crossing a gap between clusters.)
  epsilon_ = eps_.back();
  const double stop_at = options_.marginal_tol;
  double check_below = stop_at, best = std::numeric_limits<double>::infinity();
  int best_at = 0;
  // Partial OT: each half step is an exact block maximiser of the dual; an extrapolation past
  // it would leave the caps, so they run plain.
  const bool relax = options_.acceleration == Acceleration::OverRelaxation;
  const bool anderson = !policy_.exact_blocks() && options_.acceleration == Acceleration::Anderson;
  double omega = 1.0, omega_cap = 1.95;  // the cap falls when relaxation stops helping
  // A float32 solve that float64 iterations will finish (sinkhorn() where its rounding floor
  // is above the tolerance's margin; not the divergence) stops at its plateau: below that
  // floor, 50 iterations without a 10 % gain are rounding noise, which only the float64
  // iterations remove.
  const bool handover =
      std::is_same_v<T, float> && !debias_ && precision_floor_ > 0.25 * options_.marginal_tol;
  double plateau = std::numeric_limits<double>::infinity();
  int plateau_at = 0;
  const int start = iterations_;
  int local_end = start;
  const std::size_t first = marginal_errors_.size();
  auto flat = [first](const std::vector<double>& errors, int it) {
    if (it < 200) return false;
    const auto at = errors.begin() + static_cast<std::ptrdiff_t>(first) + it - 199;
    return !(*std::min_element(at + 100, at + 200) < 0.99 * *std::min_element(at, at + 100));
  };
  // Anderson acts on the column potential: g <- G(F(g)) is the fixed-point map.
  Anderson mixer(anderson ? y_.n : 0, anderson ? 8 : 0);
  std::vector<double> g_in, g_out;
  for (int it = 0; it < options_.max_iter; ++it) {
    if (anderson) g_in.assign(gh_.begin(), gh_.end());
    const double e = alternating_iteration(epsilon_, omega);
    if (anderson) {
      const std::size_t k = marginal_errors_.size();
      if (k > 0 && !(e < 2.0 * marginal_errors_[k - 1])) mixer.reset();
      g_out.assign(gh_.begin(), gh_.end());
      mixer.step(g_in, g_out);
      for (std::size_t j = 0; j < gh_.size(); ++j) gh_[j] = static_cast<T>(g_in[j]);
    }
    marginal_errors_.push_back(e);
    progress(++done, total, epsilon_, e);
    if (!(e == e)) break;  // NaN: report() says so
    bool confirmed = false;
    if (e <= check_below) {
      confirmed = report().converged;
      if (confirmed && !passes_->approximate()) break;
      check_below = 0.8 * e;
    }
    // Passes in a lower precision (block-local float32) hand over to full precision once
    // converged in their arithmetic, within a quarter of their rounding floor (measured
    // plateaus lie near a tenth of it), or near that floor when the best error of 100
    // iterations gained less than 1 % on the 100 before (far above it, that is slow progress).
    const double floor = passes_->rounding_floor();
    if (passes_->approximate() &&
        (confirmed || e <= 0.25 * floor || (e <= 4 * floor && flat(marginal_errors_, it)))) {
      passes_->tighten();
      levels_.push_back({"final, block-local float32", epsilon_, epsilon_, iterations_ - start,
                         passes_->kept_fraction()});
      local_end = iterations_;
      check_below = stop_at;
      continue;
    }
    if (e < 0.9 * plateau) {
      plateau = e;
      plateau_at = it;
    } else if (handover && it - plateau_at >= 50 && plateau <= precision_floor_) {
      stalled_ = true;
      break;
    }
    if (e < 0.99 * best) {
      best = e;
      best_at = it;
    } else if (it - best_at >= 200 && omega > 1.0 && best <= 1e6 * precision_floor_) {
      // Relaxation that stopped helping near the arithmetic's floor (where it amplifies
      // rounding): halve its excess and give the run another 200 iterations. Far above the
      // floor a plateau is slow progress that relaxation speeds up.
      omega = 1.0 + 0.5 * (omega - 1.0);
      if (omega < 1.01) omega = 1.0;
      omega_cap = omega;
      best_at = it;
    } else if (it - best_at >= 200 && best <= 1e4 * precision_floor_) {
      stalled_ = true;
      break;
    }
    // Over-relaxation [thibault2021], adapted as for SOR: every few iterations the observed
    // rate lambda under weight w gives the plain rate theta = (lambda + w - 1)^2 / (lambda w^2),
    // and w becomes 2 / (1 + sqrt(1 - theta)), the optimum for that rate. The excess is halved
    // when the error grows (a safeguard, not a proof).
    const std::size_t k = marginal_errors_.size();
    if (relax && k >= 8 && k % 4 == 0) {
      const double lambda = std::pow(marginal_errors_[k - 1] / marginal_errors_[k - 5], 0.25);
      if (lambda < 1.0) {
        const double theta =
            (lambda + omega - 1.0) * (lambda + omega - 1.0) / (lambda * omega * omega);
        if (theta > 0.0 && theta < 1.0 && omega_cap > 1.0)
          omega = std::max(omega, std::min(omega_cap, 2.0 / (1.0 + std::sqrt(1.0 - theta))));
      }
    }
    if (omega > 1.0 && k >= 2 && marginal_errors_[k - 1] > 1.5 * marginal_errors_[k - 2])
      omega = 1.0 + 0.5 * (omega - 1.0);
  }
  budget_exhausted_ = !stalled_ &&
                      marginal_errors_.size() == static_cast<std::size_t>(options_.max_iter) &&
                      !(marginal_errors_.back() <= stop_at);
  passes_->tighten();
  levels_.push_back(
      {"final", epsilon_, epsilon_, iterations_ - local_end, passes_->kept_fraction()});
}

template <class T>
void Solver<T>::run_geomloss() {
  const bool alternating = policy_.exact_blocks() || options_.update == Update::Alternating;
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
    progress(++done, total, eps, std::numeric_limits<double>::quiet_NaN());
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
  passes_->lse(Axis::X, Axis::Y, fh_, gh_, epsilon_, out, onehot.data(), v);
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
void Solver<T>::power_cost_pass(LseOut<T>& out) const {
  // Distance-power form: values of ones weighted by s_ij^(p/2) give sum_j P_ij C_ij / kappa
  // per row (over the factor), next to the row masses.
  const std::vector<T> ones(static_cast<std::size_t>(y_.n), T(1));
  Modulation<T> mod;
  mod.distance_exponent = 0.5 * x_.power;
  passes_->lse(Axis::X, Axis::Y, fh_, gh_, epsilon_, out, ones.data(), 1, mod);
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
  const bool power = x_.power > 0;
  if (!power) passes_->lse(Axis::X, Axis::Y, fh_, gh_, eps, out, y_.points, d);
  if (power) power_cost_pass(out);
  // Each point's plan marginal against its policy's target (MarginalCheck).
  MarginalCheck check(policy_, lambda_, eps, x_.mass, y_.mass);
  double cost = 0;
  for (std::int64_t i = 0; i < x_.n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const double factor = plan_row_factor(x_, fh_.data(), si, eps, out.max[si]);
    const double mass = factor * out.sum[si];
    check.add(Axis::X, x_.weights[si], mass, static_cast<double>(fh_[si]) + x_.sqnorm[si]);
    if (power) {
      cost += kappa_ * factor * out.values[si];
      continue;
    }
    double dot = 0;
    for (std::int64_t k = 0; k < d; ++k)
      dot += static_cast<double>(x_.points[i * d + k]) *
             out.values[static_cast<std::size_t>(i * d + k)];
    cost += mass * x_.sqnorm[si] - kappa_ * factor * dot;
  }
  out = {};
  passes_->lse(Axis::Y, Axis::X, gh_, fh_, eps, out);
  for (std::int64_t j = 0; j < y_.n; ++j) {
    const auto sj = static_cast<std::size_t>(j);
    const double mass = plan_row_factor(y_, gh_.data(), sj, eps, out.max[sj]) * out.sum[sj];
    check.add(Axis::Y, y_.weights[sj], mass, static_cast<double>(gh_[sj]) + y_.sqnorm[sj]);
    cost += mass * y_.sqnorm[sj];
  }
  if (x_.label_cost) cost += label_transport_cost();
  r.transport_cost = cost;
  // A NaN anywhere (a breakdown of the arithmetic) must not pass as converged.
  const double err = std::isfinite(cost) ? check.error() : std::numeric_limits<double>::quiet_NaN();
  r.marginal_error = err;
  r.converged = std::isfinite(err) && err <= options_.marginal_tol;
  // The divergence: the last estimate (which covers the self problems) within what its value
  // needs.
  if (debias_ && !geomloss_)
    r.converged = r.converged && !marginal_errors_.empty() &&
                  marginal_errors_.back() <= value_tolerance(cost);
  r.epsilon = epsilon_;
  r.iterations = iterations_;
  r.stopped_early = stopped_early_;
  r.errors = errors_;
  r.marginal_errors = marginal_errors_;
  r.budget_exhausted = budget_exhausted_;
  r.stalled = stalled_;
  r.schedule = geomloss_ ? "geomloss" : "converge";
  r.backend = "dense";
  r.working_dtype = sizeof(T) == 4 ? "float32" : "float64";
  r.backend_reason = backend_reason;
  r.acceleration = geomloss_ || policy_.exact_blocks()                     ? "none"
                   : options_.acceleration == Acceleration::OverRelaxation ? "over-relaxation"
                   : options_.acceleration == Acceleration::Anderson       ? "anderson"
                                                                           : "none";
  r.levels = levels_;
  return r;
}

template <class T>
double Solver<T>::value_tolerance(double transport_cost) const {
  if (!debias_) return options_.marginal_tol;
  auto standard = [](std::vector<T> hat, const T* sqnorm) { return take_standard(hat, sqnorm); };
  const auto f = standard(fh_, x_.sqnorm), g = standard(gh_, y_.sqnorm);
  const auto fa = standard(fah_, x_.sqnorm), gb = standard(gbh_, y_.sqnorm);
  const double s = policy_.value<T>(f, g, a_.w, b_.w, epsilon_, lambda_) -
                   0.5 * policy_.self(Axis::X).value<T>(fa, fa, a_.w, a_.w, epsilon_) -
                   0.5 * policy_.self(Axis::Y).value<T>(gb, gb, b_.w, b_.w, epsilon_);
  const double mass = std::max(x_.mass, y_.mass);
  const double scale = std::max(std::abs(s), std::abs(transport_cost));
  return std::min(options_.marginal_tol, options_.marginal_tol * scale / (epsilon_ * mass));
}

template <class T>
Solution<T> Solver<T>::result() {
  Found<T> found;
  found.report = report();  // reads the shifted potentials, which are then moved out
  found.f = take_standard(fh_, x_.sqnorm);
  found.g = take_standard(gh_, y_.sqnorm);
  found.f_grad = take_standard(fh_grad_, x_.sqnorm);
  found.g_grad = take_standard(gh_grad_, y_.sqnorm);
  found.report.loss = policy_.value<T>(found.f, found.g, a_.w, b_.w, epsilon_, lambda_);
  found.multiplier = lambda_;
  return make_solution(geometry_, marginals_, std::move(a_), std::move(b_), options_.num_threads,
                       std::move(found));
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
}  // namespace birkhoff::transport
