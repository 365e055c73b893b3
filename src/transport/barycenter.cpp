#include "birkhoff/transport/barycenter.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "checks.hpp"
#include "inner.hpp"
#include "transport/backend.hpp"

namespace birkhoff::transport {
namespace {

/// Checks the K measures (clouds of one dimension, weights of one total mass) and the weights of
/// the measures; returns those weights normalised to sum 1 and the common mass.
template <class T>
std::pair<std::vector<double>, double> check_measures(
    std::span<const MatrixView<const T>> clouds, std::span<const std::span<const T>> cloud_weights,
    std::span<const double> weights, double epsilon) {
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
  for (std::size_t k = 1; k < clouds.size(); ++k)
    require(std::abs(masses[k] - masses[0]) <= 1e-5 * std::max(masses[k], masses[0]),
            "cloud_weights[" + std::to_string(k) + "]",
            "total mass " + std::to_string(masses[k]) + " differs from clouds[0]'s " +
                std::to_string(masses[0]));
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
  return {lambda, masses[0]};
}

template <class T>
std::vector<double> check(std::span<const MatrixView<const T>> clouds,
                          std::span<const std::span<const T>> cloud_weights,
                          std::span<const double> weights, MatrixView<const T> init,
                          std::span<const T> support_weights, double epsilon,
                          const BarycenterOptions& o) {
  auto [lambda, mass] = check_measures(clouds, cloud_weights, weights, epsilon);
  detail::check_points(init, "init");
  require(init.cols == clouds[0].cols, "init",
          "has dimension " + std::to_string(init.cols) + ", the clouds " +
              std::to_string(clouds[0].cols));
  const double support_mass =
      detail::check_weights(support_weights, init.rows, "support_weights", "init");
  require(std::abs(mass - support_mass) <= 1e-5 * std::max(mass, support_mass),
          cloud_weights.empty() ? "support_weights" : "cloud_weights[0]",
          "total mass " + std::to_string(mass) + " of the clouds differs from the support's " +
              std::to_string(support_mass));
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
      // Warm-started only after a small move of the support (RMS at most a fifth of the blur):
      // after a larger one a cold start, annealed on coarse levels, takes fewer iterations.
      const bool warm = previous[k] && std::sqrt(r.displacement / static_cast<double>(n)) <=
                                           0.2 * std::sqrt(epsilon);
      const SinkhornOptions so =
          detail::inner_options<T>(options.marginal_tol, SinkhornOptions{}.max_iter,
                                   options.num_threads, warm ? &*previous[k] : nullptr);
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

namespace {

template <class T>
std::vector<double> to_double(MatrixView<const T> p) {
  std::vector<double> out(static_cast<std::size_t>(p.rows * p.cols));
  for (std::int64_t i = 0; i < p.rows; ++i)
    for (std::int64_t c = 0; c < p.cols; ++c)
      out[static_cast<std::size_t>(i * p.cols + c)] = static_cast<double>(p(i, c));
  return out;
}

/// One geometry between two clouds with its streamed passes, rows `x` against columns `y`:
/// log_kernel computes LSE_j(-C_ij / eps + h_j + log w_j) for every row i, w the columns'
/// weights and h a log-scaling of the columns.
struct Kernel {
  PointCloud<double> geometry;
  detail::Weights<double> row_weights, col_weights;
  detail::Side<double> rows, cols;
  std::unique_ptr<detail::Passes<double>> passes;
  detail::LseOut<double> scratch;
  std::vector<double> col_hat, row_hat, out_hat;

  Kernel(MatrixView<const double> x, MatrixView<const double> y, const Cost& cost,
         std::span<const double> x_weights, std::span<const double> y_weights, int threads)
      : geometry(x, y, cost),
        row_weights(detail::make_weights(x_weights, x.rows)),
        col_weights(detail::make_weights(y_weights, y.rows)),
        rows(detail::x_side(geometry, row_weights)),
        cols(detail::y_side(geometry, col_weights)),
        passes(detail::dense_backend<double>().passes(rows, cols, cost->kappa(), threads)) {}

  // Rows against columns (forward) or columns against rows.
  void log_kernel(bool forward, const std::vector<double>& h, double eps,
                  std::vector<double>& out) {
    const auto& r = forward ? rows : cols;
    const auto& c = forward ? cols : rows;
    col_hat.resize(h.size());
    for (std::size_t j = 0; j < h.size(); ++j) col_hat[j] = eps * h[j] - c.sqnorm[j];
    row_hat.assign(static_cast<std::size_t>(r.n), 0.0);
    detail::softmin<double>(*passes, forward ? detail::Axis::X : detail::Axis::Y,
                            forward ? detail::Axis::Y : detail::Axis::X, row_hat, col_hat, eps,
                            scratch, out_hat);
    out.resize(out_hat.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = -(out_hat[i] + r.sqnorm[i]) / eps;
  }
};

// A Kernel whose geometry or weight errors name the barycenter's arguments (its x, y and a
// are a measure, the support and the measure's weights).
std::unique_ptr<Kernel> named_kernel(MatrixView<const double> x, MatrixView<const double> y,
                                     const Cost& cost, std::span<const double> x_weights,
                                     int threads, const std::string& x_name,
                                     const std::string& a_name) {
  const std::vector<double> ones(static_cast<std::size_t>(y.rows), 1.0);
  try {
    return std::make_unique<Kernel>(x, y, cost, x_weights, ones, threads);
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    for (const auto& [core, front] : {std::pair<std::string, std::string>{"x: ", x_name + ": "},
                                      {"y: ", "support: "},
                                      {"a: ", a_name + ": "}})
      if (what.rfind(core, 0) == 0) throw InvalidInput(front + what.substr(core.size()));
    throw;
  }
}

}  // namespace

template <class T>
FixedBarycenterResult<T> fixed_support_barycenter(MatrixView<const T> support,
                                                  std::span<const MatrixView<const T>> clouds,
                                                  std::span<const std::span<const T>> cloud_weights,
                                                  std::span<const double> weights, double epsilon,
                                                  const Cost& cost,
                                                  const FixedBarycenterOptions& options) {
  detail::check_points(support, "support");
  const auto [lambda, mass] = check_measures(clouds, cloud_weights, weights, epsilon);
  require(support.cols == clouds[0].cols, "support",
          "has dimension " + std::to_string(support.cols) + ", the clouds " +
              std::to_string(clouds[0].cols));
  require(options.max_iter >= 1, "max_iter", "must be >= 1");
  require(std::isfinite(options.tol) && options.tol >= 0, "tol", "must be >= 0");
  require(options.num_threads >= 0, "num_threads", "must be >= 0");
  const int threads = resolve_threads(options.num_threads);
  const std::int64_t n = support.rows, d = support.cols;
  const auto K = clouds.size();
  const std::vector<double> xs = to_double(support);
  const MatrixView<const double> xv{xs.data(), n, d};
  const std::vector<double> ones(static_cast<std::size_t>(n), 1.0);

  // Measure k on the rows, the support on the columns (unit weights: q is in the scaling).
  std::vector<std::vector<double>> ys(K), as(K);
  std::vector<std::unique_ptr<Kernel>> kernels;
  for (std::size_t k = 0; k < K; ++k) {
    ys[k] = to_double(clouds[k]);
    if (!cloud_weights.empty())
      for (T w : cloud_weights[k]) as[k].push_back(static_cast<double>(w));
    const std::string index = "[" + std::to_string(k) + "]";
    kernels.push_back(named_kernel(MatrixView<const double>{ys[k].data(), clouds[k].rows, d}, xv,
                                   cost, as[k], threads, "clouds" + index,
                                   "cloud_weights" + index));
  }
  std::unique_ptr<Kernel> self;
  if (options.debias) self = named_kernel(xv, xv, cost, ones, threads, "support", "support");

  // Log-scalings: psi_k on measure k (u_k = a_k exp(psi_k)), gamma_k on the support, c = log d.
  const auto N = static_cast<std::size_t>(n);
  std::vector<std::vector<double>> psi(K), gamma(K, std::vector<double>(N, 0.0)), L(K);
  std::vector<double> c(N, 0.0), log_q(N), lk;
  FixedBarycenterResult<T> r;
  r.n = n, r.measures = static_cast<std::int64_t>(K);
  for (int it = 0; it < options.max_iter; ++it) {
    for (std::size_t k = 0; k < K; ++k) {
      kernels[k]->log_kernel(true, gamma[k], epsilon, lk);
      psi[k].resize(lk.size());
      for (std::size_t i = 0; i < lk.size(); ++i) psi[k][i] = -lk[i];
      kernels[k]->log_kernel(false, psi[k], epsilon, L[k]);
    }
    // q's relative change since the last iteration covers the debiasing potential's drift
    // where q has mass (where it has none, c may drift without changing anything).
    double total = 0, error = 0, q_change = 0;
    for (std::size_t j = 0; j < N; ++j) {
      double s = c[j];
      for (std::size_t k = 0; k < K; ++k) s += lambda[k] * L[k][j];
      total += std::exp(s);
      q_change += std::abs(std::exp(s) - (it == 0 ? 0.0 : std::exp(log_q[j])));
      log_q[j] = s;
    }
    // Each plan's marginal on the support, exp(gamma_k + L_k), against q.
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t j = 0; j < N; ++j) {
        error += lambda[k] * std::abs(std::exp(gamma[k][j] + L[k][j]) - std::exp(log_q[j]));
        gamma[k][j] = log_q[j] - L[k][j];
      }
    if (self) {
      self->log_kernel(true, c, epsilon, lk);
      for (std::size_t j = 0; j < N; ++j) c[j] = 0.5 * (c[j] + log_q[j] - lk[j]);
    }
    r.marginal_error = total > 0 ? error / total : error;
    r.iterations = it + 1;
    report_progress(options.progress, ProgressInfo{"barycenter", it + 1, options.max_iter, epsilon,
                                                   r.marginal_error});
    require(std::isfinite(r.marginal_error), "epsilon",
            "the barycenter iteration overflowed at epsilon " + std::to_string(epsilon));
    if (r.marginal_error <= options.tol && q_change <= options.tol * total) {
      r.converged = true;
      break;
    }
  }
  r.weights.resize(N);
  for (std::size_t j = 0; j < N; ++j) r.weights[j] = static_cast<T>(std::exp(log_q[j]));

  // The objective, each term from converged solves between (X, q) and measure k.
  std::vector<double> q(N);
  double q_total = 0;
  for (std::size_t j = 0; j < N; ++j) q_total += q[j] = std::exp(log_q[j]);
  for (double& v : q) v *= mass / q_total;
  r.losses.assign(K, 0.0);
  for (std::size_t k = 0; k < K; ++k) {
    OtProblem<double> problem;
    problem.geometry = PointCloud<double>(xv, {ys[k].data(), clouds[k].rows, d}, cost);
    problem.a = q;
    problem.b = as[k];
    problem.epsilon = epsilon;
    SinkhornOptions so = detail::inner_options<double>(1e-7, SinkhornOptions{}.max_iter,
                                                       options.num_threads, nullptr);
    r.losses[k] =
        options.debias ? sinkhorn_divergence(problem, so).loss() : sinkhorn(problem, so).loss();
    r.loss += lambda[k] * r.losses[k];
  }
  return r;
}

#define BIRKHOFF_INSTANTIATE(T)                                                          \
  template BarycenterResult<T> barycenter<T>(                                            \
      std::span<const MatrixView<const T>>, std::span<const std::span<const T>>,         \
      std::span<const double>, MatrixView<const T>, std::span<const T>, double,          \
      const BarycenterOptions&);                                                         \
  template FixedBarycenterResult<T> fixed_support_barycenter<T>(                         \
      MatrixView<const T>, std::span<const MatrixView<const T>>,                         \
      std::span<const std::span<const T>>, std::span<const double>, double, const Cost&, \
      const FixedBarycenterOptions&);
BIRKHOFF_INSTANTIATE(float)
BIRKHOFF_INSTANTIATE(double)
#undef BIRKHOFF_INSTANTIATE

}  // namespace birkhoff::transport
