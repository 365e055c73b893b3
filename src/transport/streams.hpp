// PRIVATE: the streamed passes every solver and product is made of: one side of a prepared
// point cloud with its weights, and the soft c-transform as one call of kernels::row_lse.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "birkhoff/kernels/lse.hpp"
#include "birkhoff/transport/geometry.hpp"

namespace birkhoff::transport::detail {

inline constexpr double kLog2e = 1.4426950408889634;
inline constexpr double kLn2 = 0.6931471805599453;

/// The weights of one cloud as the passes use them: a_i, log a_i (-inf for a zero weight) and
/// the total mass. Uniform 1/n when the caller gave none.
template <class T>
struct Weights {
  std::vector<T> w;
  std::vector<T> logw;
  double mass = 0;
};

template <class T>
Weights<T> make_weights(std::span<const T> given, std::int64_t n) {
  Weights<T> out;
  out.w.resize(static_cast<std::size_t>(n));
  out.logw.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double wi = given.empty() ? 1.0 / static_cast<double>(n)
                                    : static_cast<double>(given[static_cast<std::size_t>(i)]);
    out.w[static_cast<std::size_t>(i)] = static_cast<T>(wi);
    out.logw[static_cast<std::size_t>(i)] =
        wi > 0 ? static_cast<T>(std::log(wi)) : -std::numeric_limits<T>::infinity();
    out.mass += wi;
  }
  return out;
}

/// One side of a pass: centred features, folded row terms and weights, all borrowed.
template <class T>
struct Side {
  std::int64_t n = 0, d = 0;
  const T* points = nullptr;  // (n, d) centred features
  const T* sqnorm = nullptr;  // (n) the row terms alpha_i folded into the potentials
  const T* weights = nullptr;
  const T* logw = nullptr;
  double mass = 0;
  // The label-augmented cost (none when label_cost is null): class ids (n) and the geometry's
  // (V, V) label term, in cost units.
  const std::int32_t* labels = nullptr;
  const double* label_cost = nullptr;
  std::int64_t num_labels = 0;
  // The distance-power form (CostForm::DistancePower; power 0 for the dot-product form):
  // C_ij = kappa |u_i - v_j|^power.
  double power = 0;
};

/// The side of x (rows == true) or of y of a geometry, with its weights.
template <class T>
Side<T> side_of(const PointCloud<T>& geom, bool rows, const Weights<T>& w) {
  Side<T> s{rows ? geom.n() : geom.m(),
            geom.dim(),
            rows ? geom.x().data : geom.y().data,
            rows ? geom.x_sqnorm().data() : geom.y_sqnorm().data(),
            w.w.data(),
            w.logw.data(),
            w.mass};
  if (geom.num_labels() > 0) {
    s.labels = rows ? geom.x_labels().data() : geom.y_labels().data();
    s.label_cost = geom.label_cost().data();
    s.num_labels = geom.num_labels();
  }
  if (geom.cost()->form() == CostForm::DistancePower) s.power = geom.cost()->exponent();
  return s;
}

template <class T>
Side<T> x_side(const PointCloud<T>& geom, const Weights<T>& a) {
  return side_of(geom, true, a);
}

template <class T>
Side<T> y_side(const PointCloud<T>& geom, const Weights<T>& b) {
  return side_of(geom, false, b);
}

/// Rows [begin, end) of a side (a process's share of a pass's rows).
template <class T>
Side<T> row_slice(const Side<T>& s, std::int64_t begin, std::int64_t end) {
  Side<T> out = s;
  out.n = end - begin;
  out.points += begin * s.d;
  out.sqnorm += begin;
  out.weights += begin;
  out.logw += begin;
  if (out.labels) out.labels += begin;
  return out;
}

/// The label cost of one pair (0 without labels); the table is symmetric, so the order of the
/// sides does not matter.
template <class T>
double label_cost(const Side<T>& rows, const Side<T>& cols, std::int64_t i, std::int64_t j) {
  if (!rows.label_cost) return 0.0;
  return rows.label_cost[rows.labels[i] * rows.num_labels + cols.labels[j]];
}

/// Optional factor of the value weights of a pass (kernels::LseArgs): a second dot product
/// <mod_x_i, mod_y_j> (mod_x (rows.n, dm), mod_y (cols.n, dm) row-major), or, for the
/// distance-power form, |u_i - v_j|^(2 distance_exponent).
template <class T>
struct Modulation {
  const T* mod_x = nullptr;
  const T* mod_y = nullptr;
  std::int64_t dm = 0;
  double distance_exponent = 0;
};

/// Optional block sparsity of a pass (kernels::LseArgs): rows in groups of row_block, each
/// reading only its column ranges.
struct BlockRanges {
  std::int64_t row_block = 0;
  const std::int64_t* ptr = nullptr;
  const std::int64_t* ranges = nullptr;
};

/// Output of one streamed reduction over the columns of `cols` for each row of `rows`.
template <class T>
struct LseOut {
  std::vector<T> max, sum, values;
};

/// The reduction behind every update: for rows i of `rows` and columns j of `cols`,
/// The two sides of a kernel call (LseArgs or MinArgs): points, counts, strides, dimension.
template <class Args, class T>
void set_tile(Args& args, const Side<T>& rows, const Side<T>& cols) {
  args.x = rows.points;
  args.n = rows.n;
  args.x_stride = rows.d;
  args.y = cols.points;
  args.m = cols.n;
  args.y_stride = cols.d;
  args.d = rows.d;
}

