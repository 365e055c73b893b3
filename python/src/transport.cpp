// Bindings of birkhoff::transport: thin wrappers, GIL released while solving.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arrays.hpp"
#include "birkhoff/transport/plan.hpp"
#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::python {
namespace {

using transport::Cost;
using transport::OtProblem;

/// A solved problem: keeps the input arrays alive (no copy) with the result.
template <class T>
struct Solution {
  In<T> x, y;
  std::optional<In<T>> a, b;
  OtProblem<T> problem;
  transport::DivergenceResult<T> result;
  bool debias = false;
  int threads = 0;

  transport::TransportPlan<T> plan() const { return {problem, result.xy, threads}; }
};

template <class T>
nb::ndarray<nb::numpy, T> copy_vector(const std::vector<T>& v) {
  return to_numpy(std::vector<T>(v), {v.size()});
}

template <class T>
Solution<T> solve(In<T> x, In<T> y, std::optional<In<T>> a, std::optional<In<T>> b, bool half_cost,
                  std::optional<double> reach_a, std::optional<double> reach_b, double blur,
                  double scaling, std::optional<double> diameter, std::vector<double> epsilons,
                  int iterations, const std::string& update, bool last_extrapolation,
                  std::optional<double> tol, int check_every, double marginal_tol, int num_threads,
                  bool debias, nb::object progress) {
  Solution<T> s{x, y, a, b, {}, {}, debias, num_threads};
  s.problem.x = matrix(s.x, "x");
  s.problem.y = matrix(s.y, "y");
  s.problem.a = vector_view(s.a, "a");
  s.problem.b = vector_view(s.b, "b");
  s.problem.cost = half_cost ? Cost::HalfSqEuclidean : Cost::SqEuclidean;
  s.problem.reach_a = reach_a;
  s.problem.reach_b = reach_b;
  require(update == "symmetric" || update == "alternating", "update",
          "must be 'symmetric' or 'alternating', got '" + update + "'");
  transport::SinkhornOptions o;
  o.blur = blur;
  o.scaling = scaling;
  o.diameter = diameter;
  o.epsilons = std::move(epsilons);
  o.iterations = iterations;
  o.update = update == "alternating" ? transport::Update::Alternating : transport::Update::Symmetric;
  o.last_extrapolation = last_extrapolation;
  o.tol = tol;
  o.check_every = check_every;
  o.marginal_tol = marginal_tol;
  o.num_threads = num_threads;
  o.progress = progress_with_signals(progress);
  {
    nb::gil_scoped_release release;
    if (debias) {
      s.result = transport::sinkhorn_divergence(s.problem, o);
    } else {
      s.result.xy = transport::sinkhorn(s.problem, o);
      s.result.loss = s.result.xy.loss;
    }
  }
  return s;
}

template <class T>
nb::ndarray<nb::numpy, T> apply(const Solution<T>& s, In<T> v, bool transpose) {
  const char* name = transpose ? "u" : "v";
  const auto view = matrix(v, name);
  const std::int64_t rows = transpose ? s.problem.y.rows : s.problem.x.rows;
  std::vector<T> out(static_cast<std::size_t>(rows * view.cols));
  {
    nb::gil_scoped_release release;
    const auto plan = s.plan();
    if (transpose) {
      plan.apply_transpose(view, MatrixView<T>(out.data(), rows, view.cols));
    } else {
      plan.apply(view, MatrixView<T>(out.data(), rows, view.cols));
    }
  }
  if (v.ndim() == 1) return to_numpy(std::move(out), {static_cast<std::size_t>(rows)});
  return to_numpy(std::move(out), {static_cast<std::size_t>(rows), static_cast<std::size_t>(view.cols)});
}

template <class T>
void bind(nb::module_& m, const char* name) {
  nb::class_<Solution<T>>(m, name)
      .def_prop_ro("loss", [](const Solution<T>& s) { return s.result.loss; })
      .def_prop_ro("f", [](const Solution<T>& s) { return copy_vector(s.result.xy.f); }, nb::rv_policy::move)
      .def_prop_ro("g", [](const Solution<T>& s) { return copy_vector(s.result.xy.g); }, nb::rv_policy::move)
      .def_prop_ro("f_aa", [](const Solution<T>& s) { return copy_vector(s.result.f_aa); }, nb::rv_policy::move)
      .def_prop_ro("g_bb", [](const Solution<T>& s) { return copy_vector(s.result.g_bb); }, nb::rv_policy::move)
      .def_prop_ro("transport_cost", [](const Solution<T>& s) { return s.result.xy.transport_cost; })
      .def_prop_ro("epsilon", [](const Solution<T>& s) { return s.result.xy.epsilon; })
      .def_prop_ro("iterations", [](const Solution<T>& s) { return s.result.xy.iterations; })
      .def_prop_ro("converged", [](const Solution<T>& s) { return s.result.xy.converged; })
      .def_prop_ro("stopped_early", [](const Solution<T>& s) { return s.result.xy.stopped_early; })
      .def_prop_ro("marginal_error", [](const Solution<T>& s) { return s.result.xy.marginal_error; })
      .def_prop_ro("errors", [](const Solution<T>& s) { return s.result.xy.errors; })
      .def_prop_ro("debias", [](const Solution<T>& s) { return s.debias; })
      .def("apply", [](const Solution<T>& s, In<T> v) { return apply(s, v, false); }, nb::arg("v"))
      .def("apply_transpose", [](const Solution<T>& s, In<T> u) { return apply(s, u, true); }, nb::arg("u"))
      .def("row_marginal", [](const Solution<T>& s) {
        std::vector<T> mass;
        {
          nb::gil_scoped_release release;
          mass = s.plan().row_marginal();
        }
        const std::size_t count = mass.size();
        return to_numpy(std::move(mass), {count});
      })
      .def("col_marginal", [](const Solution<T>& s) {
        std::vector<T> mass;
        {
          nb::gil_scoped_release release;
          mass = s.plan().col_marginal();
        }
        const std::size_t count = mass.size();
        return to_numpy(std::move(mass), {count});
      })
      .def("barycentric_map", [](const Solution<T>& s) {
        std::vector<T> map;
        {
          nb::gil_scoped_release release;
          map = s.plan().barycentric_map();
        }
        return to_numpy(std::move(map), {static_cast<std::size_t>(s.problem.x.rows),
                                         static_cast<std::size_t>(s.problem.x.cols)});
      })
      .def("dense_plan", [](const Solution<T>& s) {
        std::vector<T> p;
        {
          nb::gil_scoped_release release;
          p = s.plan().dense();
        }
        return to_numpy(std::move(p), {static_cast<std::size_t>(s.problem.x.rows),
                                       static_cast<std::size_t>(s.problem.y.rows)});
      })
      .def("gradients", [](const Solution<T>& s) {
        transport::Gradients<T> g;
        {
          nb::gil_scoped_release release;
          g = s.debias ? transport::gradients(s.problem, s.result, s.threads)
                       : transport::gradients(s.problem, s.result.xy, s.threads);
        }
        const auto n = static_cast<std::size_t>(s.problem.x.rows);
        const auto m = static_cast<std::size_t>(s.problem.y.rows);
        const auto d = static_cast<std::size_t>(s.problem.x.cols);
        return nb::make_tuple(to_numpy(std::move(g.x), {n, d}), to_numpy(std::move(g.y), {m, d}),
                              to_numpy(std::move(g.a), {n}), to_numpy(std::move(g.b), {m}));
      });

  m.def("sinkhorn", &solve<T>, nb::arg("x"), nb::arg("y"), nb::arg("a").none(),
        nb::arg("b").none(), nb::arg("half_cost"), nb::arg("reach_a").none(),
        nb::arg("reach_b").none(), nb::arg("blur"), nb::arg("scaling"),
        nb::arg("diameter").none(), nb::arg("epsilons"), nb::arg("iterations"), nb::arg("update"),
        nb::arg("last_extrapolation"), nb::arg("tol").none(), nb::arg("check_every"),
        nb::arg("marginal_tol"), nb::arg("num_threads"), nb::arg("debias"),
        nb::arg("progress").none());
}

}  // namespace

void register_transport(nb::module_& m) {
  bind<float>(m, "Solution32");
  bind<double>(m, "Solution64");
}

}  // namespace birkhoff::python
