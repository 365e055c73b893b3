#include "birkhoff/kernels/bitset.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

namespace birkhoff::kernels {
namespace {

std::vector<std::uint64_t> random_bits(std::int64_t words, double density, std::mt19937_64& rng) {
  std::bernoulli_distribution on(density);
  std::vector<std::uint64_t> set(static_cast<std::size_t>(words), 0);
  for (std::int64_t k = 0; k < 64 * words; ++k) {
    if (on(rng)) set[k / 64] |= std::uint64_t{1} << (k % 64);
  }
  return set;
}

TEST(Bitset, AndCountAndAndIntoEqualTheirScalarTwins) {
  std::mt19937_64 rng(1);
  for (const std::int64_t words : {0, 1, 2, 3, 7, 8, 9, 33}) {
    for (const double density : {0.0, 0.05, 0.5, 1.0}) {
      const auto a = random_bits(words, density, rng), b = random_bits(words, 0.5, rng);
      EXPECT_EQ(and_count(a.data(), b.data(), words),
                and_count_reference(a.data(), b.data(), words));
      std::vector<std::uint64_t> out(a.size(), ~std::uint64_t{0}), ref(a.size(), 0);
      EXPECT_EQ(and_into(a.data(), b.data(), out.data(), words),
                and_into_reference(a.data(), b.data(), ref.data(), words));
      EXPECT_EQ(out, ref);
    }
  }
}

TEST(Bitset, RankSquaredDifferencesEqualsItsScalarTwinBitForBit) {
  std::mt19937_64 rng(2);
  std::normal_distribution<float> normal;
  for (const std::int64_t stride : {1, 2}) {
    for (const std::int64_t words : {1, 2, 5, 16}) {
      for (const double density : {0.1, 0.6, 1.0}) {
        const auto a = random_bits(words, density, rng), b = random_bits(words, density, rng);
        auto both = random_bits(words, 0.7, rng);
        for (std::int64_t w = 0; w < words; ++w) both[w] &= a[w] & b[w];
        std::int64_t na = 0, nb = 0;
        for (std::int64_t w = 0; w < words; ++w) {
          na += std::popcount(a[w]);
          nb += std::popcount(b[w]);
        }
        std::vector<float> va(static_cast<std::size_t>(na * stride)),
            vb(static_cast<std::size_t>(nb * stride));
        for (auto& x : va) x = normal(rng);
        for (auto& x : vb) x = normal(rng);
        const float got = rank_squared_differences(a.data(), b.data(), both.data(), va.data(),
                                                   vb.data(), stride, words);
        const float want = rank_squared_differences_reference(a.data(), b.data(), both.data(),
                                                              va.data(), vb.data(), stride, words);
        EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
            << words << " words, density " << density << ", stride " << stride;
      }
    }
  }
}

TEST(Bitset, RankSquaredDifferencesPairsTheValuesOfTheSameMember) {
  // a = {1, 4, 70}, b = {4, 9, 70}: member 4 is a's second and b's first, 70 the third of both.
  std::vector<std::uint64_t> a(2, 0), b(2, 0), both(2, 0);
  for (const int k : {1, 4, 70}) a[k / 64] |= std::uint64_t{1} << (k % 64);
  for (const int k : {4, 9, 70}) b[k / 64] |= std::uint64_t{1} << (k % 64);
  for (const int k : {4, 70}) both[k / 64] |= std::uint64_t{1} << (k % 64);
  const std::vector<float> va = {100.0f, 3.0f, 10.0f}, vb = {1.0f, 50.0f, 7.0f};
  const float expected = (3.0f - 1.0f) * (3.0f - 1.0f) + (10.0f - 7.0f) * (10.0f - 7.0f);
  EXPECT_EQ(rank_squared_differences(a.data(), b.data(), both.data(), va.data(), vb.data(), 1, 2),
            expected);
}

}  // namespace
}  // namespace birkhoff::kernels
