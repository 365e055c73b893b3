// PRIVATE: the shared machinery of the streaming solvers: centred copies of the clouds, folded
// squared norms, log-weights, and the soft c-transform as one call of kernels::row_lse.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "birkhoff/kernels/lse.hpp"
#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport::detail {

inline constexpr double kLog2e = 1.4426950408889634;
inline constexpr double kLn2 = 0.6931471805599453;

inline double cost_scale(Cost cost) { return cost == Cost::HalfSqEuclidean ? 0.5 : 1.0; }

/// One weighted cloud, translated by a common centre (the cost, potentials and plan do not
/// change; fp32 cancellation in |x|^2 + |y|^2 - 2<x,y> does).
template <class T>
struct Cloud {
  std::int64_t n = 0, d = 0;
  std::vector<T> points;   // (n, d) centred
  std::vector<T> sqnorm;   // cs |x_i|^2 (alpha)
  std::vector<T> weights;  // a_i
  std::vector<T> logw;     // log a_i, -inf for a zero weight
  double mass = 0;
};

template <class T>
Cloud<T> make_cloud(MatrixView<const T> x, std::span<const T> w, const std::vector<double>& centre,
                    double cs) {
  Cloud<T> c;
  c.n = x.rows;
  c.d = x.cols;
  c.points.resize(static_cast<std::size_t>(c.n * c.d));
  c.sqnorm.resize(static_cast<std::size_t>(c.n));
  c.weights.resize(static_cast<std::size_t>(c.n));
  c.logw.resize(static_cast<std::size_t>(c.n));
  for (std::int64_t i = 0; i < c.n; ++i) {
    double s = 0;
    for (std::int64_t k = 0; k < c.d; ++k) {
      const T v =
          static_cast<T>(static_cast<double>(x(i, k)) - centre[static_cast<std::size_t>(k)]);
      c.points[static_cast<std::size_t>(i * c.d + k)] = v;
      s += static_cast<double>(v) * v;
    }
    c.sqnorm[static_cast<std::size_t>(i)] = static_cast<T>(cs * s);
    const double wi = w.empty() ? 1.0 / static_cast<double>(c.n)
                                : static_cast<double>(w[static_cast<std::size_t>(i)]);
    c.weights[static_cast<std::size_t>(i)] = static_cast<T>(wi);
    c.logw[static_cast<std::size_t>(i)] =
        wi > 0 ? static_cast<T>(std::log(wi)) : -std::numeric_limits<T>::infinity();
    c.mass += wi;
  }
  return c;
}

/// Centre of the joint bounding box of x and y.
template <class T>
std::vector<double> joint_centre(MatrixView<const T> x, MatrixView<const T> y) {
  const std::int64_t d = x.cols;
  std::vector<double> lo(static_cast<std::size_t>(d), std::numeric_limits<double>::infinity());
  std::vector<double> hi(static_cast<std::size_t>(d), -std::numeric_limits<double>::infinity());
  for (const auto& m : {x, y})
    for (std::int64_t i = 0; i < m.rows; ++i)
      for (std::int64_t k = 0; k < d; ++k) {
        lo[static_cast<std::size_t>(k)] =
            std::min(lo[static_cast<std::size_t>(k)], static_cast<double>(m(i, k)));
        hi[static_cast<std::size_t>(k)] =
            std::max(hi[static_cast<std::size_t>(k)], static_cast<double>(m(i, k)));
      }
  std::vector<double> c(static_cast<std::size_t>(d));
  for (std::size_t k = 0; k < c.size(); ++k) c[k] = 0.5 * (lo[k] + hi[k]);
  return c;
}

/// Output of one streamed reduction over the columns of `cols` for each row of `rows`.
template <class T>
struct LseOut {
  std::vector<T> max, sum, values;
};

/// The reduction behind every update: for rows i of `rows` and columns j of `cols`,
/// z_ij = (kappa / eps) log2(e) <r_i, c_j> + log2(e) (col_hat_j / eps + log w_j), with optional
/// values (cols.n, dv). Shifted potentials: col_hat = g - beta.
template <class T>
void lse_pass(const Cloud<T>& rows, const Cloud<T>& cols, const T* col_hat, double eps,
              double kappa, int threads, LseOut<T>& out, const T* values = nullptr,
              std::int64_t dv = 0) {
  std::vector<T> bias(static_cast<std::size_t>(cols.n));
  for (std::size_t j = 0; j < bias.size(); ++j)
    bias[j] = static_cast<T>(
        kLog2e * (static_cast<double>(col_hat[j]) / eps + static_cast<double>(cols.logw[j])));
  out.max.resize(static_cast<std::size_t>(rows.n));
  out.sum.resize(static_cast<std::size_t>(rows.n));
  out.values.resize(static_cast<std::size_t>(rows.n * dv));
  kernels::LseArgs<T> args;
  args.x = rows.points.data();
  args.n = rows.n;
  args.x_stride = rows.d;
  args.y = cols.points.data();
  args.m = cols.n;
  args.y_stride = cols.d;
  args.d = rows.d;
  args.bias = bias.data();
  args.scale = static_cast<T>(kappa * kLog2e / eps);
  args.values = values;
  args.dv = dv;
  args.row_max = out.max.data();
  args.row_sum = out.sum.data();
  args.row_values = dv ? out.values.data() : nullptr;
  args.num_threads = threads;
  kernels::row_lse(args);
}

/// Soft c-transform in shifted form: out_hat_i = -eps ln2 (M_i + log2 S_i), i.e. the undamped
/// candidate F_hat of FlashSinkhorn §2.5 (standard potential F = F_hat + alpha).
template <class T>
void softmin(const Cloud<T>& rows, const Cloud<T>& cols, const T* col_hat, double eps, double kappa,
             int threads, LseOut<T>& scratch, std::vector<T>& out_hat) {
  lse_pass(rows, cols, col_hat, eps, kappa, threads, scratch);
  out_hat.resize(static_cast<std::size_t>(rows.n));
  for (std::size_t i = 0; i < out_hat.size(); ++i)
    out_hat[i] = static_cast<T>(
        -eps * kLn2 *
        (static_cast<double>(scratch.max[i]) + std::log2(static_cast<double>(scratch.sum[i]))));
}

/// The plan in shifted form is P_ij = factor_i * 2^(z_ij - M_i), with z the logits of the
/// pass over row i (columns' potential in the bias) and factor_i = 2^(log2e (log w_i +
/// row_hat_i / eps) + M_i); 0 for a zero weight.
template <class T>
double plan_row_factor(const Cloud<T>& rows, const std::vector<T>& row_hat, std::size_t i,
                       double eps, T row_max) {
  if (!(rows.weights[i] > 0)) return 0.0;
  return std::exp2(kLog2e * (static_cast<double>(rows.logw[i]) + row_hat[i] / eps) + row_max);
}

/// Damping factor lambda = 1 / (1 + eps / rho) with rho = reach^2; 1 when balanced.
inline double damping(const std::optional<double>& reach, double eps) {
  return reach ? 1.0 / (1.0 + eps / (*reach * *reach)) : 1.0;
}

}  // namespace birkhoff::transport::detail
