#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "checks.hpp"

namespace birkhoff::transport {
namespace {

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void check_positive(double v, const char* name) {
  require(std::isfinite(v) && v > 0, name, "must be positive and finite, got " + number(v));
}

// A length whose square (the quantity the solver uses) must be a normal double.
void check_length(double v, const char* name) {
  check_positive(v, name);
  require(
      std::isnormal(v * v), name,
      "its square must be a normal double (between 1e-154 and 1e154), got " + std::to_string(v));
}

// The logits' terms reach L = logit_scale(problem) / epsilon: beyond ~2^18 (float32) or ~2^47
// (float64) their rounding error exceeds ~1 % of a weight and the plan cannot be resolved.
template <class T>
void check_resolvable(double eps, const OtProblem<T>& problem) {
  const double limit = detail::resolvable_epsilon<T>(problem);
  if (eps >= limit) return;
  // Three significant digits: std::to_string's fixed six decimals print a tiny epsilon as 0.
  const auto g = [](double v) {
    std::ostringstream os;
    os.precision(3);
    os << v;
    return os.str();
  };
  const double p = problem.geometry.cost()->exponent();
  // The front ends name the argument blur: the message gives both scales.
  throw InvalidInput(
      "epsilon: too small for " + std::string(sizeof(T) == 4 ? "float32" : "float64") +
      " on this data: epsilon = " + g(eps) + " (blur " + g(std::pow(eps, 1.0 / p)) + ") is below " +
      g(limit) + " (blur " + g(std::pow(limit, 1.0 / p)) + "), where its logits' terms reach " +
      g(logit_scale(problem)) + " cost units" + (sizeof(T) == 4 ? "; use float64 inputs" : ""));
}

}  // namespace

template <class T>
double detail::resolvable_epsilon(const OtProblem<T>& problem) {
  return std::ldexp(logit_scale(problem), sizeof(T) == 4 ? -18 : -47);
}

template double detail::resolvable_epsilon(const OtProblem<float>&);
template double detail::resolvable_epsilon(const OtProblem<double>&);

void detail::check_equal_masses(double ma, double mb, const char* hint) {
  if (std::abs(ma - mb) > 1e-5 * std::max(ma, mb))
    throw InvalidInput("b: total masses differ (a: " + std::to_string(ma) +
                       ", b: " + std::to_string(mb) + "); " + hint);
}

template <class T>
void validate(const OtProblem<T>& problem) {
  require(!problem.geometry.empty(), "geometry", "is empty: build a PointCloud from x and y");
  const double ma = detail::check_weights(problem.a, problem.geometry.n(), "a", "x");
  const double mb = detail::check_weights(problem.b, problem.geometry.m(), "b", "y");
  const auto ra = reach_a(problem.marginals), rb = reach_b(problem.marginals);
  if (std::holds_alternative<Unbalanced>(problem.marginals))
    require(ra || rb, "reach_a", "unbalanced marginals need reach_a or reach_b");
  if (ra) check_length(*ra, "reach_a");
  if (rb) check_length(*rb, "reach_b");
  const auto* partial = std::get_if<Partial>(&problem.marginals);
  if (partial) {
    // A rounding slack of 1e-6 lets mass = min(|a|, |b|) computed in float32 through.
    check_positive(partial->mass, "mass");
    require(partial->mass <= std::min(ma, mb) * (1 + 1e-6), "mass",
            "must be at most min(|a|, |b|) = " + number(std::min(ma, mb)) + ", got " +
                number(partial->mass));
  }
  if (!ra && !rb && !partial)
    detail::check_equal_masses(
        ma, mb, "balanced OT needs equal masses: normalise the weights or set reach");
  require(std::isfinite(problem.epsilon) && std::isnormal(problem.epsilon) && problem.epsilon > 0,
          "epsilon", "must be a positive normal number, got " + number(problem.epsilon));
  check_resolvable(problem.epsilon, problem);
}

template <class T>
void validate(const OtProblem<T>& problem, const SinkhornOptions& options) {
  validate(problem);
  require(std::isfinite(options.scaling) && options.scaling > 0 && options.scaling < 1, "scaling",
          "must lie in (0, 1), got " + std::to_string(options.scaling));
  if (options.diameter) check_length(*options.diameter, "diameter");
  for (double e : options.epsilons)
    require(std::isnormal(e) && e > 0, "epsilons", "must be positive normal numbers");
  if (!options.epsilons.empty()) {
    require(options.epsilons.back() == problem.epsilon, "epsilons",
            "the last value must be the problem's epsilon (" + number(problem.epsilon) + ")");
    check_resolvable(*std::min_element(options.epsilons.begin(), options.epsilons.end()), problem);
  }
  require(options.iterations >= 0, "iterations", "must be >= 0");
  require(options.check_every >= 1, "check_every", "must be >= 1");
  if (options.tol) {
    require(std::isfinite(*options.tol) && *options.tol >= 0, "tol", "must be >= 0");
    require(options.iterations > 0 || !options.epsilons.empty(), "tol",
            "applies to runs at a fixed epsilon: set iterations (the annealed schedule makes one "
            "step per epsilon)");
  }
  require(std::isfinite(options.marginal_tol) && options.marginal_tol >= 0, "marginal_tol",
          "must be >= 0");
  require(options.max_iter >= 1, "max_iter", "must be >= 1");
  require(options.block_size >= 16 && options.block_size <= 4096 && options.block_size % 16 == 0,
          "block_size", "must be a multiple of 16 in [16, 4096]");
  if (options.schedule == Schedule::Converge) {
    const char* geomloss_only = options.iterations > 0      ? "iterations"
                                : !options.epsilons.empty() ? "epsilons"
                                : options.tol               ? "tol"
                                                            : nullptr;
    if (geomloss_only)
      throw InvalidInput(std::string(geomloss_only) +
                         ": applies to the GeomLoss schedule; the converge schedule iterates "
                         "until marginal_tol (budget: max_iter)");
  }
  require(options.num_threads >= 0, "num_threads", "must be >= 0");
  if (!options.init_f.empty() || !options.init_g.empty()) {
    require(!options.init_f.empty() && !options.init_g.empty(), "init_f",
            "a warm start needs both potentials, init_f and init_g");
    require(static_cast<std::int64_t>(options.init_f.size()) == problem.geometry.n(), "init_f",
            "has " + std::to_string(options.init_f.size()) + " entries but x has " +
                std::to_string(problem.geometry.n()) + " points");
    require(static_cast<std::int64_t>(options.init_g.size()) == problem.geometry.m(), "init_g",
            "has " + std::to_string(options.init_g.size()) + " entries but y has " +
                std::to_string(problem.geometry.m()) + " points");
    for (const auto* v : {&options.init_f, &options.init_g})
      for (double e : *v)
        require(std::isfinite(e), v == &options.init_f ? "init_f" : "init_g",
                "non-finite potential");
    const bool geomloss = options.schedule == Schedule::GeomLoss ||
                          (options.schedule == Schedule::Auto &&
                           (options.iterations > 0 || !options.epsilons.empty()));
    require(!geomloss, "init_f", "a warm start applies to the converge schedule");
  }
}

template void validate(const OtProblem<float>&);
template void validate(const OtProblem<double>&);
template void validate(const OtProblem<float>&, const SinkhornOptions&);
template void validate(const OtProblem<double>&, const SinkhornOptions&);

}  // namespace birkhoff::transport
