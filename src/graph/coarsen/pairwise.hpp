#pragma once
// PRIVATE header of birkhoff_coarsen: float32 reductions in NumPy's summation order.

#include <cstdint>
#include <cstring>

namespace birkhoff::coarsen::detail {

/// Sum over i < n of f(i) in float32, in the exact order of NumPy's pairwise_sum (numpy
/// loops_utils.h.src, used by np.sum / np.add.reduce on a contiguous float32 array):
/// n < 8: left to right from 0; n <= 128: eight running sums (lane j takes j, j+8, ...) over the
/// largest multiple of 8, combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest one by
/// one; n > 128: split at floor(n/2) rounded down to a multiple of 8. Each f(i) is rounded to
/// float32 before it is added (the library is compiled with -ffp-contract=off, so no FMA).
/// The eight lanes are independent, so the compiler may vectorise them without changing a bit.
template <class F>
[[gnu::always_inline]] inline float pairwise_block(std::int64_t n, const F& f,
                                                   std::int64_t offset) {
  if (n < 8) {
    float res = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) res += f(offset + i);
    return res;
  }
  float r[8];
  for (int j = 0; j < 8; ++j) r[j] = f(offset + j);
  const std::int64_t full = n - (n % 8);
  std::int64_t i = 8;
  for (; i < full; i += 8) {
    for (int j = 0; j < 8; ++j) r[j] += f(offset + i + j);
  }
  float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
  for (; i < n; ++i) res += f(offset + i);
  return res;
}

template <class F>
float pairwise_split(std::int64_t n, const F& f, std::int64_t offset);

/// Always inlined, so that a block of up to 128 terms is compiled into the caller (and into its
/// AVX2 clone); longer sums split through a call.
template <class F>
[[gnu::always_inline]] inline float pairwise_sum(std::int64_t n, const F& f,
                                                 std::int64_t offset = 0) {
  if (n <= 128) return pairwise_block(n, f, offset);
  return pairwise_split(n, f, offset);
}

template <class F>
float pairwise_split(std::int64_t n, const F& f, std::int64_t offset) {
  std::int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(n2, f, offset) + pairwise_sum(n - n2, f, offset + n2);
}

/// np.sum((a - b) ** 2) for float32 vectors of length n (bit for bit).
inline float squared_distance(const float* a, const float* b, std::int64_t n) {
  return pairwise_sum(n, [a, b](std::int64_t i) {
    const float d = a[i] - b[i];
    return d * d;
  });
}

/// Float32 inner product <a, b>, accumulated in float64 (four lanes) and rounded once. The
/// reference takes these from BLAS sgemv, whose order cannot be copied; a nearly correctly
/// rounded value keeps NOPE's merge order closest to it (all 2437 Cora merges identical).
inline float dot(const float* a, const float* b, std::int64_t n) {
  // Lane j takes the elements j, j + 4, ...: GCC vector types so that one AVX2 register (or two
  // SSE ones) holds the four lanes; the per-lane operations and their order are fixed.
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

}  // namespace birkhoff::coarsen::detail
