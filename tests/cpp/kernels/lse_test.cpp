#include "birkhoff/kernels/lse.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace birkhoff::kernels {
namespace {

template <class T>
struct Case {
  std::int64_t n = 0, m = 0, d = 0, dv = 0;
  std::vector<T> x, y, bias, values;
  T scale = 1;
  // Optional label bias and modulation.
  std::int64_t labels = 0, dm = 0;
  std::vector<std::int32_t> row_labels, col_labels;
  std::vector<T> label_bias, mod_x, mod_y;
};

template <class T>
Case<T> make_case(std::int64_t n, std::int64_t m, std::int64_t d, std::int64_t dv, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Case<T> c;
  c.n = n;
  c.m = m;
  c.d = d;
  c.dv = dv;
  c.scale = static_cast<T>(3.0 / std::sqrt(static_cast<double>(d)));
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

/// Column ranges of a block-sparse pass: per group of `row_block` rows, a few random sorted
/// disjoint ranges (some groups none).
struct Ranges {
  std::int64_t row_block = 0;
  std::vector<std::int64_t> ptr, bounds;
};

Ranges random_ranges(std::int64_t n, std::int64_t m, std::int64_t row_block, unsigned seed) {
  std::mt19937 rng(seed);
  Ranges r{row_block, {0}, {}};
  for (std::int64_t g = 0; g < (n + row_block - 1) / row_block; ++g) {
    std::int64_t j = 0;
    while (j < m) {
      const std::int64_t skip = std::uniform_int_distribution<std::int64_t>(0, m / 3)(rng);
      const std::int64_t len = std::uniform_int_distribution<std::int64_t>(1, m / 4 + 1)(rng);
      if (j + skip >= m) break;
      r.bounds.push_back(j + skip);
      r.bounds.push_back(std::min(m, j + skip + len));
      j = j + skip + len + 1;
    }
    r.ptr.push_back(static_cast<std::int64_t>(r.bounds.size() / 2));
  }
  return r;
}

template <class T>
Out<T> run(const Case<T>& c, bool reference, int threads = 0, const Ranges* ranges = nullptr) {
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
  if (c.labels) {
    a.row_labels = c.row_labels.data();
    a.col_labels = c.col_labels.data();
    a.label_bias = c.label_bias.data();
    a.num_labels = c.labels;
  }
  if (c.dm) {
    a.mod_x = c.mod_x.data();
    a.mod_x_stride = c.dm;
    a.mod_y = c.mod_y.data();
    a.mod_y_stride = c.dm;
    a.dm = c.dm;
  }
  if (ranges != nullptr) {
    a.row_block = ranges->row_block;
    a.range_ptr = ranges->ptr.data();
    a.ranges = ranges->bounds.data();
  }
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

TEST(LseKernel, BlockSparsePassesMatchTheReferenceOnTheirRanges) {
  for (std::int64_t row_block : {16, 48, 128}) {
    for (std::int64_t d : {1, 3, 17}) {
      const auto cf = make_case<float>(301, 700, d, 2, static_cast<unsigned>(d + row_block));
      const auto cd = make_case<double>(301, 700, d, 2, static_cast<unsigned>(d + row_block) + 1);
      const auto ranges = random_ranges(301, 700, row_block, static_cast<unsigned>(row_block));
      for (auto target : available_targets()) {
        SCOPED_TRACE(target_name(target));
        restrict_target(target);
        const auto got_f = run(cf, false, 0, &ranges), want_f = run(cf, true, 0, &ranges);
        const auto got_d = run(cd, false, 0, &ranges), want_d = run(cd, true, 0, &ranges);
        for (std::int64_t i = 0; i < cf.n; ++i) {
          // A group without ranges reads nothing.
          if (std::isinf(want_f.max[i])) {
            EXPECT_TRUE(std::isinf(got_f.max[i]) && got_f.sum[i] == 0.0f);
            continue;
          }
          const double lg = got_f.max[i] + std::log2(static_cast<double>(got_f.sum[i]));
          const double lw = want_f.max[i] + std::log2(static_cast<double>(want_f.sum[i]));
          ASSERT_NEAR(lg, lw, 2e-5 * std::sqrt(static_cast<double>(d)) * (1 + std::abs(lw)));
          const double dg = got_d.max[i] + std::log2(got_d.sum[i]);
          const double dw = want_d.max[i] + std::log2(want_d.sum[i]);
          ASSERT_NEAR(dg, dw, 1e-12 * (1 + std::abs(dw)));
          for (std::int64_t k = 0; k < cd.dv; ++k)
            ASSERT_NEAR(got_d.values[i * cd.dv + k] / got_d.sum[i],
                        want_d.values[i * cd.dv + k] / want_d.sum[i], 1e-11);
        }
      }
      restrict_target(0);
    }
  }
}

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

// Adds a label table of `labels` classes and/or a modulation of width dm to a case.
template <class T>
void decorate(Case<T>& c, std::int64_t labels, std::int64_t dm, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  c.labels = labels;
  c.dm = dm;
  if (labels) {
    std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(labels - 1));
    for (std::int64_t i = 0; i < c.n; ++i) c.row_labels.push_back(pick(rng));
    for (std::int64_t j = 0; j < c.m; ++j) c.col_labels.push_back(pick(rng));
    for (std::int64_t k = 0; k < labels * labels; ++k)
      c.label_bias.push_back(static_cast<T>(2 * normal(rng)));
  }
  for (std::int64_t i = 0; i < c.n * dm; ++i) c.mod_x.push_back(static_cast<T>(normal(rng)));
  for (std::int64_t j = 0; j < c.m * dm; ++j) c.mod_y.push_back(static_cast<T>(normal(rng)));
}

class LseKernelExtensions : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void TearDown() override { restrict_target(0); }
};

TEST_P(LseKernelExtensions, LabelBiasAndModulationMatchReferenceForEveryTarget) {
  const std::int64_t d = GetParam();
  for (auto [labels, dm] : {std::pair<std::int64_t, std::int64_t>{3, 0}, {0, 5}, {7, 2 * d}}) {
    SCOPED_TRACE("labels " + std::to_string(labels) + " dm " + std::to_string(dm));
    auto cf = make_case<float>(37, 133, d, 3, static_cast<unsigned>(d));
    auto cd = make_case<double>(37, 133, d, 3, static_cast<unsigned>(d) + 1);
    decorate(cf, labels, dm, 5);
    decorate(cd, labels, dm, 6);
    const auto want_f = run(cf, true);
    const auto want_d = run(cd, true);
    for (auto target : available_targets()) {
      SCOPED_TRACE(target_name(target));
      restrict_target(target);
      // Modulated values may sum to ~0 over a row: compare them against the row's scale.
      expect_close(cf, run(cf, false), want_f, 4e-5 * std::sqrt(static_cast<double>(d + dm)));
      expect_close(cd, run(cd, false), want_d, 1e-11);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, LseKernelExtensions, ::testing::Values(1, 3, 8, 9, 17, 64));

TEST(LseKernel, LabelBiasEqualsAPerPairBiasComputedByHand) {
  // One row, columns of two labels: the label bias must act exactly like an added bias.
  auto c = make_case<double>(5, 40, 3, 0, 11);
  decorate(c, 2, 0, 12);
  auto plain = c;
  plain.labels = 0;
  const auto with_labels = run(c, false);
  for (std::int64_t i = 0; i < c.n; ++i) {
    auto row = plain;
    row.n = 1;
    row.x.assign(c.x.begin() + i * c.d, c.x.begin() + (i + 1) * c.d);
    for (std::int64_t j = 0; j < c.m; ++j)
      row.bias[j] = c.bias[j] + c.label_bias[c.row_labels[i] * 2 + c.col_labels[j]];
    const auto o = run(row, true);
    EXPECT_NEAR(with_labels.max[i] + std::log2(with_labels.sum[i]), o.max[0] + std::log2(o.sum[0]),
                1e-12);
  }
}

template <class T>
struct MinOut {
  std::vector<T> min;
  std::vector<std::int64_t> arg;
};

template <class T>
MinOut<T> run_min(const Case<T>& c, bool reference) {
  MinOut<T> o{std::vector<T>(c.n), std::vector<std::int64_t>(c.n)};
  MinArgs<T> a;
  a.x = c.x.data();
  a.n = c.n;
  a.x_stride = c.d;
  a.y = c.y.data();
  a.m = c.m;
  a.y_stride = c.d;
  a.d = c.d;
  a.bias = c.bias.data();
  a.scale = c.scale;
  a.row_min = o.min.data();
  a.row_argmin = o.arg.data();
  if (reference) {
    row_min_reference(a);
  } else {
    row_min(a);
  }
  return o;
}

class RowMinKernel : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void TearDown() override { restrict_target(0); }
};

TEST_P(RowMinKernel, MatchesReferenceForEveryTarget) {
  const std::int64_t d = GetParam();
  // Integer-valued coordinates and biases: every dot product is exact, so the minima and the
  // first argmins (ties included) must agree exactly.
  auto c = make_case<float>(45, 300, d, 0, static_cast<unsigned>(d));
  for (auto& v : c.x) v = std::round(v * 2);
  for (auto& v : c.y) v = std::round(v * 2);
  for (auto& v : c.bias) v = std::round(v * 4);
  c.scale = -2;
  auto cd = make_case<double>(45, 300, d, 0, static_cast<unsigned>(d) + 3);
  const auto want = run_min(c, true);
  const auto want_d = run_min(cd, true);
  for (auto target : available_targets()) {
    SCOPED_TRACE(target_name(target));
    restrict_target(target);
    const auto got = run_min(c, false);
    EXPECT_EQ(got.min, want.min);
    EXPECT_EQ(got.arg, want.arg);
    const auto got_d = run_min(cd, false);
    EXPECT_EQ(got_d.arg, want_d.arg);
    for (std::int64_t i = 0; i < cd.n; ++i) EXPECT_NEAR(got_d.min[i], want_d.min[i], 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, RowMinKernel, ::testing::Values(1, 2, 3, 8, 9, 17, 33, 64));

TEST(RowMinKernel, TiesGoToTheSmallestColumnAndExcludedColumnsAreSkipped) {
  auto c = make_case<double>(3, 700, 2, 0, 1);
  for (auto& v : c.y) v = 0;  // every dot product is 0: the minimum is the smallest bias
  for (auto& b : c.bias) b = 5;
  c.bias[400] = 1;
  c.bias[650] = 1;  // a tie in a later tile
  auto o = run_min(c, false);
  for (std::int64_t i = 0; i < c.n; ++i) {
    EXPECT_EQ(o.arg[i], 400);
    EXPECT_EQ(o.min[i], 1);
  }
  for (auto& b : c.bias) b = INFINITY;
  o = run_min(c, false);
  for (std::int64_t i = 0; i < c.n; ++i) {
    EXPECT_EQ(o.arg[i], -1);
    EXPECT_TRUE(std::isinf(o.min[i]));
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
