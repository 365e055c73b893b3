// Bitset set operations (see bitset.hpp), vectorised where the machine has a vector popcount.
#include "birkhoff/kernels/bitset.hpp"

#include <bit>

#include "kernels/target_clones.hpp"

namespace birkhoff::kernels {

BIRKHOFF_CLONES_POPCOUNT std::int64_t and_count(const std::uint64_t* a, const std::uint64_t* b,
                                                std::int64_t words) {
  std::int64_t count = 0;
  for (std::int64_t w = 0; w < words; ++w) count += std::popcount(a[w] & b[w]);
  return count;
}

BIRKHOFF_CLONES_POPCOUNT std::int64_t and_into(const std::uint64_t* a, const std::uint64_t* b,
                                               std::uint64_t* out, std::int64_t words) {
  std::int64_t count = 0;
  for (std::int64_t w = 0; w < words; ++w) {
    out[w] = a[w] & b[w];
    count += std::popcount(out[w]);
  }
  return count;
}

BIRKHOFF_CLONES_POPCOUNT float rank_squared_differences(const std::uint64_t* a,
                                                        const std::uint64_t* b,
                                                        const std::uint64_t* both, const float* va,
                                                        const float* vb, std::int64_t stride,
                                                        std::int64_t words) {
  float sum = 0.0f;
  std::int64_t base_a = 0, base_b = 0;
  // The same loop twice: with the stride of (id, value) records known to the compiler, and
  // with any stride. (A template or lambda would be compiled outside the clones, without the
  // popcount instruction.)
  if (stride == 2) {
    for (std::int64_t w = 0; w < words; ++w) {
      for (std::uint64_t bits = both[w]; bits != 0; bits &= bits - 1) {
        const std::uint64_t below = (bits & (~bits + 1)) - 1;  // below the lowest set bit
        const float diff = va[(base_a + std::popcount(a[w] & below)) * 2] -
                           vb[(base_b + std::popcount(b[w] & below)) * 2];
        sum += diff * diff;
      }
      base_a += std::popcount(a[w]);
      base_b += std::popcount(b[w]);
    }
    return sum;
  }
  for (std::int64_t w = 0; w < words; ++w) {
    for (std::uint64_t bits = both[w]; bits != 0; bits &= bits - 1) {
      const std::uint64_t below = (bits & (~bits + 1)) - 1;
      const float diff = va[(base_a + std::popcount(a[w] & below)) * stride] -
                         vb[(base_b + std::popcount(b[w] & below)) * stride];
      sum += diff * diff;
    }
    base_a += std::popcount(a[w]);
    base_b += std::popcount(b[w]);
  }
  return sum;
}

}  // namespace birkhoff::kernels
