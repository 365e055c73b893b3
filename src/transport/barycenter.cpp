#include "birkhoff/transport/barycenter.hpp"

#include <cmath>
#include <optional>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "checks.hpp"
#include "inner.hpp"

namespace birkhoff::transport {
namespace {

template <class T>
std::vector<double> check(std::span<const MatrixView<const T>> clouds,
                          std::span<const std::span<const T>> cloud_weights,
                          std::span<const double> weights, MatrixView<const T> init,
                          std::span<const T> support_weights, double epsilon,
                          const BarycenterOptions& o) {
  require(!clouds.empty(), "clouds", "needs at least one point cloud");
  require(cloud_weights.empty() || cloud_weights.size() == clouds.size(), "cloud_weights",
          "has " + std::to_string(cloud_weights.size()) + " entries for " +
              std::to_string(clouds.size()) + " clouds");
  std::vector<double> masses;
  for (std::size_t k = 0; k < clouds.size(); ++k) {
    const std::string name = "clouds[" + std::to_string(k) + "]";
    detail::check_points(clouds[k], name.c_str());
    require(clouds[k].cols == clouds[0].cols, name,
            "has dimension " + std::to_string(clouds[k].cols) + ", clouds[0] " +
                std::to_string(clouds[0].cols));
    const std::string wname = "cloud_weights[" + std::to_string(k) + "]";
    masses.push_back(
        detail::check_weights(cloud_weights.empty() ? std::span<const T>{} : cloud_weights[k],
                              clouds[k].rows, wname.c_str(), name.c_str()));
  }
  detail::check_points(init, "init");
  require(init.cols == clouds[0].cols, "init",
          "has dimension " + std::to_string(init.cols) + ", the clouds " +
              std::to_string(clouds[0].cols));
  const double mass = detail::check_weights(support_weights, init.rows, "support_weights", "init");
  for (std::size_t k = 0; k < clouds.size(); ++k)
    require(std::abs(masses[k] - mass) <= 1e-5 * std::max(masses[k], mass),
            "cloud_weights[" + std::to_string(k) + "]",
            "total mass " + std::to_string(masses[k]) + " differs from the support's " +
                std::to_string(mass));
  std::vector<double> lambda(clouds.size(), 1.0 / static_cast<double>(clouds.size()));
  if (!weights.empty()) {
    require(weights.size() == clouds.size(), "weights",
            "has " + std::to_string(weights.size()) + " entries for " +
                std::to_string(clouds.size()) + " clouds");
    double total = 0;
    for (double w : weights) {
      require(std::isfinite(w) && w >= 0, "weights", "must be finite and >= 0");
      total += w;
    }
    require(total > 0, "weights", "must not all be zero");
    for (std::size_t k = 0; k < weights.size(); ++k) lambda[k] = weights[k] / total;
  }
  require(std::isfinite(epsilon) && epsilon > 0, "epsilon",
          "must be positive and finite, got " + std::to_string(epsilon));
  require(o.max_iter >= 1, "max_iter", "must be >= 1");
  require(std::isfinite(o.tol) && o.tol >= 0, "tol", "must be >= 0");
  require(std::isfinite(o.marginal_tol) && o.marginal_tol >= 0, "marginal_tol", "must be >= 0");
  require(o.num_threads >= 0, "num_threads", "must be >= 0");
  return lambda;
}

}  // namespace

template <class T>
BarycenterResult<T> barycenter(std::span<const MatrixView<const T>> clouds,
                               std::span<const std::span<const T>> cloud_weights,
                               std::span<const double> weights, MatrixView<const T> init,
                               std::span<const T> support_weights, double epsilon,
                               const BarycenterOptions& options) {
  const std::vector<double> lambda =
      check(clouds, cloud_weights, weights, init, support_weights, epsilon, options);
  BarycenterResult<T> r;
  r.n = init.rows, r.d = init.cols, r.measures = static_cast<std::int64_t>(clouds.size());
  const std::int64_t n = r.n, d = r.d;
  r.points.resize(static_cast<std::size_t>(n * d));
  for (std::int64_t i = 0; i < n; ++i) std::copy_n(init.row(i), d, r.points.begin() + i * d);
  std::vector<double> b(static_cast<std::size_t>(n), 1.0 / static_cast<double>(n));
  if (!support_weights.empty()) b.assign(support_weights.begin(), support_weights.end());
  std::vector<std::optional<Solution<T>>> previous(clouds.size());
  std::vector<double> next(static_cast<std::size_t>(n * d));
  std::vector<T> moved;
  for (int it = 0; it < options.max_iter; ++it) {
    std::fill(next.begin(), next.end(), 0.0);
    r.losses.assign(clouds.size(), 0.0);
    bool all_converged = true;
    for (std::size_t k = 0; k < clouds.size(); ++k) {
      OtProblem<T> problem;
      problem.geometry = PointCloud<T>({r.points.data(), n, d}, clouds[k], Cost::sqeuclidean());
      problem.a = support_weights;
      if (!cloud_weights.empty()) problem.b = cloud_weights[k];
      problem.epsilon = epsilon;
      // The support moved a little: the last potentials are close.
      const SinkhornOptions so =
          detail::inner_options<T>(options.marginal_tol, SinkhornOptions{}.max_iter,
                                   options.num_threads, previous[k] ? &*previous[k] : nullptr);
      const Solution<T> sol = sinkhorn(problem, so);
      r.inner_iterations += sol.report().iterations;
      all_converged = all_converged && sol.converged();
      r.losses[k] = sol.loss();
      // (T_k Y_k)_i / b_i, POT's update.
      moved.assign(static_cast<std::size_t>(n * d), T(0));
      sol.apply(clouds[k], {moved.data(), n, d});
      // A support point of weight 0 carries no plan row: it stays where it is.
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t c = 0; c < d; ++c) {
          const auto e = static_cast<std::size_t>(i * d + c);
          const double bi = b[static_cast<std::size_t>(i)];
          next[e] += lambda[k] * (bi > 0 ? static_cast<double>(moved[e]) / bi
                                         : static_cast<double>(r.points[e]));
        }
      previous[k] = sol;
    }
    double shift = 0;
    for (std::size_t e = 0; e < next.size(); ++e) {
      const double delta = next[e] - static_cast<double>(r.points[e]);
      shift += delta * delta;
      r.points[e] = static_cast<T>(next[e]);
    }
    r.displacement = shift;
    r.iterations = it + 1;
    r.loss = 0;
    for (std::size_t k = 0; k < clouds.size(); ++k) r.loss += lambda[k] * r.losses[k];
    ProgressInfo info{"barycenter", it + 1, options.max_iter, epsilon, shift};
    report_progress(options.progress, info);
    if (shift <= options.tol) {
      r.converged = all_converged;
      break;
    }
  }
  return r;
}

#define BIRKHOFF_INSTANTIATE(T)                                                  \
  template BarycenterResult<T> barycenter<T>(                                    \
      std::span<const MatrixView<const T>>, std::span<const std::span<const T>>, \
      std::span<const double>, MatrixView<const T>, std::span<const T>, double,  \
      const BarycenterOptions&);
BIRKHOFF_INSTANTIATE(float)
BIRKHOFF_INSTANTIATE(double)
#undef BIRKHOFF_INSTANTIATE

}  // namespace birkhoff::transport
