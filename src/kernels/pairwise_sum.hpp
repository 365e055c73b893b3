// PRIVATE (kernels): float32 sums in NumPy's summation order.
#pragma once

#include <cstdint>

namespace birkhoff::kernels::detail {

/// Sum over i < n of f(i) in float32, in the exact order of NumPy's pairwise_sum (numpy
/// loops_utils.h.src, used by np.sum / np.add.reduce on a contiguous float32 array):
/// n < 8: left to right from 0; n <= 128: eight running sums (lane j takes j, j+8, ...) over the
/// largest multiple of 8, combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest one by
/// one; n > 128: split at floor(n/2) rounded down to a multiple of 8. Each f(i) is rounded to
/// float32 before it is added (compiled with -ffp-contract=off, so no FMA).
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
/// clones); longer sums split through a call.
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

}  // namespace birkhoff::kernels::detail
