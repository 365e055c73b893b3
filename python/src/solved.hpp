// PRIVATE (python): what the numpy and the torch bindings of transport share: the solved
// problem they keep, the problem built from Python's arguments and the solve without the GIL.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.hpp"
#include "birkhoff/transport/describe.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "describe.hpp"

namespace birkhoff::python {

template <class T>
nb::ndarray<nb::numpy, T> copy_vector(std::span<const T> v) {
  return to_numpy(std::vector<T>(v.begin(), v.end()), {v.size()});
}

/// A solved problem: the cross solution, and the divergence when debiased. The solution owns
/// its prepared geometry and weights, so the input arrays need not outlive it.
template <class T>
struct Solved {
  transport::Solution<T> xy;
  std::optional<transport::DivergenceSolution<T>> div;
  double loss() const { return div ? div->loss() : xy.loss(); }
  std::size_t n() const { return static_cast<std::size_t>(xy.n()); }
  std::size_t m() const { return static_cast<std::size_t>(xy.m()); }
  std::size_t d() const { return static_cast<std::size_t>(xy.geometry().dim()); }
};

/// Defines what every Python view of a solved problem S (derived from Solved<T>) shows: the
/// value, the potentials (copies), the self potentials when debiased, epsilon and the
/// convergence figures of the cross solve.
template <class S>
nb::class_<S>& solved_properties(nb::class_<S>& c) {
  return c.def_prop_ro("loss", [](const S& s) { return s.loss(); })
      .def_prop_ro(
          "f", [](const S& s) { return copy_vector(s.xy.f()); }, nb::rv_policy::move)
      .def_prop_ro(
          "g", [](const S& s) { return copy_vector(s.xy.g()); }, nb::rv_policy::move)
      .def_prop_ro(
          "f_aa", [](const S& s) { return copy_vector(s.div->f_aa()); }, nb::rv_policy::move)
      .def_prop_ro(
          "g_bb", [](const S& s) { return copy_vector(s.div->g_bb()); }, nb::rv_policy::move)
      .def_prop_ro("debias", [](const S& s) { return s.div.has_value(); })
      .def_prop_ro("epsilon", [](const S& s) { return s.xy.report().epsilon; })
      .def_prop_ro("iterations", [](const S& s) { return s.xy.report().iterations; })
      .def_prop_ro("converged", [](const S& s) { return s.xy.report().converged; })
      .def_prop_ro("marginal_error", [](const S& s) { return s.xy.report().marginal_error; })
      .def_prop_ro("transport_cost", [](const S& s) { return s.xy.report().transport_cost; });
}

/// Adds the second-order methods (hvp, inverse_hvp, implicit_gradient) to the solution type
/// (defined in transport_ops.cpp).
template <class T>
void second_order_methods(nb::class_<Solved<T>>& c);

/// P v, or P^T u when `transpose`, for a (rows, k) operand: (n, k) or (m, k) values, computed
/// with the GIL released.
template <class T>
std::vector<T> apply_plan(const Solved<T>& s, MatrixView<const T> operand, bool transpose) {
  const std::int64_t rows = transpose ? s.xy.m() : s.xy.n();
  std::vector<T> out(static_cast<std::size_t>(rows * operand.cols));
  call_without_gil([&] {
    const MatrixView<T> o(out.data(), rows, operand.cols);
    if (transpose) {
      s.xy.apply_transpose(operand, o);
    } else {
      s.xy.apply(operand, o);
    }
  });
  return out;
}

/// The problem without its geometry: weights (viewed, not copied), epsilon, and the marginal
/// policy from reach (unbalanced) or mass (partial; excludes reach).
template <class T>
transport::OtProblem<T> problem_from(const std::optional<In<T>>& a, const std::optional<In<T>>& b,
                                     double epsilon, std::optional<double> reach_a,
                                     std::optional<double> reach_b,
                                     std::optional<double> mass = std::nullopt) {
  transport::OtProblem<T> problem;
  problem.a = vector_view(a, "a");
  problem.b = vector_view(b, "b");
  problem.epsilon = epsilon;
  problem.marginals = transport::marginals_from_reach(reach_a, reach_b);
  if (mass) {
    require(!reach_a && !reach_b, "mass", "partial OT excludes reach (unbalanced OT)");
    problem.marginals = transport::Partial{*mass};
  }
  return problem;
}

/// The solver options from the described keyword names, with a progress callback that honours
/// Ctrl-C and forwards to `progress` (None: none).
/// A ground cost as Python passes it: (name, p, scale), p None for the cost's default.
using CostSpec = std::tuple<std::string, std::optional<double>, double>;

inline transport::Cost cost_from(const CostSpec& c) {
  return transport::Cost::named(std::get<0>(c), std::get<1>(c), std::get<2>(c));
}

inline transport::SinkhornOptions solver_options(const nb::dict& options, nb::object progress) {
  auto o = options_from_kwargs<transport::SinkhornOptions>(options);
  o.progress = progress_with_signals(std::move(progress));
  return o;
}

/// Builds the geometry (geometry()) and solves with the GIL released: the divergence and its
/// cross solution when `debias`, else the cross solution. `sinkhorn` and `divergence` are the
/// solvers: transport's by default, the distributed ones under MPI.
template <class T, class Geometry, class Sinkhorn, class Divergence>
Solved<T> solve_problem(transport::OtProblem<T>& problem, const transport::SinkhornOptions& o,
                        bool debias, Geometry geometry, Sinkhorn sinkhorn, Divergence divergence) {
  return call_without_gil([&] {
    Solved<T> s;
    problem.geometry = geometry();
    if (debias) {
      s.div = divergence(problem, o);
      s.xy = s.div->xy();
    } else {
      s.xy = sinkhorn(problem, o);
    }
    return s;
  });
}

template <class T, class Geometry>
Solved<T> solve_problem(transport::OtProblem<T>& problem, const transport::SinkhornOptions& o,
                        bool debias, Geometry geometry) {
  return solve_problem(
      problem, o, debias, geometry,
      [](const auto& p, const auto& opt) { return transport::sinkhorn(p, opt); },
      [](const auto& p, const auto& opt) { return transport::sinkhorn_divergence(p, opt); });
}

}  // namespace birkhoff::python
