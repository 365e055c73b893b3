// PRIVATE (transport): the checks of points and weights that every transport problem runs, so
// that each reports the same errors.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/view.hpp"
#include "birkhoff/transport/problem.hpp"

namespace birkhoff::transport::detail {

/// Throws InvalidInput naming `name` for an empty cloud, dimension 0 or a non-finite value.
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

/// The total mass of weights `w` of the n points of `points` (1 when empty, i.e. uniform);
/// throws InvalidInput naming `name` for a wrong length, a negative or non-finite weight, or a
/// zero or overflowing total.
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

/// Throws InvalidInput naming `b` when two total masses differ by more than 1e-5 relative.
void check_equal_masses(double ma, double mb, const char* hint);

/// The smallest epsilon T's logits resolve on the problem's data: 2^-18 (float32) or 2^-47
/// (float64) times logit_scale(problem); validate() refuses a smaller one.
template <class T>
double resolvable_epsilon(const OtProblem<T>& problem);

}  // namespace birkhoff::transport::detail
