#include <algorithm>
#include <cmath>
#include <limits>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport {

std::vector<double> epsilon_schedule(const SinkhornOptions& options, double diameter) {
  if (!options.epsilons.empty()) return options.epsilons;
  const double blur2 = options.blur * options.blur;
  if (options.iterations > 0)
    return std::vector<double>(static_cast<std::size_t>(options.iterations), blur2);
  // GeomLoss epsilon_schedule, p = 2: [D^2] + exp(arange(2 ln D, 2 ln blur, 2 ln s)) + [blur^2].
  const double start = 2.0 * std::log(diameter);
  const double stop = 2.0 * std::log(options.blur);
  const double step = 2.0 * std::log(options.scaling);
  const double count = std::ceil((stop - start) / step);
  // An annealing of more than 10^6 steps is a mistake (scaling rounded to 1), not a plan.
  require(
      count <= 1e6, "scaling",
      "the epsilon schedule would have " + std::to_string(count) + " steps; use a smaller scaling");
  const auto k = static_cast<std::int64_t>(std::max(0.0, count));
  std::vector<double> eps{diameter * diameter};
  for (std::int64_t i = 0; i < k; ++i)
    eps.push_back(std::exp(start + static_cast<double>(i) * step));
  eps.push_back(blur2);
  return eps;
}

template <class T>
double bounding_diameter(MatrixView<const T> x, MatrixView<const T> y) {
  double s = 0;
  for (std::int64_t k = 0; k < x.cols; ++k) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& m : {x, y})
      for (std::int64_t i = 0; i < m.rows; ++i) {
        lo = std::min(lo, static_cast<double>(m(i, k)));
        hi = std::max(hi, static_cast<double>(m(i, k)));
      }
    s += (hi - lo) * (hi - lo);
  }
  return std::sqrt(s);
}

template double bounding_diameter(MatrixView<const float>, MatrixView<const float>);
template double bounding_diameter(MatrixView<const double>, MatrixView<const double>);

}  // namespace birkhoff::transport
