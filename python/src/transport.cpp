// Bindings of birkhoff::transport: thin wrappers, GIL released while solving.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "arrays.hpp"
#include "birkhoff/transport/describe.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "describe.hpp"
#include "solved.hpp"
#if BIRKHOFF_HAVE_MPI
#include "birkhoff/distributed/sinkhorn.hpp"
#endif

namespace birkhoff::python {
namespace {

using transport::Cost;

// The report's described fields (the CLI's JSON keys) and the per-iteration errors.
nb::dict report_dict(const transport::SinkhornReport& r) {
  nb::dict d = to_dict(r);
  d["marginal_errors"] = r.marginal_errors;
  return d;
}

template <class T>
Solved<T> solve(In<T> x, In<T> y, std::optional<In<T>> a, std::optional<In<T>> b,
                const CostSpec& cost, std::optional<double> reach_a, std::optional<double> reach_b,
                double epsilon, bool debias, nb::object progress, const nb::dict& options,
                std::optional<double> mass, std::int64_t comm, std::optional<In<double>> init_f,
                std::optional<In<double>> init_g) {
  const auto xv = matrix(x, "x"), yv = matrix(y, "y");
  auto problem = problem_from(a, b, epsilon, reach_a, reach_b, mass);
  auto o = solver_options(options, std::move(progress));
  const auto f0 = vector_view(init_f, "init"), g0 = vector_view(init_g, "init");
  o.init_f.assign(f0.begin(), f0.end());
  o.init_g.assign(g0.begin(), g0.end());
  const Cost c = cost_from(cost);
  const auto geometry = [&] { return transport::PointCloud<T>(xv, yv, c); };
#if BIRKHOFF_HAVE_MPI
  if (comm >= 0) {
    int ready = 0;
    MPI_Initialized(&ready);
    require(ready != 0, "comm", "MPI is not initialised: import mpi4py.MPI first");
    const MPI_Comm c = MPI_Comm_f2c(static_cast<MPI_Fint>(comm));
    return solve_problem(
        problem, o, debias, geometry,
        [c](const auto& p, const auto& opt) { return distributed::sinkhorn(p, opt, c); },
        [c](const auto& p, const auto& opt) {
          return distributed::sinkhorn_divergence(p, opt, c);
        });
  }
#else
  require(comm < 0, "comm", "this build of birkhoff has no MPI (BIRKHOFF_MPI was off)");
#endif
  return solve_problem(problem, o, debias, geometry);
}

template <class T>
nb::ndarray<nb::numpy, T> apply(const Solved<T>& s, In<T> v, bool transpose) {
  const char* name = transpose ? "u" : "v";
  const auto view = matrix(v, name);
  const std::int64_t rows = transpose ? s.xy.m() : s.xy.n();
  std::vector<T> out = apply_plan(s, view, transpose);
  if (v.ndim() == 1) return to_numpy(std::move(out), {static_cast<std::size_t>(rows)});
  return to_numpy(std::move(out),
                  {static_cast<std::size_t>(rows), static_cast<std::size_t>(view.cols)});
}

template <class T>
void bind(nb::module_& m, const char* name) {
  using S = Solved<T>;
  auto vector_result = [](auto method) {
    return [method](const S& s) {
      std::vector<T> v = call_without_gil([&] { return method(s.xy); });
      const std::size_t count = v.size();
      return to_numpy(std::move(v), {count});
    };
  };
  nb::class_<S> c(m, name);
  solved_properties(c)
      .def_prop_ro("multiplier", [](const S& s) { return s.xy.multiplier(); })
      .def_prop_ro("stopped_early", [](const S& s) { return s.xy.report().stopped_early; })
      .def_prop_ro("errors", [](const S& s) { return s.xy.report().errors; })
      .def_prop_ro("report", [](const S& s) { return report_dict(s.xy.report()); })
      .def(
          "apply", [](const S& s, In<T> v) { return apply(s, v, false); }, nb::arg("v"))
      .def(
          "apply_transpose", [](const S& s, In<T> u) { return apply(s, u, true); }, nb::arg("u"))
      .def("row_marginal", vector_result([](const auto& xy) { return xy.row_marginal(); }))
      .def("col_marginal", vector_result([](const auto& xy) { return xy.col_marginal(); }))
      .def("barycentric_map",
           [](const S& s) {
             std::vector<T> map = call_without_gil([&] { return s.xy.barycentric_map(); });
             return to_numpy(std::move(map), {static_cast<std::size_t>(s.xy.n()),
                                              static_cast<std::size_t>(s.xy.geometry().dim())});
           })
      .def("dense_plan",
           [](const S& s) {
             std::vector<T> p = call_without_gil([&] { return s.xy.dense_plan(); });
             return to_numpy(std::move(p), {static_cast<std::size_t>(s.xy.n()),
                                            static_cast<std::size_t>(s.xy.m())});
           })
      .def("gradients", [](const S& s) {
        transport::Gradients<T> g =
            call_without_gil([&] { return s.div ? s.div->gradients() : s.xy.gradients(); });
        const auto n = static_cast<std::size_t>(s.xy.n());
        const auto m = static_cast<std::size_t>(s.xy.m());
        const auto d = static_cast<std::size_t>(s.xy.geometry().dim());
        return nb::make_tuple(to_numpy(std::move(g.x), {n, d}), to_numpy(std::move(g.y), {m, d}),
                              to_numpy(std::move(g.a), {n}), to_numpy(std::move(g.b), {m}));
      });

  m.def("sinkhorn", &solve<T>, nb::arg("x"), nb::arg("y"), nb::arg("a").none(), nb::arg("b").none(),
        nb::arg("cost"), nb::arg("reach_a").none(), nb::arg("reach_b").none(), nb::arg("epsilon"),
        nb::arg("debias"), nb::arg("progress").none(), nb::arg("options"),
        nb::arg("mass").none() = nb::none(), nb::arg("comm") = -1,
        nb::arg("init_f").none() = nb::none(), nb::arg("init_g").none() = nb::none());
  second_order_methods<T>(c);
}

}  // namespace

void register_transport(nb::module_& m) {
  bind<float>(m, "Solution32");
  bind<double>(m, "Solution64");
  // The exponent p of a cost (epsilon = blur^p), checking the cost's name and parameters.
  m.def(
      "cost_exponent", [](const CostSpec& cost) { return cost_from(cost)->exponent(); },
      nb::arg("cost"));
  m.def("cost_names", &transport::cost_names);
  m.def("describe_sinkhorn_options", &describe_options<transport::SinkhornOptions>);
}

}  // namespace birkhoff::python
