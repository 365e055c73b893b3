// The entry of sinkhorn() and sinkhorn_divergence(): validation, the working precision and the
// backend are chosen here; the loop itself is the Solver's (transport/solver.cpp).
#include "birkhoff/transport/sinkhorn.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>

#include "birkhoff/core/error.hpp"
#include "transport/checks.hpp"
#include "transport/solver.hpp"
#include "transport/state.hpp"

namespace birkhoff::transport {

namespace detail {
namespace {

OtProblem<double> widened(const OtProblem<float>& problem, std::vector<double>& a,
                          std::vector<double>& b) {
  a.assign(problem.a.begin(), problem.a.end());
  b.assign(problem.b.begin(), problem.b.end());
  return {problem.geometry.cast<double>(), a, b, problem.epsilon, problem.marginals};
}

std::vector<double> widen(const float* v, std::size_t n) { return {v, v + n}; }

std::vector<float> narrow(std::span<const double> v) { return {v.begin(), v.end()}; }

// The plan of a float64 solution read with float32 operands (a float32 problem solved in
// float64): each pass widens its inputs, runs the float64 solution's passes (block-sparse
// when it was solved multiscale) and rounds the rows' results back. Holds the solution, whose
// state the passes read.
class WidenedPasses final : public Passes<float> {
 public:
  explicit WidenedPasses(Solution<double> solved) : solved_(std::move(solved)) {}
  void lse(Axis rows, Axis cols, const std::vector<float>& row_hat,
           const std::vector<float>& col_hat, double eps, LseOut<float>& out, const float* values,
           std::int64_t dv, const Modulation<float>& mod) override {
    const std::size_t nr = row_hat.size(), nc = col_hat.size();
    const auto v =
        values ? widen(values, nc * static_cast<std::size_t>(dv)) : std::vector<double>();
    std::vector<double> mx, my;
    Modulation<double> m{nullptr, nullptr, mod.dm, mod.distance_exponent};
    if (mod.dm > 0) {
      mx = widen(mod.mod_x, nr * static_cast<std::size_t>(mod.dm));
      my = widen(mod.mod_y, nc * static_cast<std::size_t>(mod.dm));
      m.mod_x = mx.data();
      m.mod_y = my.data();
    }
    LseOut<double> o;
    base().lse(rows, cols, widen(row_hat.data(), nr), widen(col_hat.data(), nc), eps, o,
               values ? v.data() : nullptr, dv, m);
    out.max = narrow(o.max);
    out.sum = narrow(o.sum);
    out.values = narrow(o.values);
  }
  void min(Axis rows, Axis cols, const std::vector<float>& col_hat, std::vector<float>& out,
           std::vector<std::int64_t>& argmin) override {
    std::vector<double> o;
    base().min(rows, cols, widen(col_hat.data(), col_hat.size()), o, argmin);
    out = narrow(o);
  }
  double kept_fraction() const override { return base().kept_fraction(); }

