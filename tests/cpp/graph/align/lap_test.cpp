#include "birkhoff/graph/align/lap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/generate.hpp"

namespace birkhoff::align {
namespace {

double total(const std::vector<double>& c, std::int64_t m, const std::vector<std::int64_t>& a) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += c[i * m + a[i]];
  return s;
}

TEST(LinearAssignment, MatchesBruteForceOnAllSmallSizes) {
  Rng rng(11);
  for (std::int64_t n = 1; n <= 7; ++n) {
    for (std::int64_t m = n; m <= std::min<std::int64_t>(n + 2, 7); ++m) {
      for (int rep = 0; rep < 5; ++rep) {
        std::vector<double> c(static_cast<std::size_t>(n * m));
        for (auto& v : c) v = std::floor(rng.uniform() * 10);  // ties on purpose
        const auto a = linear_assignment({c.data(), n, m}, false);
        std::vector<std::int64_t> cols(static_cast<std::size_t>(m));
        std::iota(cols.begin(), cols.end(), 0);
        double best = 1e300;
        do {
          best = std::min(best, total(c, m, {cols.begin(), cols.begin() + n}));
        } while (std::next_permutation(cols.begin(), cols.end()));
        EXPECT_DOUBLE_EQ(total(c, m, a), best) << "n=" << n << " m=" << m;
        std::vector<std::int64_t> used(a);
        std::sort(used.begin(), used.end());
        EXPECT_EQ(std::unique(used.begin(), used.end()), used.end());
      }
    }
  }
}

TEST(LinearAssignment, MaximizeFindsThePermutationOfAPermutationMatrix) {
  const std::int64_t n = 5;
  const std::vector<std::int64_t> perm = {3, 0, 4, 1, 2};
  std::vector<double> p(static_cast<std::size_t>(n * n), 0.01);
  for (std::int64_t i = 0; i < n; ++i) p[i * n + perm[i]] = 0.9;
  EXPECT_EQ(linear_assignment({p.data(), n, n}, true), perm);
}

TEST(LinearAssignment, RejectsMoreRowsThanColumnsAndNaN) {
  std::vector<double> c(6, 1.0);
  EXPECT_THROW(linear_assignment({c.data(), 3, 2}), InvalidInput);
  c[1] = std::nan("");
  EXPECT_THROW(linear_assignment({c.data(), 2, 3}), InvalidInput);
}

}  // namespace
}  // namespace birkhoff::align
