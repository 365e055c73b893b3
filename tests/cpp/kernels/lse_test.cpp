#include "birkhoff/kernels/lse.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
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
  // Optional distance-power form (power > 0): the rows' squared norms and the value exponent.
  T power = 0, value_exponent = 0;
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
  if (c.power > 0) {
    a.power = c.power;
    a.value_exponent = c.value_exponent;
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
  if (c.power > 0) {
    a.power = c.power;
  }
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

// The distance-power form on a case: power p, value exponent q, the rows' squared norms, and a
// scale that keeps scale * |x - y|^p of order one. Every y_j is redrawn until it lies at least
// `min_sep` from every x_i: |x|^2 + |y|^2 - 2 <x, y> loses all relative accuracy for a nearly
// coincident pair in float32, where the kernel (float dot products) and its twin (double dot
// products) may then legitimately disagree by more than any tolerance.
template <class T>
void make_power(Case<T>& c, double p, double q, double scale_sign, double min_sep, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  for (std::int64_t j = 0; j < c.m; ++j) {
    for (int tries = 0; tries < 1000; ++tries) {
      double closest = INFINITY;
      for (std::int64_t i = 0; i < c.n; ++i) {
        double s = 0;
        for (std::int64_t k = 0; k < c.d; ++k) {
          const double diff = static_cast<double>(c.x[i * c.d + k]) - c.y[j * c.d + k];
          s += diff * diff;
        }
        closest = std::min(closest, s);
      }
      if (closest >= min_sep * min_sep) break;
      for (std::int64_t k = 0; k < c.d; ++k) c.y[j * c.d + k] = static_cast<T>(normal(rng));
    }
  }
  c.power = static_cast<T>(p);
  c.value_exponent = static_cast<T>(q);
  c.scale = static_cast<T>(scale_sign * 4.0 / std::pow(2.0 * static_cast<double>(c.d), 0.5 * p));
}

// |x_i - y_j|^2 formed directly (no norms), in double.
template <class T>
double direct_sqdist(const Case<T>& c, std::int64_t i, std::int64_t j) {
  double s = 0;
  for (std::int64_t k = 0; k < c.d; ++k) {
    const double diff = static_cast<double>(c.x[i * c.d + k]) - c.y[j * c.d + k];
    s += diff * diff;
  }
  return s;
}

std::string power_trace(double p, double q, std::int64_t labels) {
  return "power " + std::to_string(p) + " value_exponent " + std::to_string(q) + " labels " +
         std::to_string(labels);
}

class LsePowerKernel : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void TearDown() override { restrict_target(0); }
};

TEST_P(LsePowerKernel, MatchesReferenceForEveryTargetPowerValueExponentAndLabels) {
  const std::int64_t d = GetParam();
  for (double p : {1.0, 1.5, 2.0, 3.0})
    for (double q : {0.0, -0.5, 0.75})
      for (std::int64_t labels : {0, 3}) {
        SCOPED_TRACE(power_trace(p, q, labels));
        const auto seed = static_cast<unsigned>(d * 100 + static_cast<std::int64_t>(p * 10));
        auto cf = make_case<float>(37, 133, d, 3, seed);
        auto cd = make_case<double>(37, 133, d, 3, seed + 1);
        decorate(cf, labels, 0, seed + 2);
        decorate(cd, labels, 0, seed + 3);
        make_power(cf, p, q, -1.0, 0.1, seed + 4);
        make_power(cd, p, q, -1.0, 0.05, seed + 5);
        const auto want_f = run(cf, true);
        const auto want_d = run(cd, true);
        for (auto target : available_targets()) {
          SCOPED_TRACE(target_name(target));
          restrict_target(target);
          expect_close(cf, run(cf, false), want_f, 4e-5 * std::sqrt(static_cast<double>(d)));
          expect_close(cd, run(cd, false), want_d, 1e-11);
        }
      }
}

INSTANTIATE_TEST_SUITE_P(Dims, LsePowerKernel, ::testing::Values(1, 3, 8, 9, 17, 64));

