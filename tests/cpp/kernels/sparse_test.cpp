#include "birkhoff/kernels/sparse.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace birkhoff::kernels {
namespace {

struct Csr {
  std::int64_t n;
  std::vector<std::int64_t> indptr;
  std::vector<std::int32_t> indices;
  std::vector<double> values;
};

// An n x n CSR matrix with about `density` n^2 entries, rows sorted, some rows empty.
Csr random_csr(std::int64_t n, double density, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution on(density);
  std::normal_distribution<double> normal;
  Csr m{n, {0}, {}, {}};
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      if (i % 7 != 3 && on(rng)) {
        m.indices.push_back(static_cast<std::int32_t>(j));
        m.values.push_back(normal(rng));
      }
    }
    m.indptr.push_back(static_cast<std::int64_t>(m.indices.size()));
  }
  return m;
}

std::vector<double> normals(std::int64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = normal(rng);
  return v;
}

TEST(Sparse, WeightedRowSumEqualsItsScalarTwin) {
  for (const std::int64_t n : {1, 5, 64, 333}) {
    const auto a = normals(4 * n, 1), w = normals(4, 2), out0 = normals(n, 3);
    const double* src[4] = {a.data(), a.data() + n, a.data() + 2 * n, a.data() + 3 * n};
    for (const bool assign : {false, true}) {
      for (int count = 1; count <= 4; ++count) {
        auto out = out0, ref = out0;
        weighted_row_sum(assign, count, w.data(), src, out.data(), n);
        weighted_row_sum_reference(assign, count, w.data(), src, ref.data(), n);
        EXPECT_EQ(out, ref) << "n = " << n << ", count = " << count << ", assign " << assign;
      }
    }
  }
}

TEST(Sparse, GatherAndScatterEqualTheirScalarTwins) {
  for (const std::int64_t n : {1, 2, 9, 50, 203}) {
    for (const double density : {0.02, 0.3}) {
      const Csr m = random_csr(n, density, static_cast<unsigned>(n));
      const auto x = normals(n, 4), out0 = normals(n, 5);
      auto out = out0, ref = out0;
      csr_gather(m.indptr.data(), m.indices.data(), m.values.data(), n, x.data(), -0.7, out.data());
      csr_gather_reference(m.indptr.data(), m.indices.data(), m.values.data(), n, x.data(), -0.7,
                           ref.data());
      EXPECT_EQ(out, ref);
      out = out0;
      ref = out0;
      csr_scatter(m.indptr.data(), m.indices.data(), m.values.data(), n, x.data(), 1.3, out.data());
      csr_scatter_reference(m.indptr.data(), m.indices.data(), m.values.data(), n, x.data(), 1.3,
                            ref.data());
      EXPECT_EQ(out, ref);
    }
  }
}

TEST(Sparse, Gather4EqualsFourGathers) {
  for (const std::int64_t n : {1, 2, 3, 17, 120}) {
    const Csr m = random_csr(n, 0.2, 100 + static_cast<unsigned>(n));
    const std::int64_t stride = n + 3;
    const auto x = normals(4 * stride, 6), out0 = normals(4 * stride, 7);
    auto out = out0, ref = out0;
    std::vector<double> tile(static_cast<std::size_t>(4 * n));
    csr_gather4(m.indptr.data(), m.indices.data(), m.values.data(), n, x.data(), stride, 0.9,
                out.data(), stride, tile.data());
    for (int r = 0; r < 4; ++r) {
      csr_gather_reference(m.indptr.data(), m.indices.data(), m.values.data(), n,
                           x.data() + r * stride, 0.9, ref.data() + r * stride);
    }
    EXPECT_EQ(out, ref) << "n = " << n;
  }
}

TEST(Sparse, GatherComputesTheTransposedProduct) {
  // M = [[0, 2], [3, 0]]: x M^T for x = (1, 10) is (20, 3).
  const std::vector<std::int64_t> indptr = {0, 1, 2};
  const std::vector<std::int32_t> indices = {1, 0};
  const std::vector<double> values = {2.0, 3.0}, x = {1.0, 10.0};
  std::vector<double> out = {0.0, 0.0};
  csr_gather(indptr.data(), indices.data(), values.data(), 2, x.data(), 1.0, out.data());
  EXPECT_EQ(out, (std::vector<double>{20.0, 3.0}));
  out = {0.0, 0.0};
  csr_scatter(indptr.data(), indices.data(), values.data(), 2, x.data(), 1.0, out.data());
  EXPECT_EQ(out, (std::vector<double>{30.0, 2.0}));  // x M
}

}  // namespace
}  // namespace birkhoff::kernels
