// The backend registry of one process and the one choice of a backend (backend.hpp).
#include "transport/backend.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "birkhoff/core/error.hpp"
#include "transport/multiscale.hpp"
#include "transport/solver.hpp"

namespace birkhoff::transport::detail {
namespace {

template <class T>
class DenseBackend final : public RowBackend<T> {
 public:
  std::unique_ptr<Passes<T>> passes(const Side<T>& x, const Side<T>& y, double kappa,
                                    int threads) const override {
    return std::make_unique<DensePasses<T>>(x, y, kappa, threads);
  }
};

// Expected fraction of pairs the block-sparse passes keep at the final epsilon: a column block
// is kept when its box comes within about sqrt(eps log(blocks / delta) / cs) of the row block's,
// so the centres lie within that plus a block's side (uniform data in a cube).
template <class T>
double expected_kept_fraction(const OtProblem<T>& problem, std::int64_t block_size, double delta) {
  const auto& g = problem.geometry;
  const double d = static_cast<double>(g.dim());
  const double diameter = support_diameter(problem) / std::sqrt(d);  // per-axis extent
  if (!(diameter > 0)) return 1.0;
  const double reach =
      std::sqrt(problem.epsilon * std::log(1.0 / delta) / (0.5 * g.cost()->kappa()));
  const double side = diameter * std::pow(static_cast<double>(block_size) /
                                              static_cast<double>(std::max(g.n(), g.m())),
                                          1.0 / d);
  return std::min(1.0, std::pow((side + 2 * reach) / diameter, d));
}

// Auto's rules for the multiscale backend: "" when it pays, else why dense (the first rule
// that fails).
template <class T>
std::string dense_because(const OtProblem<T>& problem, const SinkhornOptions& options,
                          std::string& kept_reason) {
  const auto& cost = problem.geometry.cost();
  if (!(cost->box_bound() && cost->identity_features()))
    return "the " + cost.name() + " cost is dense";
  // SamplesLoss: a converged multiscale value differs from the schedule's by the schedule's
  // own error, so auto keeps the schedule's values for every size (no jump at 1e8 pairs).
  if (options.schedule == Schedule::GeomLoss)
    return "the GeomLoss schedule is dense under auto (backend multiscale runs it converged)";
  if (options.iterations > 0 || !options.epsilons.empty())
    return "a fixed number of iterations or list of epsilons is dense";
  const double pairs =
      static_cast<double>(problem.geometry.n()) * static_cast<double>(problem.geometry.m());
  if (pairs < 1e8) return "fewer than 1e8 pairs";
  if (problem.geometry.dim() > 8) return "dimension above 8";
  // No rule on the kept fraction: at 1e8 pairs and more the multiscale solve was as fast as the
  // dense one or faster even with every pair kept (its coarse levels save iterations).
  kept_reason =
      "expected kept fraction " + std::to_string(expected_kept_fraction(
                                      problem, options.block_size, 1e-2 * options.marginal_tol));
  return {};
}

}  // namespace

template <class T>
Solution<T> RowBackend<T>::solve(const OtProblem<T>& problem, const SinkhornOptions& options,
                                 const std::string& reason) const {
  Solver<T> solver(problem, options, false, *this);
  solver.backend_reason = reason;
  solver.run();
  return solver.result();
}

template <class T>
DivergenceSolution<T> RowBackend<T>::divergence(const OtProblem<T>& problem,
                                                const SinkhornOptions& options,
                                                const std::string& reason) const {
  Solver<T> solver(problem, options, true, *this);
  solver.backend_reason = reason;
  solver.run();
  return solver.divergence();
}

template <class T>
const RowBackend<T>& dense_backend() {
  static const DenseBackend<T> backend;
  return backend;
}

const Registry& Registry::local() {
  static const Registry registry = [] {
    Registry r;
    r.dense.f32 = std::shared_ptr<const RowBackend<float>>(&dense_backend<float>(), [](auto*) {});
    r.dense.f64 = std::shared_ptr<const RowBackend<double>>(&dense_backend<double>(), [](auto*) {});
    r.multiscale.f32 = multiscale_backend<float>();
    r.multiscale.f64 = multiscale_backend<double>();
    return r;
  }();
  return registry;
}

template <class T>
Choice<T> choose(const Registry& registry, const OtProblem<T>& problem,
                 const SinkhornOptions& options) {
  const Choice<T> dense{registry.dense.get<T>(), Backend::Dense, {}};
  if (options.backend == Backend::Dense) return {dense.backend, Backend::Dense, "asked for"};
  const auto* multiscale = registry.multiscale.get<T>();
  if (options.backend == Backend::Multiscale) {
    require(multiscale != nullptr, "backend",
            "the multiscale backend " + registry.without_multiscale + "; use backend dense");
    const auto& cost = problem.geometry.cost();
    require(cost->box_bound() && cost->identity_features(), "backend",
            "the multiscale backend handles the sqeuclidean cost only (cost " + cost.name() +
                "); use backend dense");
    require(options.iterations == 0 && options.epsilons.empty(), "backend",
            "the multiscale backend iterates to marginal_tol; a fixed number of iterations or "
            "list of epsilons runs on backend dense");
    return {multiscale, Backend::Multiscale, "asked for"};
  }
  std::string kept;
  const std::string why = dense_because(problem, options, kept);
  if (!why.empty()) return {dense.backend, Backend::Dense, why};
  if (multiscale == nullptr)
    return {
        dense.backend, Backend::Dense,
        "the multiscale backend " + registry.without_multiscale + " (multiscale: " + kept + ")"};
  return {multiscale, Backend::Multiscale, kept};
}

template class RowBackend<float>;
template class RowBackend<double>;
template const RowBackend<float>& dense_backend();
template const RowBackend<double>& dense_backend();
template Choice<float> choose(const Registry&, const OtProblem<float>&, const SinkhornOptions&);
template Choice<double> choose(const Registry&, const OtProblem<double>&, const SinkhornOptions&);

}  // namespace birkhoff::transport::detail
