#pragma once

#include <cstdint>

namespace birkhoff::kernels {

// Set operations on bitsets: arrays of `words` 64-bit words, bit k of the set in word k / 64
// at position k % 64.

/// |a AND b|, the number of bits set in both.
std::int64_t and_count(const std::uint64_t* a, const std::uint64_t* b, std::int64_t words);

/// out = a AND b; returns |out|. out may not alias a or b.
std::int64_t and_into(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out,
                      std::int64_t words);

/// Sum over the set bits k of `both` (a subset of a AND b), in ascending k, of
/// (va[rank_a(k) * stride] - vb[rank_b(k) * stride])^2 in float32, where rank_a(k) is the
/// number of bits of `a` below k: va and vb hold one float32 value per member of a and b, in
/// ascending member order (stride in elements, >= 1). Rounded as a left-to-right float32 sum.
float rank_squared_differences(const std::uint64_t* a, const std::uint64_t* b,
                               const std::uint64_t* both, const float* va, const float* vb,
                               std::int64_t stride, std::int64_t words);

/// Scalar twins, bit by bit, for tests (the same values).
std::int64_t and_count_reference(const std::uint64_t* a, const std::uint64_t* b,
                                 std::int64_t words);
std::int64_t and_into_reference(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out,
                                std::int64_t words);
float rank_squared_differences_reference(const std::uint64_t* a, const std::uint64_t* b,
                                         const std::uint64_t* both, const float* va,
                                         const float* vb, std::int64_t stride, std::int64_t words);

}  // namespace birkhoff::kernels
