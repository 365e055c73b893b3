// Float32 reductions in a fixed order (see reduce.hpp); built with -ffp-contract=off.
#include "birkhoff/kernels/reduce.hpp"

#include <cstring>

#include "kernels/pairwise_sum.hpp"
#include "kernels/target_clones.hpp"

namespace birkhoff::kernels {

BIRKHOFF_CLONES_AVX2 float dot_widened(const float* a, const float* b, std::int64_t n) {
  // GCC vector types, so that one AVX2 register (or two SSE ones) holds the four lanes; the
  // per-lane operations and their order are fixed.
  using Float4 = float __attribute__((vector_size(16)));
  using Double4 = double __attribute__((vector_size(32)));
  Double4 acc = {0.0, 0.0, 0.0, 0.0};
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Float4 fa, fb;
    std::memcpy(&fa, a + i, sizeof(fa));
    std::memcpy(&fb, b + i, sizeof(fb));
    acc += __builtin_convertvector(fa, Double4) * __builtin_convertvector(fb, Double4);
  }
  double tail = acc[0];
  for (; i < n; ++i) tail += static_cast<double>(a[i]) * b[i];
  return static_cast<float>((tail + acc[1]) + (acc[2] + acc[3]));
}

BIRKHOFF_CLONES_AVX2 float squared_distance_pairwise(const float* a, const float* b,
                                                     std::int64_t n) {
  return detail::pairwise_sum(n, [a, b](std::int64_t i) {
    const float d = a[i] - b[i];
    return d * d;
  });
}

namespace {

template <std::int64_t Stride>
float sum_squares(const float* v, std::int64_t n, std::int64_t stride) {
  if constexpr (Stride > 0) stride = Stride;
  return detail::pairwise_sum(n, [v, stride](std::int64_t i) {
    const float x = v[i * stride];
    return x * x;
  });
}

}  // namespace

float sum_squares_pairwise(const float* v, std::int64_t n, std::int64_t stride) {
  // Strides 1 (plain arrays) and 2 ((id, value) records) are compiled apart.
  if (stride == 2) return sum_squares<2>(v, n, stride);
  if (stride == 1) return sum_squares<1>(v, n, stride);
  return sum_squares<0>(v, n, stride);
}

}  // namespace birkhoff::kernels
