#include <algorithm>
#include <cmath>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport {

std::vector<double> epsilon_schedule(const SinkhornOptions& options, double epsilon,
                                     double diameter) {
  if (!options.epsilons.empty()) return options.epsilons;
  if (options.iterations > 0)
    return std::vector<double>(static_cast<std::size_t>(options.iterations), epsilon);
  // GeomLoss epsilon_schedule, p = 2: [D^2] + exp(arange(2 ln D, ln eps, 2 ln s)) + [eps].
  const double start = 2.0 * std::log(diameter);
  const double stop = std::log(epsilon);
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
  eps.push_back(epsilon);
  return eps;
}

}  // namespace birkhoff::transport
