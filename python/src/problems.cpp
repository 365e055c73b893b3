// Bindings of the problems beside the two-measure solver (sliced Wasserstein, Gromov-Wasserstein):
// one call each, the result as a dict of the described fields and arrays (the CLI's JSON keys
// and .npz members).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "arrays.hpp"
#include "birkhoff/transport/barycenter.hpp"
#include "birkhoff/transport/describe.hpp"
#include "birkhoff/transport/gromov.hpp"
#include "birkhoff/transport/sliced.hpp"
#include "describe.hpp"
#include "solved.hpp"

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

nb::dict gromov(In<double> x, In<double> y, std::optional<In<double>> a,
                std::optional<In<double>> b, double epsilon, std::optional<In<double>> features_x,
                std::optional<In<double>> features_y, std::optional<In<double>> init,
                bool gradients, bool plan, nb::object progress, const nb::dict& options) {
  auto o = options_from_kwargs<transport::GromovOptions>(options);
  o.progress = progress_with_signals(progress);
  const auto xv = matrix(x, "x"), yv = matrix(y, "y");
  const auto av = vector_view(a, "a"), bv = vector_view(b, "b");
  MatrixView<const double> fx, fy, t0;
  if (features_x) fx = matrix(*features_x, "features_x");
  if (features_y) fy = matrix(*features_y, "features_y");
  if (init) t0 = matrix(*init, "init");
  auto r = call_without_gil([&] {
    return transport::gromov_wasserstein(xv, yv, av, bv, epsilon, o, fx, fy, t0, gradients, plan);
  });
  nb::dict d = to_dict(r);
  move_arrays(std::move(r), d);
  return d;
}

template <class T>
std::vector<MatrixView<const T>> cloud_views(const std::vector<In<T>>& clouds) {
  std::vector<MatrixView<const T>> views;
  for (std::size_t k = 0; k < clouds.size(); ++k) {
    std::string name = "clouds[";
    name += std::to_string(k);
    name += "]";
    views.push_back(matrix(clouds[k], name.c_str()));
  }
  return views;
}

template <class T>
nb::dict barycenter(const std::vector<In<T>>& clouds, const std::vector<In<T>>& cloud_weights,
                    std::optional<In<double>> weights, In<T> init,
                    std::optional<In<T>> support_weights, double epsilon, nb::object progress,
                    const nb::dict& options) {
  auto o = options_from_kwargs<transport::BarycenterOptions>(options);
  o.progress = progress_with_signals(progress);
  const auto views = cloud_views(clouds);
  std::vector<std::span<const T>> wviews;
  for (const auto& w : cloud_weights) wviews.emplace_back(w.data(), w.size());
  const auto lambda = vector_view(weights, "weights");
  const auto b = vector_view(support_weights, "support_weights");
  const auto x0 = matrix(init, "init");
  auto r = call_without_gil(
      [&] { return transport::barycenter<T>(views, wviews, lambda, x0, b, epsilon, o); });
  nb::dict d = to_dict(r);
  move_arrays(std::move(r), d);
  return d;
}

template <class T>
nb::dict fixed_barycenter(In<T> support, const std::vector<In<T>>& clouds,
                          const std::vector<In<T>>& cloud_weights,
                          std::optional<In<double>> weights, double epsilon, const CostSpec& cost,
                          nb::object progress, const nb::dict& options) {
  auto o = options_from_kwargs<transport::FixedBarycenterOptions>(options);
  o.progress = progress_with_signals(progress);
  const auto x = matrix(support, "support");
  const auto views = cloud_views(clouds);
  std::vector<std::span<const T>> wviews;
  for (const auto& w : cloud_weights) wviews.emplace_back(w.data(), w.size());
  const auto lambda = vector_view(weights, "weights");
  const auto c = cost_from(cost);
  auto r = call_without_gil([&] {
    return transport::fixed_support_barycenter<T>(x, views, wviews, lambda, epsilon, c, o);
  });
  nb::dict d = to_dict(r);
  move_arrays(std::move(r), d);
  return d;
}

template <class T>
void bind(nb::module_& m) {
  m.def("fixed_support_barycenter", &fixed_barycenter<T>, nb::arg("support"), nb::arg("clouds"),
        nb::arg("cloud_weights"), nb::arg("weights").none(), nb::arg("epsilon"), nb::arg("cost"),
        nb::arg("progress").none(), nb::arg("options"));
  m.def("barycenter", &barycenter<T>, nb::arg("clouds"), nb::arg("cloud_weights"),
        nb::arg("weights").none(), nb::arg("init"), nb::arg("support_weights").none(),
        nb::arg("epsilon"), nb::arg("progress").none(), nb::arg("options"));
  m.def("sliced_wasserstein", &sliced<T>, nb::arg("x"), nb::arg("y"), nb::arg("a").none(),
        nb::arg("b").none(), nb::arg("projections").none(), nb::arg("gradients"),
        nb::arg("options"));
}

}  // namespace

void register_problems(nb::module_& m) {
  bind<float>(m);
  bind<double>(m);
  m.def("describe_sliced_options", &describe_options<transport::SlicedOptions>);
  m.def("describe_gromov_options", &describe_options<transport::GromovOptions>);
  m.def("describe_barycenter_options", &describe_options<transport::BarycenterOptions>);
  m.def("describe_fixed_barycenter_options", &describe_options<transport::FixedBarycenterOptions>);
  m.def("gromov_wasserstein", &gromov, nb::arg("x"), nb::arg("y"), nb::arg("a").none(),
        nb::arg("b").none(), nb::arg("epsilon"), nb::arg("features_x").none(),
        nb::arg("features_y").none(), nb::arg("init").none(), nb::arg("gradients"), nb::arg("plan"),
        nb::arg("progress").none(), nb::arg("options"));
  m.def("random_directions", &transport::random_directions<double>, nb::arg("d"), nb::arg("count"),
        nb::arg("seed"));
}

}  // namespace birkhoff::python