TEST(LsePowerKernel, EqualsTheDirectFormulaInFloat64) {
  // Against log2 sum_j 2^(scale |x_i - y_j|^p + bias_j + label) and the value weights
  // |x_i - y_j|^(2 q) formed from the differences, not from the norms.
  for (double p : {1.0, 1.5, 3.0})
    for (double q : {0.0, -0.5, 0.75})
      for (std::int64_t labels : {0, 2}) {
        SCOPED_TRACE(power_trace(p, q, labels));
        auto c = make_case<double>(19, 71, 4, 2, 41);
        decorate(c, labels, 0, 42);
        make_power(c, p, q, -1.0, 0.1, 43);
        const auto got = run(c, false);
        for (std::int64_t i = 0; i < c.n; ++i) {
          std::vector<double> z(static_cast<std::size_t>(c.m));
          double mx = -INFINITY;
          for (std::int64_t j = 0; j < c.m; ++j) {
            z[j] = c.scale * std::pow(direct_sqdist(c, i, j), 0.5 * p) + c.bias[j];
            if (labels) z[j] += c.label_bias[c.row_labels[i] * labels + c.col_labels[j]];
            mx = std::max(mx, z[j]);
          }
          double sum = 0;
          std::vector<double> acc(static_cast<std::size_t>(c.dv), 0.0);
          for (std::int64_t j = 0; j < c.m; ++j) {
            const double w = std::exp2(z[j] - mx);
            sum += w;
            const double mod = q == 0 ? 1.0 : std::pow(direct_sqdist(c, i, j), q);
            for (std::int64_t k = 0; k < c.dv; ++k) acc[k] += w * mod * c.values[j * c.dv + k];
          }
          const double lse = mx + std::log2(sum);
          ASSERT_NEAR(got.max[i] + std::log2(got.sum[i]), lse, 1e-12 * (1 + std::abs(lse)))
              << "row " << i;
          for (std::int64_t k = 0; k < c.dv; ++k)
            ASSERT_NEAR(got.values[i * c.dv + k] / got.sum[i], acc[k] / sum,
                        1e-11 * (1 + std::abs(acc[k] / sum)))
                << "row " << i << " value " << k;
        }
      }
}

TEST(LsePowerKernel, CoincidentPairsKeepTheirPlanWeightAndGetNoValueWeightWithANegativeExponent) {
  // Integer coordinates: the squared distances are exact, so a coincident pair has s = 0.
  for (double p : {1.0, 1.5, 3.0})
    for (double q : {-0.5, 0.75}) {
      SCOPED_TRACE(power_trace(p, q, 0));
      auto c = make_case<float>(6, 40, 3, 2, 51);
      for (auto& v : c.x) v = std::round(v * 2);
      for (auto& v : c.y) v = std::round(v * 2);
      for (std::int64_t k = 0; k < c.d; ++k) {
        c.y[0 * c.d + k] = c.x[0 * c.d + k];   // y_0 = x_0
        c.y[17 * c.d + k] = c.x[2 * c.d + k];  // y_17 = x_2
      }
      make_power(c, p, q, -1.0, 0.0, 52);
      const auto got = run(c, false);
      const auto want = run(c, true);
      for (std::int64_t i = 0; i < c.n; ++i) {
        ASSERT_TRUE(std::isfinite(got.max[i]) && std::isfinite(got.sum[i])) << i;
        for (std::int64_t k = 0; k < c.dv; ++k)
          ASSERT_TRUE(std::isfinite(got.values[i * c.dv + k])) << i;
      }
      expect_close(c, got, want, 4e-5);
      // By hand in double: the coincident pair's logit is its bias (distance 0); its value
      // weight is 0 for q < 0 and 0^q = 0 (up to the clamp at the smallest normal) for q > 0.
      for (std::int64_t i : {0, 2}) {
        double mx = -INFINITY;
        std::vector<double> z(static_cast<std::size_t>(c.m));
        for (std::int64_t j = 0; j < c.m; ++j) {
          z[j] =
              static_cast<double>(c.scale) * std::pow(direct_sqdist(c, i, j), 0.5 * p) + c.bias[j];
          mx = std::max(mx, z[j]);
        }
        double sum = 0;
        std::vector<double> acc(static_cast<std::size_t>(c.dv), 0.0);
        for (std::int64_t j = 0; j < c.m; ++j) {
          const double w = std::exp2(z[j] - mx);
          sum += w;
          const double s = direct_sqdist(c, i, j);
          const double mod = s == 0 ? 0.0 : std::pow(s, q);
          for (std::int64_t k = 0; k < c.dv; ++k) acc[k] += w * mod * c.values[j * c.dv + k];
        }
        const double lse = mx + std::log2(sum);
        EXPECT_NEAR(got.max[i] + std::log2(static_cast<double>(got.sum[i])), lse,
                    2e-5 * (1 + std::abs(lse)));
        for (std::int64_t k = 0; k < c.dv; ++k)
          EXPECT_NEAR(got.values[i * c.dv + k] / got.sum[i], acc[k] / sum,
                      1e-4 * (1 + std::abs(acc[k] / sum)));
      }
    }
}

