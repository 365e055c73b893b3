#include "birkhoff/kernels/reduce.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace birkhoff::kernels {
namespace {

std::vector<float> normals(std::int64_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = normal(rng);
  return v;
}

// Every length up to two pairwise splits, then a few long ones.
std::vector<std::int64_t> lengths() {
  std::vector<std::int64_t> out;
  for (std::int64_t n = 0; n <= 300; ++n) out.push_back(n);
  for (const std::int64_t n : {511, 1000, 1433, 3703, 4096}) out.push_back(n);
  return out;
}

TEST(Reduce, DotWidenedEqualsItsScalarTwinBitForBit) {
  for (const std::int64_t n : lengths()) {
    const auto a = normals(n, 1 + static_cast<unsigned>(n)), b = normals(n, 7000 + n);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(dot_widened(a.data(), b.data(), n)),
              std::bit_cast<std::uint32_t>(dot_widened_reference(a.data(), b.data(), n)))
        << "n = " << n;
  }
}

TEST(Reduce, DotWidenedIsWithinOneRoundingOfTheExactValue) {
  for (const std::int64_t n : {1, 5, 128, 1433}) {
    const auto a = normals(n, 3), b = normals(n, 4);
    long double exact = 0;
    for (std::int64_t i = 0; i < n; ++i) exact += static_cast<long double>(a[i]) * b[i];
    const float got = dot_widened(a.data(), b.data(), n);
    EXPECT_LE(std::abs(static_cast<long double>(got) - exact), std::abs(exact) * 0x1p-24L + 1e-30L)
        << "n = " << n;
  }
}

TEST(Reduce, SquaredDistanceEqualsItsScalarTwinBitForBit) {
  for (const std::int64_t n : lengths()) {
    const auto a = normals(n, 11 + static_cast<unsigned>(n)), b = normals(n, 9000 + n, 2.0f);
    EXPECT_EQ(
        std::bit_cast<std::uint32_t>(squared_distance_pairwise(a.data(), b.data(), n)),
        std::bit_cast<std::uint32_t>(squared_distance_pairwise_reference(a.data(), b.data(), n)))
        << "n = " << n;
  }
}

TEST(Reduce, SumSquaresWithAStrideEqualsItsScalarTwinBitForBit) {
  for (const std::int64_t stride : {1, 2, 3}) {
    for (const std::int64_t n : lengths()) {
      const auto v = normals(n * stride, 21 + static_cast<unsigned>(n));
      EXPECT_EQ(std::bit_cast<std::uint32_t>(sum_squares_pairwise(v.data(), n, stride)),
                std::bit_cast<std::uint32_t>(sum_squares_pairwise_reference(v.data(), n, stride)))
          << "n = " << n << ", stride = " << stride;
    }
  }
}

TEST(Reduce, PairwiseSumsAreCloseToTheDoubleSums) {
  for (const std::int64_t n : {7, 8, 129, 4096}) {
    const auto a = normals(n, 5), b = normals(n, 6);
    double dist = 0, squares = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      dist += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
      squares += static_cast<double>(a[i]) * a[i];
    }
    EXPECT_NEAR(squared_distance_pairwise(a.data(), b.data(), n), dist, 1e-5 * dist);
    EXPECT_NEAR(sum_squares_pairwise(a.data(), n, 1), squares, 1e-5 * squares);
  }
}

}  // namespace
}  // namespace birkhoff::kernels
