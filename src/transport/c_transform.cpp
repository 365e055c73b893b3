#include "birkhoff/transport/c_transform.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "birkhoff/core/error.hpp"
#include "transport/backend.hpp"
#include "transport/streams.hpp"

namespace birkhoff::transport {
namespace {

template <class T>
std::vector<double> weights(std::span<const T> w, std::int64_t count, const char* name) {
  require(w.empty() || static_cast<std::int64_t>(w.size()) == count, name,
          "must have length " + std::to_string(count));
  std::vector<double> out(static_cast<std::size_t>(count), 1.0 / static_cast<double>(count));
  for (std::size_t i = 0; i < w.size(); ++i) {
    require(std::isfinite(static_cast<double>(w[i])) && w[i] >= 0, name,
            "weights must be finite and >= 0");
    out[i] = w[i];
  }
  return out;
}

}  // namespace

template <class T>
CTransform<T> c_transform(const PointCloud<T>& geometry, std::span<const T> g, std::span<const T> a,
                          std::span<const T> b, int num_threads) {
  require(!geometry.empty(), "geometry", "is empty: build a PointCloud from x and y");
  require(geometry.num_labels() == 0, "geometry",
          "the hard c-transform does not support the label-augmented cost");
  const std::int64_t n = geometry.n(), m = geometry.m(), d = geometry.dim();
  require(static_cast<std::int64_t>(g.size()) == m, "g",
          "must have length m = " + std::to_string(m));
  for (std::size_t j = 0; j < g.size(); ++j)
    require(std::isfinite(static_cast<double>(g[j])), "g",
            "non-finite entry at " + std::to_string(j));
  const auto wa = weights(a, n, "a");
  const auto wb = weights(b, m, "b");
  const auto& cost = geometry.cost();
  const double kappa = cost->kappa();
  // c_i = alpha_i + min_j [(beta_j - g_j) - kappa <u_i, v_j>] on the centred features, or
  // min_j [kappa |u_i - v_j|^p - g_j] for the distance-power form: the dense backend's minimum
  // against the shifted potential g - beta.
  const detail::Weights<T> ua = detail::make_weights(std::span<const T>(), n);
  const detail::Weights<T> ub = detail::make_weights(std::span<const T>(), m);
  const auto rows = detail::x_side(geometry, ua), cols = detail::y_side(geometry, ub);
  const std::vector<T> g_hat = detail::shifted<T>(g, cols.sqnorm);
  CTransform<T> out;
  detail::dense_backend<T>()
      .passes(rows, cols, kappa, num_threads)
      ->min(detail::Axis::X, detail::Axis::Y, g_hat, out.values, out.argmin);
  out.grad_x.resize(static_cast<std::size_t>(n * d));
  out.grad_g.assign(wb.begin(), wb.end());
  const auto x = geometry.x(), y = geometry.y();
  const auto scale = geometry.x_scale();
  const auto centre = geometry.centre();
  std::vector<double> u(static_cast<std::size_t>(d)), v(u.size()), grad(u.size());
  double value = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    out.values[si] = static_cast<T>(out.values[si] + geometry.x_sqnorm()[si]);
    value += wa[si] * out.values[si];
    const std::int64_t j = out.argmin[si];
    out.grad_g[static_cast<std::size_t>(j)] =
        static_cast<T>(out.grad_g[static_cast<std::size_t>(j)] - wa[si]);
    std::copy_n(x.row(i), d, u.begin());
    std::copy_n(y.row(j), d, v.begin());
    cost->feature_gradient(u.data(), v.data(), d, grad.data());
    if (!scale.empty()) {
      for (std::int64_t k = 0; k < d; ++k)
        u[static_cast<std::size_t>(k)] += centre[static_cast<std::size_t>(k)];
      cost->pullback(u, scale[si], grad);
    }
    for (std::int64_t k = 0; k < d; ++k)
      out.grad_x[static_cast<std::size_t>(i * d + k)] =
          static_cast<T>(wa[si] * grad[static_cast<std::size_t>(k)]);
  }
  for (std::int64_t j = 0; j < m; ++j)
    value += wb[static_cast<std::size_t>(j)] * g[static_cast<std::size_t>(j)];
  out.value = value;
  return out;
}

template CTransform<float> c_transform(const PointCloud<float>&, std::span<const float>,
                                       std::span<const float>, std::span<const float>, int);
template CTransform<double> c_transform(const PointCloud<double>&, std::span<const double>,
                                        std::span<const double>, std::span<const double>, int);

}  // namespace birkhoff::transport
