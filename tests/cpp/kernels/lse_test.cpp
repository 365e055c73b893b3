#include "birkhoff/kernels/lse.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace birkhoff::kernels {
namespace {

template <class T>
struct Case {
  std::int64_t n, m, d, dv;
  std::vector<T> x, y, bias, values;
  T scale;
};

template <class T>
Case<T> make_case(std::int64_t n, std::int64_t m, std::int64_t d, std::int64_t dv, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Case<T> c{n, m, d, dv, {}, {}, {}, {}, static_cast<T>(3.0 / std::sqrt(static_cast<double>(d)))};
  for (std::int64_t i = 0; i < n * d; ++i) c.x.push_back(static_cast<T>(normal(rng)));
  for (std::int64_t i = 0; i < m * d; ++i) c.y.push_back(static_cast<T>(normal(rng)));
  for (std::int64_t j = 0; j < m; ++j) c.bias.push_back(static_cast<T>(normal(rng)));
  for (std::int64_t i = 0; i < m * dv; ++i) c.values.push_back(static_cast<T>(normal(rng)));
  return c;
}

template <class T>
struct Out {
  std::vector<T> max, sum, values;
};

template <class T>
Out<T> run(const Case<T>& c, bool reference, int threads = 0) {
  Out<T> o{std::vector<T>(c.n), std::vector<T>(c.n), std::vector<T>(c.n * c.dv)};
  LseArgs<T> a;
  a.x = c.x.data();
  a.n = c.n;
  a.x_stride = c.d;
  a.y = c.y.data();
  a.m = c.m;
  a.y_stride = c.d;
  a.d = c.d;
  a.bias = c.bias.data();
  a.scale = c.scale;
  a.values = c.dv ? c.values.data() : nullptr;
  a.dv = c.dv;
  a.row_max = o.max.data();
  a.row_sum = o.sum.data();
  a.row_values = c.dv ? o.values.data() : nullptr;
  a.num_threads = threads;
  if (reference) {
    row_lse_reference(a);
  } else {
    row_lse(a);
  }
  return o;
}

template <class T>
void expect_close(const Case<T>& c, const Out<T>& got, const Out<T>& want, double tol) {
  for (std::int64_t i = 0; i < c.n; ++i) {
    const double lse_got = got.max[i] + std::log2(static_cast<double>(got.sum[i]));
    const double lse_want = want.max[i] + std::log2(static_cast<double>(want.sum[i]));
    ASSERT_NEAR(lse_got, lse_want, tol * (1 + std::abs(lse_want))) << "row " << i;
    for (std::int64_t k = 0; k < c.dv; ++k) {
      const double vg = got.values[i * c.dv + k] / got.sum[i];
      const double vw = want.values[i * c.dv + k] / want.sum[i];
      ASSERT_NEAR(vg, vw, tol * 10 * (1 + std::abs(vw))) << "row " << i << " value " << k;
    }
  }
}

class LseKernel : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void TearDown() override { restrict_target(0); }
};

TEST_P(LseKernel, MatchesReferenceOnTailSizesForEveryTarget) {
  const std::int64_t d = GetParam();
  const auto cf = make_case<float>(37, 133, d, 3, static_cast<unsigned>(d));
  const auto cd = make_case<double>(37, 133, d, 3, static_cast<unsigned>(d) + 1);
  const auto want_f = run(cf, true);
  const auto want_d = run(cd, true);
  for (auto target : available_targets()) {
    SCOPED_TRACE(target_name(target));
    restrict_target(target);
    expect_close(cf, run(cf, false), want_f, 2e-5 * std::sqrt(static_cast<double>(d)));
    expect_close(cd, run(cd, false), want_d, 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, LseKernel,
                         ::testing::Values(1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64));

TEST(LseKernel, ResultsDoNotDependOnThreadCount) {
  // Large enough for the kernel to use two threads (it keeps small problems on one).
  const auto c = make_case<float>(3000, 2000, 16, 4, 7);
  const auto one = run(c, false, 1);
  const auto two = run(c, false, 2);
  EXPECT_EQ(one.max, two.max);
  EXPECT_EQ(one.sum, two.sum);
  EXPECT_EQ(one.values, two.values);
}

TEST(LseKernel, MaskedColumnsGetZeroWeightAndNoNaN) {
  auto c = make_case<float>(20, 50, 5, 2, 3);
  auto full = c;
  for (std::int64_t j = 0; j < c.m; j += 2) c.bias[j] = -INFINITY;
  // Removing the masked columns must give the same result.
  Case<float> kept = c;
  kept.y.clear();
  kept.bias.clear();
  kept.values.clear();
  kept.m = 0;
  for (std::int64_t j = 1; j < c.m; j += 2) {
    kept.y.insert(kept.y.end(), c.y.begin() + j * c.d, c.y.begin() + (j + 1) * c.d);
    kept.bias.push_back(c.bias[j]);
    kept.values.insert(kept.values.end(), c.values.begin() + j * c.dv,
                       c.values.begin() + (j + 1) * c.dv);
    ++kept.m;
  }
  expect_close(c, run(c, false), run(kept, true), 1e-5);
  // Every column masked: max = -inf, sum = 0, no NaN.
  for (auto& b : c.bias) b = -INFINITY;
  const auto o = run(c, false);
  for (std::int64_t i = 0; i < c.n; ++i) {
    EXPECT_TRUE(std::isinf(o.max[i]) && o.max[i] < 0);
    EXPECT_EQ(o.sum[i], 0.0f);
  }
}

TEST(Exp2, IsAccurateOverTheWholeNonPositiveRange) {
  std::vector<float> xf;
  std::vector<double> xd;
  for (double v = -130; v <= 0; v += 0.0137) {
    xf.push_back(static_cast<float>(v));
    xd.push_back(v);
  }
  xd.push_back(-1100);
  std::vector<float> of(xf.size());
  std::vector<double> od(xd.size());
  for (auto target : available_targets()) {
    SCOPED_TRACE(target_name(target));
    restrict_target(target);
    exp2_nonpositive(xf.data(), of.data(), static_cast<std::int64_t>(xf.size()));
    exp2_nonpositive(xd.data(), od.data(), static_cast<std::int64_t>(xd.size()));
    for (std::size_t i = 0; i < xf.size(); ++i) {
      const double want = std::exp2(static_cast<double>(xf[i]));
      if (xf[i] < -126) {
        EXPECT_EQ(of[i], 0.0f);
      } else {
        ASSERT_NEAR(of[i], want, 4e-7 * want) << xf[i];
      }
    }
    for (std::size_t i = 0; i < xd.size(); ++i) {
      const double want = std::exp2(xd[i]);
      if (xd[i] < -1022) {
        EXPECT_EQ(od[i], 0.0);
      } else {
        ASSERT_NEAR(od[i], want, 4e-16 * want) << xd[i];
      }
    }
  }
  restrict_target(0);
}

}  // namespace
}  // namespace birkhoff::kernels
