#include <algorithm>
#include <cmath>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport {

std::vector<double> epsilon_schedule(const SinkhornOptions& options, double epsilon,
                                     double diameter, double p) {
  if (!options.epsilons.empty()) return options.epsilons;
  if (options.iterations > 0)
    return std::vector<double>(static_cast<std::size_t>(options.iterations), epsilon);
  // GeomLoss epsilon_schedule: [D^p] + exp(arange(p ln D, ln eps, p ln s)) + [eps].
  const double start = p * std::log(diameter);
  const double stop = std::log(epsilon);
  const double step = p * std::log(options.scaling);
  const double count = std::ceil((stop - start) / step);
  // An annealing of more than 10^6 steps is a mistake (scaling rounded to 1), not a plan.
  require(
      count <= 1e6, "scaling",
      "the epsilon schedule would have " + std::to_string(count) + " steps; use a smaller scaling");
  const auto k = static_cast<std::int64_t>(std::max(0.0, count));
  std::vector<double> eps{p == 2 ? diameter * diameter : std::pow(diameter, p)};
  for (std::int64_t i = 0; i < k; ++i)
    eps.push_back(std::exp(start + static_cast<double>(i) * step));
  eps.push_back(epsilon);
  return eps;
}

}  // namespace birkhoff::transport