/// z_ij = (kappa / eps) log2(e) <r_i, c_j> + log2(e) (col_hat_j / eps + log w_j), with optional
/// values (cols.n, dv). Shifted potentials: col_hat = g - beta. For the distance-power form
/// (rows.power > 0) the first term is -(kappa / eps) log2(e) |r_i - c_j|^power instead.
template <class T>
void lse_pass(const Side<T>& rows, const Side<T>& cols, const T* col_hat, double eps, double kappa,
              int threads, LseOut<T>& out, const T* values = nullptr, std::int64_t dv = 0,
              const Modulation<T>& mod = {}, const BlockRanges& sparse = {}) {
  std::vector<T> bias(static_cast<std::size_t>(cols.n));
  // The label term -label_cost / eps joins the logits (base 2) through the kernel's table.
  std::vector<T> label_bias;
  if (rows.label_cost && cols.label_cost) {
    label_bias.resize(static_cast<std::size_t>(rows.num_labels * rows.num_labels));
    for (std::size_t k = 0; k < label_bias.size(); ++k)
      label_bias[k] = static_cast<T>(-kLog2e * rows.label_cost[k] / eps);
  }
  for (std::size_t j = 0; j < bias.size(); ++j)
    bias[j] = static_cast<T>(
        kLog2e * (static_cast<double>(col_hat[j]) / eps + static_cast<double>(cols.logw[j])));
  out.max.resize(static_cast<std::size_t>(rows.n));
  out.sum.resize(static_cast<std::size_t>(rows.n));
  out.values.resize(static_cast<std::size_t>(rows.n * dv));
  kernels::LseArgs<T> args;
  set_tile(args, rows, cols);
  args.bias = bias.data();
  args.scale = static_cast<T>(kappa * kLog2e / eps);
  if (rows.power > 0) {
    args.scale = static_cast<T>(-kappa * kLog2e / eps);
    args.power = static_cast<T>(rows.power);
    if (values && mod.distance_exponent != 0)
      args.value_exponent = static_cast<T>(mod.distance_exponent);
  }
  args.values = values;
  args.dv = dv;
  args.row_max = out.max.data();
  args.row_sum = out.sum.data();
  args.row_values = dv ? out.values.data() : nullptr;
  args.num_threads = threads;
  if (!label_bias.empty()) {
    args.row_labels = rows.labels;
    args.col_labels = cols.labels;
    args.label_bias = label_bias.data();
    args.num_labels = rows.num_labels;
  }
  if (mod.dm > 0) {
    args.mod_x = mod.mod_x;
    args.mod_x_stride = mod.dm;
    args.mod_y = mod.mod_y;
    args.mod_y_stride = mod.dm;
    args.dm = mod.dm;
  }
  args.row_block = sparse.row_block;
  args.range_ptr = sparse.ptr;
  args.ranges = sparse.ranges;
  kernels::row_lse(args);
}

/// out_i = min_j [kappa (|r_i - c_j|^power, or -<r_i, c_j>) - col_hat_j] and its argmin
/// (labels are not read).
template <class T>
void min_pass(const Side<T>& rows, const Side<T>& cols, const T* col_hat, double kappa, int threads,
              std::vector<T>& out, std::vector<std::int64_t>& argmin) {
  std::vector<T> bias(static_cast<std::size_t>(cols.n));
  for (std::size_t j = 0; j < bias.size(); ++j) bias[j] = -col_hat[j];
  out.resize(static_cast<std::size_t>(rows.n));
  argmin.resize(out.size());
  kernels::MinArgs<T> args;
  set_tile(args, rows, cols);
  args.bias = bias.data();
  args.scale = static_cast<T>(-kappa);
  if (rows.power > 0) {
    args.scale = static_cast<T>(kappa);
    args.power = static_cast<T>(rows.power);
  }
  args.row_min = out.data();
  args.row_argmin = argmin.data();
  args.num_threads = threads;
  kernels::row_min(args);
}

/// The plan in shifted form is P_ij = factor_i * 2^(z_ij - M_i), with z the logits of the
/// pass over row i (columns' potential in the bias) and factor_i = 2^(log2e (log w_i +
/// row_hat_i / eps) + M_i); 0 for a zero weight.
template <class T>
double plan_row_factor(const Side<T>& rows, const T* row_hat, std::size_t i, double eps,
                       T row_max) {
  if (!(rows.weights[i] > 0)) return 0.0;
  return std::exp2(kLog2e * (static_cast<double>(rows.logw[i]) + row_hat[i] / eps) + row_max);
}

/// Shifted potential h - sqnorm of a standard one (the form the passes read).
template <class T>
std::vector<T> shifted(std::span<const T> h, const T* sqnorm) {
  std::vector<T> out(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) out[i] = h[i] - sqnorm[i];
  return out;
}

/// Standard potential of a shifted one, moving the storage (an empty input stays empty).
template <class T>
std::vector<T> take_standard(std::vector<T>& hat, const T* sqnorm) {
  std::vector<T> out = std::move(hat);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] += sqnorm[i];
  return out;
}

}  // namespace birkhoff::transport::detail
