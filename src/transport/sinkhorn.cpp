// The entry of sinkhorn() and sinkhorn_divergence(): validation, the working precision and the
// backend are chosen here; the loop itself is the Solver's (transport/solver.cpp).
#include "birkhoff/transport/sinkhorn.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>

#include "birkhoff/core/error.hpp"
#include "transport/multiscale.hpp"
#include "transport/solver.hpp"
#include "transport/state.hpp"

namespace birkhoff::transport {

namespace detail {
namespace {

// A float32 problem solved in float64 (its points, weights and epsilon; the answer rounded
// back): for epsilon below what float32 logits resolve to the tolerance.
Solution<float> solve_in_double(const OtProblem<float>& problem, const SinkhornOptions& options,
                                const std::string& why, const PassesMaker& maker) {
  const auto& g = problem.geometry;
  const std::vector<double> a(problem.a.begin(), problem.a.end());
  const std::vector<double> b(problem.b.begin(), problem.b.end());
  OtProblem<double> wide{g.cast<double>(), a, b, problem.epsilon, problem.marginals};
  const Solution<double> solved = sinkhorn_with(wide, options, maker);
  auto s = std::make_shared<SolutionState<float>>();
  s->geometry = g;
  s->marginals = problem.marginals;
  s->num_threads = options.num_threads;
  s->a = make_weights(problem.a, g.n());
  s->b = make_weights(problem.b, g.m());
  s->f.assign(solved.f().begin(), solved.f().end());
  s->g.assign(solved.g().begin(), solved.g().end());
  s->f_grad.assign(solved.f_grad().begin(), solved.f_grad().end());
  s->g_grad.assign(solved.g_grad().begin(), solved.g_grad().end());
  s->f_hat = shifted<float>(s->f, g.x_sqnorm().data());
  s->g_hat = shifted<float>(s->g, g.y_sqnorm().data());
  s->report = solved.report();
  s->multiplier = solved.state().multiplier;
  s->report.working_dtype = "float64 (" + why + ")";
  s->attach_plan();
  return Solution<float>(std::move(s));
}

}  // namespace

template <class T>
Solution<T> sinkhorn_with(const OtProblem<T>& problem, const SinkhornOptions& options,
                          const PassesMaker& maker) {
  validate(problem, options);
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
      return solve_in_double(problem, options, why, maker);
    }
  }
  if (maker)
    require(options.backend != Backend::Multiscale, "backend",
            "the multiscale backend does not run distributed yet; use backend dense");
  auto choice = choose_backend(problem, options, false);
  if (choice.backend == Backend::Multiscale) {
    if (!maker) return multiscale_sinkhorn(problem, options, choice.reason);
    choice = {Backend::Dense, "distributed runs are dense (multiscale: " + choice.reason + ")"};
  }
  Solver<T> solver(problem, options, false, nullptr, maker);
  solver.backend_reason = choice.reason;
  solver.run();
  return solver.result();
}

template <class T>
DivergenceSolution<T> sinkhorn_divergence_with(const OtProblem<T>& problem,
                                               const SinkhornOptions& options,
                                               const PassesMaker& maker) {
  validate(problem, options);
  choose_backend(problem, options, true);  // refuses what the divergence lacks
  require(options.init_f.empty(), "init_f", "the divergence takes no warm start yet");
  Solver<T> solver(problem, options, true, nullptr, maker);
  solver.run();
  return solver.divergence();
}

template Solution<float> sinkhorn_with(const OtProblem<float>&, const SinkhornOptions&,
                                       const PassesMaker&);
template Solution<double> sinkhorn_with(const OtProblem<double>&, const SinkhornOptions&,
                                        const PassesMaker&);
template DivergenceSolution<float> sinkhorn_divergence_with(const OtProblem<float>&,
                                                            const SinkhornOptions&,
                                                            const PassesMaker&);
template DivergenceSolution<double> sinkhorn_divergence_with(const OtProblem<double>&,
                                                             const SinkhornOptions&,
                                                             const PassesMaker&);

}  // namespace detail

template <class T>
Solution<T> sinkhorn(const OtProblem<T>& problem, const SinkhornOptions& options) {
  return detail::sinkhorn_with(problem, options, {});
}

template <class T>
DivergenceSolution<T> sinkhorn_divergence(const OtProblem<T>& problem,
                                          const SinkhornOptions& options) {
  return detail::sinkhorn_divergence_with(problem, options, {});
}

template Solution<float> sinkhorn(const OtProblem<float>&, const SinkhornOptions&);
template Solution<double> sinkhorn(const OtProblem<double>&, const SinkhornOptions&);
template DivergenceSolution<float> sinkhorn_divergence(const OtProblem<float>&,
                                                       const SinkhornOptions&);
template DivergenceSolution<double> sinkhorn_divergence(const OtProblem<double>&,
                                                        const SinkhornOptions&);

}  // namespace birkhoff::transport