// A case whose first n columns are exact copies of the rows of x (random, not integer: the
// dot products round), the rows at least 0.1 apart and the other columns at least 0.3 from
// every row (so that only the copies are near pairs).
template <class T>
Case<T> copies_case(std::int64_t d, double p, double q, unsigned seed) {
  auto c = make_case<T>(29, 90, d, 2, seed);
  std::mt19937 rng(seed + 7);
  std::normal_distribution<double> normal;
  for (std::int64_t i = 1; i < c.n; ++i)
    for (int tries = 0; tries < 1000; ++tries) {
      double closest = INFINITY;
      for (std::int64_t r = 0; r < i; ++r) {
        double s = 0;
        for (std::int64_t k = 0; k < d; ++k)
          s += std::pow(static_cast<double>(c.x[i * d + k]) - c.x[r * d + k], 2);
        closest = std::min(closest, s);
      }
      if (closest >= 0.01) break;
      for (std::int64_t k = 0; k < d; ++k) c.x[i * d + k] = static_cast<T>(normal(rng));
    }
  make_power(c, p, q, -1.0, 0.3, seed + 1);
  for (std::int64_t j = 0; j < c.n; ++j)
    for (std::int64_t k = 0; k < d; ++k) c.y[j * d + k] = c.x[j * d + k];
  return c;
}

template <class T>
void expect_coincident_copies_cost_zero(std::int64_t d) {
  for (double p : {1.0, 1.5, 3.0}) {
    SCOPED_TRACE(power_trace(p, -0.5, 0));
    const auto c = copies_case<T>(d, p, -0.5, static_cast<unsigned>(d + 10 * p));
    // Row minimum with zero biases: 0 exactly, at the copy.
    auto cm = c;
    cm.scale = 1;
    for (auto& b : cm.bias) b = 0;
    const auto got_min = run_min(cm, false), want_min = run_min(cm, true);
    for (std::int64_t i = 0; i < c.n; ++i) {
      EXPECT_EQ(got_min.min[i], T(0)) << "row " << i;
      EXPECT_EQ(got_min.arg[i], i) << "row " << i;
      EXPECT_EQ(want_min.min[i], T(0)) << "row " << i;
    }
    // LSE: the copy's logit is its bias and, the exponent being negative, it adds nothing to
    // the values; by hand from the differences (exact 0 at the copy).
    const auto got = run(c, false);
    for (std::int64_t i = 0; i < c.n; ++i) {
      std::vector<double> z(static_cast<std::size_t>(c.m));
      double mx = -INFINITY;
      for (std::int64_t j = 0; j < c.m; ++j) {
        z[j] = static_cast<double>(c.scale) * std::pow(direct_sqdist(c, i, j), 0.5 * p) + c.bias[j];
        mx = std::max(mx, z[j]);
      }
      double sum = 0;
      std::vector<double> acc(static_cast<std::size_t>(c.dv), 0.0);
      for (std::int64_t j = 0; j < c.m; ++j) {
        const double w = std::exp2(z[j] - mx);
        sum += w;
        const double s = direct_sqdist(c, i, j);
        const double mod = s == 0 ? 0.0 : std::pow(s, -0.5);
        for (std::int64_t k = 0; k < c.dv; ++k) acc[k] += w * mod * c.values[j * c.dv + k];
      }
      const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-11;
      const double lse = mx + std::log2(sum);
      EXPECT_NEAR(got.max[i] + std::log2(static_cast<double>(got.sum[i])), lse,
                  tol * (1 + std::abs(lse)))
          << "row " << i;
      for (std::int64_t k = 0; k < c.dv; ++k)
        EXPECT_NEAR(got.values[i * c.dv + k] / got.sum[i], acc[k] / sum,
                    10 * tol * (1 + std::abs(acc[k] / sum)))
            << "row " << i << " value " << k;
    }
  }
}

