// Scalar twins of the bitset kernels (kernels/bitset.hpp), one bit at a time. For tests.
#include "birkhoff/kernels/bitset.hpp"

namespace birkhoff::kernels {
namespace {

bool bit(const std::uint64_t* set, std::int64_t k) { return (set[k / 64] >> (k % 64)) & 1; }

}  // namespace

std::int64_t and_count_reference(const std::uint64_t* a, const std::uint64_t* b,
                                 std::int64_t words) {
  std::int64_t count = 0;
  for (std::int64_t k = 0; k < 64 * words; ++k) count += bit(a, k) && bit(b, k);
  return count;
}

std::int64_t and_into_reference(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out,
                                std::int64_t words) {
  for (std::int64_t w = 0; w < words; ++w) out[w] = 0;
  for (std::int64_t k = 0; k < 64 * words; ++k) {
    if (bit(a, k) && bit(b, k)) out[k / 64] |= std::uint64_t{1} << (k % 64);
  }
  return and_count_reference(a, b, words);
}

float rank_squared_differences_reference(const std::uint64_t* a, const std::uint64_t* b,
                                         const std::uint64_t* both, const float* va,
                                         const float* vb, std::int64_t stride, std::int64_t words) {
  float sum = 0.0f;
  std::int64_t rank_a = 0, rank_b = 0;
  for (std::int64_t k = 0; k < 64 * words; ++k) {
    if (bit(both, k)) {
      const float diff = va[rank_a * stride] - vb[rank_b * stride];
      sum = sum + diff * diff;
    }
    rank_a += bit(a, k);
    rank_b += bit(b, k);
  }
  return sum;
}

}  // namespace birkhoff::kernels
