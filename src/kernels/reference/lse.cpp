// Scalar twins of kernels::row_lse and kernels::row_min: plain loops, double accumulation, no
// tiling. For tests.
#include "birkhoff/kernels/lse.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace birkhoff::kernels {
namespace {

// The squared distance of the distance-power form, from the coordinates' differences.
template <class A>
double sqdist(const A& a, std::int64_t i, std::int64_t j) {
  double s = 0;
  for (std::int64_t k = 0; k < a.d; ++k) {
    const double e = static_cast<double>(a.x[i * a.x_stride + k]) - a.y[j * a.y_stride + k];
    s += e * e;
  }
  return s;
}

// scale * <x_i, y_j>, or scale * s_ij^(power / 2) for the distance-power form.
template <class A>
double cost_term(const A& a, std::int64_t i, std::int64_t j) {
  if (a.power > 0) return static_cast<double>(a.scale) * std::pow(sqdist(a, i, j), 0.5 * a.power);
  double dot = 0;
  for (std::int64_t k = 0; k < a.d; ++k)
    dot += static_cast<double>(a.x[i * a.x_stride + k]) * a.y[j * a.y_stride + k];
  return static_cast<double>(a.scale) * dot;
}

template <class T>
double logit(const LseArgs<T>& a, std::int64_t i, std::int64_t j) {
  double z = cost_term(a, i, j) + a.bias[j];
  if (a.label_bias && a.num_labels > 0)
    z += a.label_bias[a.row_labels[i] * a.num_labels + a.col_labels[j]];
  return z;
}

template <class T>
double modulation(const LseArgs<T>& a, std::int64_t i, std::int64_t j) {
  if (a.power > 0 && a.value_exponent != 0) {
    const double s = sqdist(a, i, j);
    if (a.value_exponent < 0 && s == 0) return 0.0;
    return std::pow(std::max(s, static_cast<double>(std::numeric_limits<T>::min())),
                    static_cast<double>(a.value_exponent));
  }
  if (a.dm == 0 || !a.mod_x) return 1.0;
  double dot = 0;
  for (std::int64_t k = 0; k < a.dm; ++k)
    dot += static_cast<double>(a.mod_x[i * a.mod_x_stride + k]) * a.mod_y[j * a.mod_y_stride + k];
  return dot;
}

// Whether row i reads column j (always, unless the pass is block-sparse).
template <class T>
bool reads(const LseArgs<T>& a, std::int64_t i, std::int64_t j) {
  if (a.row_block == 0) return true;
  const std::int64_t r = i / a.row_block;
  for (std::int64_t k = a.range_ptr[r]; k < a.range_ptr[r + 1]; ++k)
    if (j >= a.ranges[2 * k] && j < a.ranges[2 * k + 1]) return true;
  return false;
}

template <class T>
void reference(const LseArgs<T>& a) {
  for (std::int64_t i = 0; i < a.n; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < a.m; ++j)
      if (reads(a, i, j)) mx = std::max(mx, logit(a, i, j));
    double sum = 0;
    for (std::int64_t k = 0; k < a.dv; ++k) a.row_values[i * a.dv + k] = 0;
    std::vector<double> acc(static_cast<std::size_t>(a.dv), 0.0);
    for (std::int64_t j = 0; j < a.m && std::isfinite(mx); ++j) {
      if (!reads(a, i, j)) continue;
      const double w = std::exp2(logit(a, i, j) - mx);
      sum += w;
      const double wv = w * modulation(a, i, j);
      for (std::int64_t k = 0; k < a.dv; ++k)
        acc[static_cast<std::size_t>(k)] += wv * a.values[j * a.dv + k];
    }
    a.row_max[i] = static_cast<T>(mx);
    a.row_sum[i] = static_cast<T>(sum);
    for (std::int64_t k = 0; k < a.dv; ++k)
      a.row_values[i * a.dv + k] = static_cast<T>(acc[static_cast<std::size_t>(k)]);
  }
}

template <class T>
void reference_min(const MinArgs<T>& a) {
  for (std::int64_t i = 0; i < a.n; ++i) {
    double best = std::numeric_limits<double>::infinity();
    std::int64_t arg = -1;
    for (std::int64_t j = 0; j < a.m; ++j) {
      const double v = cost_term(a, i, j) + a.bias[j];
      if (v < best) {
        best = v;
        arg = j;
      }
    }
    a.row_min[i] = static_cast<T>(best);
    a.row_argmin[i] = arg;
  }
}

}  // namespace

void row_lse_reference(const LseArgs<float>& args) { reference(args); }
void row_lse_reference(const LseArgs<double>& args) { reference(args); }
void row_min_reference(const MinArgs<float>& args) { reference_min(args); }
void row_min_reference(const MinArgs<double>& args) { reference_min(args); }

}  // namespace birkhoff::kernels
