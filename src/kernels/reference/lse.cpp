// Scalar twin of kernels::row_lse: plain loops, double accumulation, no tiling. For tests.
#include "birkhoff/kernels/lse.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace birkhoff::kernels {
namespace {

template <class T>
void reference(const LseArgs<T>& a) {
  for (std::int64_t i = 0; i < a.n; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < a.m; ++j) {
      double dot = 0;
      for (std::int64_t k = 0; k < a.d; ++k)
        dot += static_cast<double>(a.x[i * a.x_stride + k]) * a.y[j * a.y_stride + k];
      mx = std::max(mx, static_cast<double>(a.scale) * dot + a.bias[j]);
    }
    double sum = 0;
    for (std::int64_t k = 0; k < a.dv; ++k) a.row_values[i * a.dv + k] = 0;
    std::vector<double> acc(static_cast<std::size_t>(a.dv), 0.0);
    for (std::int64_t j = 0; j < a.m && std::isfinite(mx); ++j) {
      double dot = 0;
      for (std::int64_t k = 0; k < a.d; ++k)
        dot += static_cast<double>(a.x[i * a.x_stride + k]) * a.y[j * a.y_stride + k];
      const double w = std::exp2(static_cast<double>(a.scale) * dot + a.bias[j] - mx);
      sum += w;
      for (std::int64_t k = 0; k < a.dv; ++k)
        acc[static_cast<std::size_t>(k)] += w * a.values[j * a.dv + k];
    }
    a.row_max[i] = static_cast<T>(mx);
    a.row_sum[i] = static_cast<T>(sum);
    for (std::int64_t k = 0; k < a.dv; ++k)
      a.row_values[i * a.dv + k] = static_cast<T>(acc[static_cast<std::size_t>(k)]);
  }
}

}  // namespace

void row_lse_reference(const LseArgs<float>& args) { reference(args); }
void row_lse_reference(const LseArgs<double>& args) { reference(args); }

}  // namespace birkhoff::kernels
