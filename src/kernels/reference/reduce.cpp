// Scalar twins of the fixed-order float32 reductions (kernels/reduce.hpp). For tests.
#include "birkhoff/kernels/reduce.hpp"

#include <vector>

namespace birkhoff::kernels {
namespace {

// NumPy's pairwise_sum on a float32 array, as a plain recursion.
float pairwise(const float* v, std::int64_t n) {
  if (n < 8) {
    float s = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) s = s + v[i];
    return s;
  }
  if (n <= 128) {
    float r[8];
    for (int j = 0; j < 8; ++j) r[j] = v[j];
    std::int64_t i = 8;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] = r[j] + v[i + j];
    }
    float s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) s = s + v[i];
    return s;
  }
  const std::int64_t half = n / 2 - (n / 2) % 8;
  return pairwise(v, half) + pairwise(v + half, n - half);
}

}  // namespace

float dot_widened_reference(const float* a, const float* b, std::int64_t n) {
  double lane[4] = {0.0, 0.0, 0.0, 0.0};
  const std::int64_t full = n - n % 4;
  for (std::int64_t i = 0; i < full; ++i) {
    lane[i % 4] = lane[i % 4] + static_cast<double>(a[i]) * static_cast<double>(b[i]);
  }
  for (std::int64_t i = full; i < n; ++i) {
    lane[0] = lane[0] + static_cast<double>(a[i]) * static_cast<double>(b[i]);
  }
  return static_cast<float>((lane[0] + lane[1]) + (lane[2] + lane[3]));
}

float squared_distance_pairwise_reference(const float* a, const float* b, std::int64_t n) {
  std::vector<float> terms(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const float d = a[i] - b[i];
    terms[i] = d * d;
  }
  return pairwise(terms.data(), n);
}

float sum_squares_pairwise_reference(const float* v, std::int64_t n, std::int64_t stride) {
  std::vector<float> terms(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) terms[i] = v[i * stride] * v[i * stride];
  return pairwise(terms.data(), n);
}

}  // namespace birkhoff::kernels
