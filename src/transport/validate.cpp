#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport {
namespace {

template <class T>
void check_points(MatrixView<const T> p, const char* name) {
  require(p.rows > 0, name, "the point cloud is empty (need at least one point)");
  require(p.cols > 0, name, "points have dimension 0");
  require(p.data != nullptr && p.stride >= p.cols, name, "invalid array");
  for (std::int64_t i = 0; i < p.rows; ++i)
    for (std::int64_t k = 0; k < p.cols; ++k)
      if (!std::isfinite(static_cast<double>(p(i, k))))
        throw InvalidInput(std::string(name) + ": non-finite value at row " + std::to_string(i) +
                           ", column " + std::to_string(k));
}

template <class T>
double check_weights(std::span<const T> w, std::int64_t n, const char* name, const char* points) {
  if (w.empty()) return 1.0;
  require(static_cast<std::int64_t>(w.size()) == n, name,
          "has " + std::to_string(w.size()) + " entries but " + points + " has " +
              std::to_string(n) + " points");
  double mass = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double v = static_cast<double>(w[i]);
    if (!std::isfinite(v))
      throw InvalidInput(std::string(name) + ": non-finite weight at index " + std::to_string(i));
    if (v < 0)
      throw InvalidInput(std::string(name) + ": negative weight " + std::to_string(v) +
                         " at index " + std::to_string(i));
    mass += v;
  }
  require(mass > 0, name, "total mass is zero (at least one weight must be positive)");
  require(std::isfinite(mass), name, "total mass overflows");
  return mass;
}

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

}  // namespace

template <class T>
void validate(const OtProblem<T>& problem, const SinkhornOptions& options) {
  check_points(problem.x, "x");
  check_points(problem.y, "y");
  require(problem.x.cols == problem.y.cols, "y",
          "dimension mismatch: x has d = " + std::to_string(problem.x.cols) +
              ", y has d = " + std::to_string(problem.y.cols));
  // Squared norms (relative to the centre of the data) must not overflow T.
  const double diameter = bounding_diameter(problem.x, problem.y);
  require(std::isfinite(static_cast<T>(diameter * diameter)), "x",
          "coordinates are too large: squared distances overflow " +
              std::string(sizeof(T) == 4 ? "float32" : "float64"));
  const double ma = check_weights(problem.a, problem.x.rows, "a", "x");
  const double mb = check_weights(problem.b, problem.y.rows, "b", "y");
  if (problem.reach_a) check_length(*problem.reach_a, "reach_a");
  if (problem.reach_b) check_length(*problem.reach_b, "reach_b");
  if (!problem.reach_a && !problem.reach_b && std::abs(ma - mb) > 1e-5 * std::max(ma, mb))
    throw InvalidInput("b: total masses differ (a: " + std::to_string(ma) +
                       ", b: " + std::to_string(mb) +
                       "); balanced OT needs equal masses: normalise the weights or set reach");
  check_length(options.blur, "blur");
  require(std::isfinite(options.scaling) && options.scaling > 0 && options.scaling < 1, "scaling",
          "must lie in (0, 1), got " + std::to_string(options.scaling));
  if (options.diameter) check_length(*options.diameter, "diameter");
  for (double e : options.epsilons)
    require(std::isnormal(e) && e > 0, "epsilons", "must be positive normal numbers");
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
  require(options.num_threads >= 0, "num_threads", "must be >= 0");
  // The logits scale like D^2 / epsilon: beyond ~2^18 (float32) or ~2^47 (float64) their
  // rounding error exceeds ~1 % of a weight and the plan cannot be resolved.
  const double eps = options.epsilons.empty()
                         ? options.blur * options.blur
                         : *std::min_element(options.epsilons.begin(), options.epsilons.end());
  const double limit = std::ldexp(diameter * diameter, sizeof(T) == 4 ? -18 : -47);
  if (eps < limit) {
    const double min_blur = std::sqrt(limit);
    throw InvalidInput("blur: epsilon = " + std::to_string(eps) + " is too small for " +
                       (sizeof(T) == 4 ? "float32" : "float64") + " on data of diameter " +
                       std::to_string(diameter) + "; use blur >= " + std::to_string(min_blur) +
                       (sizeof(T) == 4 ? " or float64 inputs" : ""));
  }
}

template void validate(const OtProblem<float>&, const SinkhornOptions&);
template void validate(const OtProblem<double>&, const SinkhornOptions&);

}  // namespace birkhoff::transport
