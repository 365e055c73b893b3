// Bindings behind birkhoff.torch: a solve that keeps its native solution (the one solution
// type of transport.cpp) for the autograd functions, the solution's second-order methods
// (Hessian-vector products, inverse HVP, implicit gradient), the hard c-transform, and the
// label-augmented cost. Thin wrappers; the GIL is released while solving.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "arrays.hpp"
#include "birkhoff/transport/c_transform.hpp"
#include "birkhoff/transport/describe.hpp"
#include "birkhoff/transport/hvp.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "describe.hpp"
#include "solved.hpp"

namespace birkhoff::python {
namespace {

using transport::Cost;

template <class T>
Solved<T> solve(In<T> x, In<T> y, std::optional<In<T>> a, std::optional<In<T>> b,
                const CostSpec& cost_spec, std::optional<double> reach_a,
                std::optional<double> reach_b, double epsilon, bool debias,
                std::optional<In<std::int64_t>> x_labels, std::optional<In<std::int64_t>> y_labels,
                std::optional<In<double>> label_cost, double label_weight, const nb::dict& options,
                std::optional<In<double>> init_f, std::optional<In<double>> init_g) {
  const auto xv = matrix(x, "x"), yv = matrix(y, "y");
  auto problem = problem_from(a, b, epsilon, reach_a, reach_b);
  auto o = solver_options(options, nb::none());
  const auto f0 = vector_view(init_f, "init"), g0 = vector_view(init_g, "init");
  o.init_f.assign(f0.begin(), f0.end());
  o.init_g.assign(g0.begin(), g0.end());
  const Cost cost = cost_from(cost_spec);
  std::optional<transport::LabelCost> labels;
  if (label_cost) {
    require(x_labels && y_labels, "x_labels", "label_cost needs x_labels and y_labels");
    const auto table = matrix(*label_cost, "label_cost");
    labels = transport::LabelCost{vector_view(x_labels, "x_labels"),
                                  vector_view(y_labels, "y_labels"), table, label_weight};
  }
  return solve_problem(problem, o, debias, [&] {
    return labels ? transport::PointCloud<T>(xv, yv, cost, *labels)
                  : transport::PointCloud<T>(xv, yv, cost);
  });
}

template <class T>
transport::HvpOptions hvp_options(int max_iter, double rtol, int num_threads) {
  transport::HvpOptions o;
  o.max_iter = max_iter;
  o.rtol = rtol;
  o.num_threads = num_threads;
  o.progress = progress_with_signals(nb::none());
  return o;
}

template <class T>
nb::tuple gradients_tuple(transport::Gradients<T>&& g, std::size_t n, std::size_t m,
                          std::size_t d) {
  return nb::make_tuple(to_numpy(std::move(g.x), {n, d}), to_numpy(std::move(g.y), {m, d}),
                        to_numpy(std::move(g.a), {n}), to_numpy(std::move(g.b), {m}));
}

}  // namespace

template <class T>
void second_order_methods(nb::class_<Solved<T>>& c) {
  using S = Solved<T>;
  c.def(
       "hvp",
       [](const S& s, In<T> vx, std::optional<In<T>> vy, bool want_y, int max_iter, double rtol,
          int num_threads) {
         const auto ax = matrix(vx, "vx");
         const MatrixView<const T> ay = vy ? matrix(*vy, "vy") : MatrixView<const T>{};
         const auto o = hvp_options<T>(max_iter, rtol, num_threads);
         transport::HvpResult<T> h = call_without_gil([&] {
           return s.div ? transport::hvp(*s.div, ax, ay, want_y, o)
                        : transport::hvp(s.xy, ax, ay, want_y, o);
         });
         nb::object hy = nb::none();
         if (want_y) hy = nb::cast(to_numpy(std::move(h.y), {s.m(), s.d()}));
         return nb::make_tuple(to_numpy(std::move(h.x), {s.n(), s.d()}), hy, h.cg_iterations,
                               h.converged);
       },
       nb::arg("vx"), nb::arg("vy").none(), nb::arg("want_y"), nb::arg("max_iter"), nb::arg("rtol"),
       nb::arg("num_threads"))
      .def(
          "inverse_hvp",
          [](const S& s, In<T> g, int max_iter, double rtol, int inner_max_iter, double inner_rtol,
             int num_threads) {
            require(!s.div, "debias", "inverse_hvp is defined for OT (debias=False) only");
            const auto gv = matrix(g, "g");
            transport::InverseHvpOptions o;
            o.max_iter = max_iter;
            o.rtol = rtol;
            o.inner = hvp_options<T>(inner_max_iter, inner_rtol, num_threads);
            transport::InverseHvpResult<T> w =
                call_without_gil([&] { return transport::inverse_hvp(s.xy, gv, o); });
            return nb::make_tuple(to_numpy(std::move(w.x), {s.n(), s.d()}), w.iterations,
                                  w.converged, w.negative_curvature);
          },
          nb::arg("g"), nb::arg("max_iter"), nb::arg("rtol"), nb::arg("inner_max_iter"),
          nb::arg("inner_rtol"), nb::arg("num_threads"))
      .def(
          "implicit_gradient",
          [](const S& s, In<T> grad_f, In<T> grad_g, int max_iter, double rtol, int num_threads) {
            const auto gf = vector_view(std::optional<In<T>>(grad_f), "grad_f");
            const auto gg = vector_view(std::optional<In<T>>(grad_g), "grad_g");
            const auto o = hvp_options<T>(max_iter, rtol, num_threads);
            transport::Gradients<T> g =
                call_without_gil([&] { return transport::implicit_gradient(s.xy, gf, gg, o); });
            return gradients_tuple(std::move(g), s.n(), s.m(), s.d());
          },
          nb::arg("grad_f"), nb::arg("grad_g"), nb::arg("max_iter"), nb::arg("rtol"),
          nb::arg("num_threads"));
}

namespace {

template <class T>
void bind(nb::module_& m) {
  m.def("ot_solve", &solve<T>, nb::arg("x"), nb::arg("y"), nb::arg("a").none(), nb::arg("b").none(),
        nb::arg("cost"), nb::arg("reach_a").none(), nb::arg("reach_b").none(), nb::arg("epsilon"),
        nb::arg("debias"), nb::arg("x_labels").none(), nb::arg("y_labels").none(),
        nb::arg("label_cost").none(), nb::arg("label_weight"), nb::arg("options"),
        nb::arg("init_f").none() = nb::none(), nb::arg("init_g").none() = nb::none());

  m.def(
      "c_transform",
      [](In<T> x, In<T> y, In<T> g, std::optional<In<T>> a, std::optional<In<T>> b,
         const CostSpec& cost, int num_threads) {
        const auto xv = matrix(x, "x"), yv = matrix(y, "y");
        const auto gv = vector_view(std::optional<In<T>>(g), "g");
        const auto av = vector_view(a, "a"), bv = vector_view(b, "b");
        transport::CTransform<T> c = call_without_gil([&] {
          const transport::PointCloud<T> geometry(xv, yv, cost_from(cost));
          return transport::c_transform(geometry, gv, av, bv, num_threads);
        });
        const auto n = static_cast<std::size_t>(xv.rows), mm = static_cast<std::size_t>(yv.rows);
        const auto d = static_cast<std::size_t>(xv.cols);
        return nb::make_tuple(
            to_numpy(std::move(c.values), {n}), to_numpy(std::move(c.argmin), {n}), c.value,
            to_numpy(std::move(c.grad_x), {n, d}), to_numpy(std::move(c.grad_g), {mm}));
      },
      nb::arg("x"), nb::arg("y"), nb::arg("g"), nb::arg("a").none(), nb::arg("b").none(),
      nb::arg("cost"), nb::arg("num_threads"));
}

}  // namespace

template void second_order_methods(nb::class_<Solved<float>>&);
template void second_order_methods(nb::class_<Solved<double>>&);

void register_transport_ops(nb::module_& m) {
  bind<float>(m);
  bind<double>(m);
}

}  // namespace birkhoff::python
