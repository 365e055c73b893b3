// Bindings of the sliced Wasserstein distance: one call, its result as a dict of the described
// fields and arrays (the CLI's JSON keys and .npz members).
#include "birkhoff/transport/sliced.hpp"

#include <nanobind/stl/optional.h>

#include "arrays.hpp"
#include "birkhoff/transport/describe.hpp"
#include "describe.hpp"

namespace birkhoff::python {
namespace {

template <class T>
nb::dict sliced(In<T> x, In<T> y, std::optional<In<T>> a, std::optional<In<T>> b,
                std::optional<In<T>> projections, bool gradients, const nb::dict& options) {
  const auto o = options_from_kwargs<transport::SlicedOptions>(options);
  const auto xv = matrix(x, "x"), yv = matrix(y, "y");
  const auto av = vector_view(a, "a"), bv = vector_view(b, "b");
  MatrixView<const T> dirs;
  if (projections) dirs = matrix(*projections, "projections");
  auto r = call_without_gil(
      [&] { return transport::sliced_wasserstein<T>(xv, yv, av, bv, o, dirs, gradients); });
  nb::dict d = to_dict(r);
  move_arrays(std::move(r), d);
  return d;
}

template <class T>
void bind(nb::module_& m) {
  m.def("sliced_wasserstein", &sliced<T>, nb::arg("x"), nb::arg("y"), nb::arg("a").none(),
        nb::arg("b").none(), nb::arg("projections").none(), nb::arg("gradients"),
        nb::arg("options"));
}

}  // namespace

void register_sliced(nb::module_& m) {
  bind<float>(m);
  bind<double>(m);
  m.def("random_directions", &transport::random_directions<double>, nb::arg("d"), nb::arg("count"),
        nb::arg("seed"));
}

}  // namespace birkhoff::python