 private:
  Passes<double>& base() const { return *solved_.state().plan; }
  Solution<double> solved_;
};

// A float64 solution of a float32 problem rounded back to float32, `why` in its report; its
// plan products run in float64 on the solution's passes. `start`: the report of a float32 stage
// that ran first (its iterations counted, its levels listed first as "float32 ...").
Solution<float> narrowed(const OtProblem<float>& problem, const SinkhornOptions& options,
                         const Solution<double>& solved, const std::string& why,
                         const SinkhornReport* start = nullptr) {
  const auto& g = problem.geometry;
  Found<float> found{narrow(solved.f()),      narrow(solved.g()), narrow(solved.f_grad()),
                     narrow(solved.g_grad()), solved.report(),    solved.state().multiplier};
  found.report.working_dtype = "float64 (" + why + ")";
  if (start != nullptr) {
    SinkhornReport& r = found.report;
    const double tol = options.marginal_tol;
    r.converged = std::isfinite(r.marginal_error) && r.marginal_error <= tol &&
                  r.truncation_bound <= problem.epsilon * tol;
    r.budget_exhausted = r.budget_exhausted && !r.converged;
    r.stalled = r.stalled && !r.converged;
    auto& levels = found.report.levels;
    for (auto level = start->levels.rbegin(); level != start->levels.rend(); ++level) {
      levels.insert(levels.begin(), *level);
      levels.front().name = "float32 " + level->name;
    }
    found.report.iterations += start->iterations;
  }
  return make_solution(g, problem.marginals, make_weights(problem.a, g.n()),
                       make_weights(problem.b, g.m()), options.num_threads, std::move(found),
                       std::shared_ptr<Passes<float>>(std::make_shared<WidenedPasses>(solved)),
                       std::make_shared<const Solution<double>>(solved));
}

// A float32 problem solved in float64 (its points, weights and epsilon; the answer rounded
// back): for epsilon below what float32 logits resolve to the tolerance.
Solution<float> solve_in_double(const OtProblem<float>& problem, const SinkhornOptions& options,
                                const std::string& why, const Registry& registry,
                                const SinkhornReport* start = nullptr) {
  std::vector<double> a, b;
  return narrowed(problem, options, sinkhorn_with(widened(problem, a, b), options, registry), why,
                  start);
}

// The divergence of a float32 problem solved in float64 (its three problems), rounded back.
DivergenceSolution<float> divergence_in_double(const OtProblem<float>& problem,
                                               const SinkhornOptions& options,
                                               const std::string& why, const Registry& registry) {
  std::vector<double> a, b;
  const DivergenceSolution<double> wide =
      sinkhorn_divergence_with(widened(problem, a, b), options, registry);
  auto s = std::make_shared<DivergenceState<float>>();
  s->xy = narrowed(problem, options, wide.xy(), why);
  s->f_aa = narrow(wide.f_aa());
  s->g_bb = narrow(wide.g_bb());
  s->f_aa_grad = narrow(wide.f_aa_grad());
  s->g_bb_grad = narrow(wide.g_bb_grad());
  s->loss = wide.loss();
  s->wide = std::make_shared<const DivergenceSolution<double>>(wide);
  return DivergenceSolution<float>(std::move(s));
}

// float32 potentials carry an absolute error of about epsilon 2^-24 (the LSE of nearly equal
// terms once epsilon dwarfs the costs), which the loss inherits: 4 epsilon 2^-24 bounds what
// was measured (0.03 to 2.5 epsilon 2^-24 over blurs 1 to 10^3 of the data's diameter). A loss
// that this bound would move by more than 1e-4 of itself is re-solved in float64; returns why,
// or "" when float32 holds.
std::string float32_value_floor(double loss, double epsilon) {
  const double bound = 4 * std::ldexp(epsilon, -24);
  if (bound <= 1e-4 * std::abs(loss)) return {};  // a NaN loss is re-solved too
  char why[200];
  std::snprintf(why, sizeof why,
                "float32 potentials at epsilon %.3g would leave an error of about %.2g in the "
                "loss %.3g",
                epsilon, bound, loss);
  return why;
}

// The same floor in float64 (4 epsilon 2^-53), against the largest cost of the data: beyond it
// not even the cross term OT(a, b) keeps four digits, whatever the precision, so the blur is
// refused rather than answered wrongly (float32 problems are promoted first, then checked).
template <class T>
void check_resolvable(const OtProblem<T>& problem) {
  const double scale = problem.geometry.cost()->bound(support_diameter(problem));
  const double bound = 4 * std::ldexp(problem.epsilon, -53);
  if (!(scale > 0) || bound <= 1e-4 * scale) return;
  const double p = problem.geometry.cost()->exponent();
  const double most = 1e-4 * scale / 4 * std::ldexp(1.0, 53);
  char what[320];
  std::snprintf(what, sizeof what,
                "too large for the data: epsilon = %.3g (blur %.3g) is above %.3g (blur %.3g), "
                "where float64 potentials would leave an error of about %.2g in the loss (costs "
                "up to %.3g)",
                problem.epsilon, std::pow(problem.epsilon, 1.0 / p), most, std::pow(most, 1.0 / p),
                bound, scale);
  throw InvalidInput(std::string("epsilon: ") + what);
}

// A float32 problem whose epsilon (or the schedule's smallest) lies below what float32 logits
// resolve on its data: solved in float64 rather than refused, since float64 resolves it.
// Returns why, or "" when float32 resolves it.
std::string below_float32(const OtProblem<float>& problem, const SinkhornOptions& options) {
  if (problem.geometry.empty()) return {};  // validate() names it
  double eps = problem.epsilon;
  for (double e : options.epsilons) eps = std::min(eps, e);
  const double limit = resolvable_epsilon(problem);
  if (!(eps < limit)) return {};
  char why[200];
  std::snprintf(why, sizeof why,
                "epsilon %.3g is below %.3g, the smallest float32 logits resolve on this data", eps,
                limit);
  return why;
}

// A float32 problem whose logits would leave a marginal error above the tolerance: solved in
// float32 to the tolerance of its own arithmetic, then finished in float64 from those
// potentials (a warm start, so no annealing again). The float64 iterations correct what float32
// rounding left; a float32 answer already within the tolerance takes one. The report counts
// both stages' iterations and lists the float32 stages first.
Solution<float> finish_in_double(const OtProblem<float>& problem, const SinkhornOptions& options,
                                 const std::string& why, const Registry& registry) {
  SinkhornReport start;
  SinkhornOptions wide = options;
  {
    const Choice<float> choice = choose(registry, problem, options);
    const Solution<float> f32 = choice.backend->solve(problem, options, choice.reason);
    start = f32.report();
    if (std::isfinite(start.loss)) {
      wide.init_f.assign(f32.f().begin(), f32.f().end());
      wide.init_g.assign(f32.g().begin(), f32.g().end());
    }
  }  // the float32 stage's passes are freed before the float64 ones are built
  // The float64 stage iterates to a quarter of the tolerance, so that the error float32's
  // perturbed fixed point leaves in the potentials is not all the tolerance allows (a float32
  // stage that ended at 6.7e-4 against 1e-3 left gradients 1.4 % off where a float64 solve to
  // 9.9e-4 left 0.12 %); converged is then judged against the tolerance asked for.
  wide.marginal_tol = 0.25 * options.marginal_tol;
  // max_iter bounds the iterations at the final epsilon of both stages together.
  for (const auto& level : start.levels)
    if (level.name == "final") wide.max_iter = std::max(1, wide.max_iter - level.iterations);
  return solve_in_double(problem, wide, "finished from a float32 solve; " + why, registry, &start);
}

}  // namespace

template <class T>
Solution<T> sinkhorn_with(const OtProblem<T>& problem, const SinkhornOptions& options,
                          const Registry& registry) {
  if constexpr (std::is_same_v<T, float>) {
    const std::string why = below_float32(problem, options);
    if (!why.empty()) return solve_in_double(problem, options, why, registry);
  }
  validate(problem, options);
  check_resolvable(problem);
  if constexpr (std::is_same_v<T, float>) {
    const bool converge =
        options.schedule == Schedule::Converge ||
        (options.schedule == Schedule::Auto && options.iterations == 0 && options.epsilons.empty());
    const double floor = precision_floor(problem);
    if (converge && floor > 0.25 * options.marginal_tol) {
      char why[160];
      std::snprintf(why, sizeof why,
                    "float32 logits would leave a marginal error of about %.2g at this epsilon",
                    floor);
      return finish_in_double(problem, options, why, registry);
    }
  }
  const Choice<T> choice = choose(registry, problem, options);
  Solution<T> solution = choice.backend->solve(problem, options, choice.reason);
  if constexpr (std::is_same_v<T, float>) {
    const std::string why = float32_value_floor(solution.loss(), problem.epsilon);
    if (!why.empty()) return solve_in_double(problem, options, why, registry);
  }
  return solution;
}

template <class T>
DivergenceSolution<T> sinkhorn_divergence_with(const OtProblem<T>& problem,
                                               const SinkhornOptions& options,
                                               const Registry& registry) {
  if constexpr (std::is_same_v<T, float>) {
    const std::string why = below_float32(problem, options);
    if (!why.empty()) return divergence_in_double(problem, options, why, registry);
  }
  validate(problem, options);
  check_resolvable(problem);
  require(options.init_f.empty(), "init_f", "the divergence takes no warm start yet");
  const Choice<T> choice = choose(registry, problem, options);
  DivergenceSolution<T> solution = choice.backend->divergence(problem, options, choice.reason);
  if constexpr (std::is_same_v<T, float>) {
    const std::string why = float32_value_floor(solution.loss(), problem.epsilon);
    if (!why.empty()) return divergence_in_double(problem, options, why, registry);
  }
  return solution;
}

template Solution<float> sinkhorn_with(const OtProblem<float>&, const SinkhornOptions&,
                                       const Registry&);
template Solution<double> sinkhorn_with(const OtProblem<double>&, const SinkhornOptions&,
                                        const Registry&);
template DivergenceSolution<float> sinkhorn_divergence_with(const OtProblem<float>&,
                                                            const SinkhornOptions&,
                                                            const Registry&);
template DivergenceSolution<double> sinkhorn_divergence_with(const OtProblem<double>&,
                                                             const SinkhornOptions&,
                                                             const Registry&);

}  // namespace detail

template <class T>
Solution<T> sinkhorn(const OtProblem<T>& problem, const SinkhornOptions& options) {
  return detail::sinkhorn_with(problem, options, detail::Registry::local());
}

template <class T>
DivergenceSolution<T> sinkhorn_divergence(const OtProblem<T>& problem,
                                          const SinkhornOptions& options) {
  return detail::sinkhorn_divergence_with(problem, options, detail::Registry::local());
}

template Solution<float> sinkhorn(const OtProblem<float>&, const SinkhornOptions&);
template Solution<double> sinkhorn(const OtProblem<double>&, const SinkhornOptions&);
template DivergenceSolution<float> sinkhorn_divergence(const OtProblem<float>&,
                                                       const SinkhornOptions&);
template DivergenceSolution<double> sinkhorn_divergence(const OtProblem<double>&,
                                                        const SinkhornOptions&);

}  // namespace birkhoff::transport