class PowerCoincidence : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void TearDown() override { restrict_target(0); }
};

TEST_P(PowerCoincidence, ExactCopiesOfRandomPointsCostZeroForEveryTarget) {
  // |x|^2 + |y|^2 - 2 <x, y> of a pair of equal rows is rounding, not 0: the kernels must
  // count it as 0 (else |x - y|^p is (noise)^(p / 2), and a negative value exponent turns the
  // noise into a huge weight).
  for (auto target : available_targets()) {
    SCOPED_TRACE(target_name(target));
    restrict_target(target);
    expect_coincident_copies_cost_zero<float>(GetParam());
    expect_coincident_copies_cost_zero<double>(GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, PowerCoincidence, ::testing::Values(1, 3, 8, 17, 64));

class RowMinPowerKernel : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void TearDown() override { restrict_target(0); }
};

TEST_P(RowMinPowerKernel, MatchesReferenceForEveryTargetAndPower) {
  const std::int64_t d = GetParam();
  for (double p : {1.0, 1.5, 2.0, 3.0}) {
    SCOPED_TRACE(power_trace(p, 0, 0));
    const auto seed = static_cast<unsigned>(d * 10 + static_cast<std::int64_t>(p * 2));
    auto cf = make_case<float>(45, 300, d, 0, seed);
    auto cd = make_case<double>(45, 300, d, 0, seed + 1);
    make_power(cf, p, 0, 1.0, 0.1, seed + 2);
    make_power(cd, p, 0, 1.0, 0.05, seed + 3);
    for (std::int64_t j = 3; j < cf.m; j += 7) cf.bias[j] = cd.bias[j] = INFINITY;  // excluded
    const auto want_f = run_min(cf, true);
    const auto want_d = run_min(cd, true);
    // The value at column j, formed from the differences, in double.
    auto value_at = [p](const auto& c, std::int64_t i, std::int64_t j) {
      return static_cast<double>(c.scale) * std::pow(direct_sqdist(c, i, j), 0.5 * p) +
             static_cast<double>(c.bias[j]);
    };
    for (std::int64_t i = 0; i < cd.n; ++i) {
      ASSERT_GE(want_d.arg[i], 0);
      ASSERT_NEAR(want_d.min[i], value_at(cd, i, want_d.arg[i]), 1e-12);
    }
    for (auto target : available_targets()) {
      SCOPED_TRACE(target_name(target));
      restrict_target(target);
      const auto got_f = run_min(cf, false);
      const auto got_d = run_min(cd, false);
      EXPECT_EQ(got_d.arg, want_d.arg);
      for (std::int64_t i = 0; i < cd.n; ++i) {
        EXPECT_NEAR(got_d.min[i], want_d.min[i], 1e-12 * (1 + std::abs(want_d.min[i])));
        // Float32: the minimum agrees, and the column found attains it (near-ties may pick
        // either column, never an excluded one).
        const double tol = 2e-5 * std::sqrt(static_cast<double>(d)) * (1 + std::abs(want_f.min[i]));
        EXPECT_NEAR(got_f.min[i], want_f.min[i], tol) << "row " << i;
        ASSERT_GE(got_f.arg[i], 0);
        ASSERT_LT(got_f.arg[i], cf.m);
        EXPECT_FALSE(std::isinf(cf.bias[got_f.arg[i]])) << "row " << i;
        EXPECT_NEAR(value_at(cf, i, got_f.arg[i]), want_f.min[i], tol) << "row " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, RowMinPowerKernel, ::testing::Values(1, 2, 3, 8, 9, 17, 33));

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
