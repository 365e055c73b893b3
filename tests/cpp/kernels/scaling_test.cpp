#include "birkhoff/kernels/scaling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace birkhoff::kernels {
namespace {

std::vector<double> uniforms(std::int64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = u(rng);
  return v;
}

const std::int64_t kSizes[] = {0, 1, 3, 15, 16, 17, 31, 64, 100, 1118};

TEST(Scaling, ScaleRowEqualsItsScalarTwin) {
  for (const std::int64_t m : kSizes) {
    if (m == 0) continue;
    const auto row = uniforms(m, 1), v = uniforms(m, 2), acc0 = uniforms(m, 3);
    auto acc = acc0, acc_ref = acc0;
    EXPECT_EQ(scale_row(row.data(), v.data(), acc.data(), m),
              scale_row_reference(row.data(), v.data(), acc_ref.data(), m));
    EXPECT_EQ(acc, acc_ref) << "m = " << m;
  }
}

TEST(Scaling, ScaleRows4EqualsFourScaleRows) {
  for (const std::int64_t m : kSizes) {
    if (m == 0) continue;
    const std::int64_t stride = m + 5;
    const auto rows = uniforms(4 * stride, 4), v = uniforms(m, 5), acc0 = uniforms(m, 6);
    auto acc = acc0, acc_ref = acc0;
    double u[4], u_ref[4];
    scale_rows4(rows.data(), stride, v.data(), acc.data(), m, u);
    scale_rows4_reference(rows.data(), stride, v.data(), acc_ref.data(), m, u_ref);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(u[r], u_ref[r]);
    EXPECT_EQ(acc, acc_ref) << "m = " << m;
    // And the row sums come out at 1 / u.
    for (int r = 0; r < 4; ++r) {
      double s = 0;
      for (std::int64_t j = 0; j < m; ++j) s += rows[r * stride + j] * v[j];
      EXPECT_NEAR(s * u[r], 1.0, 1e-12);
    }
  }
}

TEST(Scaling, StepAndScaleColumnsEqualTheirScalarTwins) {
  for (const std::int64_t m : kSizes) {
    const auto x = uniforms(m, 7), g = uniforms(m, 8), v = uniforms(m, 9);
    std::vector<double> row(x.size()), row_ref(x.size());
    step_row(x.data(), g.data(), 0.37, row.data(), m);
    step_row_reference(x.data(), g.data(), 0.37, row_ref.data(), m);
    EXPECT_EQ(row, row_ref);
    row = x;
    row_ref = x;
    const double s = scale_columns(row.data(), 1.7, v.data(), m);
    const double s_ref = scale_columns_reference(row_ref.data(), 1.7, v.data(), m);
    EXPECT_EQ(row, row_ref);
    EXPECT_NEAR(s, s_ref, 1e-13 * static_cast<double>(m + 1));
  }
}

TEST(Scaling, FloorRowRaisesSmallEntriesAndReportsNonFiniteOnes) {
  const double floor = 1e-100;
  for (const std::int64_t m : {1, 7, 40}) {
    for (const double bad :
         {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity(), 0.0, -3.0}) {
      for (const std::int64_t at : {std::int64_t{0}, m - 1}) {
        auto row = uniforms(m, 10);
        row[at] = bad;
        auto ref = row;
        const bool finite = floor_row(row.data(), m, floor);
        EXPECT_EQ(finite, floor_row_reference(ref.data(), m, floor));
        EXPECT_EQ(finite, std::isfinite(bad));
        for (std::int64_t j = 0; j < m; ++j) {
          if (std::isnan(ref[j])) {
            EXPECT_TRUE(std::isnan(row[j]));
          } else {
            EXPECT_EQ(row[j], ref[j]);
            EXPECT_GE(row[j], floor);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace birkhoff::kernels
