#include "birkhoff/transport/kernel_matrix.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::transport {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// K_ij = exp(-C_ij / epsilon) for a random cost C_ij ~ U(0, 1), m x m, row stride `stride`
/// (the padding holds -7, which the scaling must leave alone).
std::vector<double> random_kernel(std::int64_t m, std::int64_t stride, double epsilon,
                                  std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> cost(0.0, 1.0);
  std::vector<double> k(static_cast<std::size_t>(m * stride), -7.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < m; ++j) k[i * stride + j] = std::exp(-cost(rng) / epsilon);
  }
  return k;
}

/// Plain Sinkhorn-Knopp written out: u = 1 / (K v), v = 1 / (K^T u) until the row sums of
/// diag(u) K diag(v) are within 1e-14 of 1; returns that matrix (m x m, packed).
std::vector<double> reference_scaling(const std::vector<double>& k, std::int64_t m,
                                      std::int64_t stride) {
  std::vector<double> u(m, 1.0), v(m, 1.0);
  for (int it = 0; it < 5000; ++it) {
    for (std::int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (std::int64_t j = 0; j < m; ++j) s += k[i * stride + j] * v[j];
      u[i] = 1.0 / s;
    }
    for (std::int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (std::int64_t i = 0; i < m; ++i) s += k[i * stride + j] * u[i];
      v[j] = 1.0 / s;
    }
    double worst = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (std::int64_t j = 0; j < m; ++j) s += u[i] * k[i * stride + j] * v[j];
      worst = std::max(worst, std::abs(s - 1.0));
    }
    if (worst < 1e-14) break;
  }
  std::vector<double> p(static_cast<std::size_t>(m * m));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < m; ++j) p[i * m + j] = u[i] * k[i * stride + j] * v[j];
  }
  return p;
}

/// Largest |row sum - 1| and |column sum - 1| of the m x m matrix at `p` (row stride `stride`).
std::pair<double, double> marginal_errors(const std::vector<double>& p, std::int64_t m,
                                          std::int64_t stride) {
  double rows = 0, cols = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    double r = 0, c = 0;
    for (std::int64_t j = 0; j < m; ++j) {
      r += p[i * stride + j];
      c += p[j * stride + i];
    }
    rows = std::max(rows, std::abs(r - 1.0));
    cols = std::max(cols, std::abs(c - 1.0));
  }
  return {rows, cols};
}

SinkhornKnoppOptions settings(double tol, std::int64_t memory, int threads) {
  SinkhornKnoppOptions o;
  o.max_sweeps = 100000;
  o.tol = tol;
  o.anderson_memory = memory;
  o.num_threads = threads;
  return o;
}

/// The InvalidInput message of sinkhorn_knopp(geometry, options), or "" when it does not throw.
std::string error_of(const KernelMatrix& geometry, const SinkhornKnoppOptions& options) {
  try {
    sinkhorn_knopp(geometry, options);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(SinkhornKnopp, ResultIsDoublyStochasticWithinTolerance) {
  for (const int threads : {1, 3}) {
    for (const std::int64_t memory : {0, 8}) {
      const std::int64_t m = 37, stride = 41;
      std::vector<double> k = random_kernel(m, stride, 0.2, 5);
      const SinkhornKnoppReport r =
          sinkhorn_knopp({{k.data(), m, m, stride}, {}}, settings(1e-12, memory, threads));
      ASSERT_TRUE(r.finite);
      EXPECT_LE(r.row_error, 1.01e-12);
      const auto [rows, cols] = marginal_errors(k, m, stride);
      EXPECT_LE(rows, 1.01e-12) << threads << " threads, memory " << memory;
      EXPECT_LE(cols, 1e-13) << threads << " threads, memory " << memory;
      EXPECT_NEAR(rows, r.row_error, 1e-14);
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = m; j < stride; ++j) ASSERT_EQ(k[i * stride + j], -7.0);
      }
    }
  }
}

RC_GTEST_PROP(SinkhornKnoppProperties, AgreesWithAPlainDenseSinkhornKnoppLoop, ()) {
  const std::int64_t m = *rc::gen::inRange<std::int64_t>(1, 40);
  const std::int64_t stride = m + *rc::gen::inRange<std::int64_t>(0, 3);
  const double epsilon = *rc::gen::element(0.25, 0.5, 2.0);
  const int threads = *rc::gen::inRange(1, 4);
  const std::int64_t memory = *rc::gen::element<std::int64_t>(0, 5);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  std::vector<double> k = random_kernel(m, stride, epsilon, seed);
  const std::vector<double> expected = reference_scaling(k, m, stride);
  const SinkhornKnoppReport r =
      sinkhorn_knopp({{k.data(), m, m, stride}, {}}, settings(1e-13, memory, threads));
  RC_ASSERT(r.finite);
  RC_ASSERT(r.row_error <= 1.01e-13);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < m; ++j) {
      const double want = expected[i * m + j];
      RC_ASSERT(std::abs(k[i * stride + j] - want) <= 1e-10 * want);
    }
  }
}

TEST(SinkhornKnopp, AndersonReachesThePlainLimitInFewerSweeps) {
  // Nearly decomposable (two diagonal blocks coupled by 1e-3): plain sweeps converge slowly.
  const std::int64_t m = 60;
  std::mt19937_64 rng(10);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> plain(m * m);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < m; ++j) {
      plain[i * m + j] = ((i < 30) == (j < 30) ? 1.0 : 1e-3) * (0.1 + unit(rng));
    }
  }
  std::vector<double> fast = plain;
  const auto r0 = sinkhorn_knopp({{plain.data(), m, m}, {}}, settings(1e-11, 0, 1));
  const auto r1 = sinkhorn_knopp({{fast.data(), m, m}, {}}, settings(1e-11, 10, 2));
  EXPECT_LT(r1.sweeps * 4, r0.sweeps);
  EXPECT_LE(r0.row_error, 1.01e-11);
  EXPECT_LE(r1.row_error, 1.01e-11);
  for (std::int64_t q = 0; q < m * m; ++q) EXPECT_NEAR(plain[q], fast[q], 1e-8 * plain[q]);
}

TEST(SinkhornKnopp, FusedFillGivesTheBitsOfAPrefilledKernelAndRunsOncePerRow) {
  const std::int64_t m = 45, stride = 48;
  const std::vector<double> source = random_kernel(m, stride, 0.3, 21);
  for (const int threads : {1, 3}) {
    std::vector<double> given = source;
    std::vector<double> filled(source.size(), -7.0);
    std::vector<std::atomic<int>> calls(m);
    const KernelRowFill fill = [&](std::int64_t i, double* row) {
      ++calls[i];
      std::memcpy(row, source.data() + i * stride, m * sizeof(double));
    };
    const auto o = settings(1e-10, 6, threads);
    const auto a = sinkhorn_knopp({{given.data(), m, m, stride}, {}}, o);
    const auto b = sinkhorn_knopp({{filled.data(), m, m, stride}, fill}, o);
    for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(calls[i].load(), 1) << "row " << i;
    EXPECT_EQ(a.sweeps, b.sweeps);
    EXPECT_EQ(a.row_error, b.row_error);
    EXPECT_EQ(0, std::memcmp(given.data(), filled.data(), given.size() * sizeof(double)));
  }
}

TEST(SinkhornKnopp, SameThreadCountSameBits) {
  const std::int64_t m = 300;
  const std::vector<double> source = random_kernel(m, m, 0.1, 3);
  std::vector<double> a = source, b = source;
  sinkhorn_knopp({{a.data(), m, m}, {}}, settings(1e-12, 8, 3));
  sinkhorn_knopp({{b.data(), m, m}, {}}, settings(1e-12, 8, 3));
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(double)));
}

TEST(SinkhornKnopp, NonFiniteEntryIsReportedNotThrown) {
  for (const double bad : {std::nan(""), kInf, -kInf}) {
    for (const std::int64_t at : {0, 7, 19 * 20 + 19}) {
      for (const bool fused : {false, true}) {
        const std::int64_t m = 20;
        std::vector<double> k(m * m, 1.0);
        KernelMatrix geometry{{k.data(), m, m}, {}};
        if (fused) {
          geometry.fill = [&](std::int64_t i, double* row) {
            for (std::int64_t j = 0; j < m; ++j) row[j] = i * m + j == at ? bad : 0.5;
          };
        } else {
          k[at] = bad;
        }
        SinkhornKnoppReport r;
        ASSERT_NO_THROW(r = sinkhorn_knopp(geometry, settings(0.0, 4, 2)));
        EXPECT_FALSE(r.finite) << bad << " at " << at << (fused ? " (fill)" : "");
        EXPECT_TRUE(std::isnan(r.row_error));
        EXPECT_EQ(r.sweeps, 1);
      }
    }
  }
}

TEST(SinkhornKnopp, FloorKeepsZeroAndNegativeLinesFinite) {
  const std::int64_t m = 20;
  std::vector<double> k = random_kernel(m, m, 1.0, 9);
  std::fill(k.begin() + 5 * m, k.begin() + 6 * m, 0.0);
  for (std::int64_t i = 0; i < m; ++i) k[i * m + 7] = -1.0;
  SinkhornKnoppOptions o = settings(0.0, 0, 1);
  o.max_sweeps = 200;
  const auto r = sinkhorn_knopp({{k.data(), m, m}, {}}, o);
  EXPECT_TRUE(r.finite);
  for (const double x : k) ASSERT_TRUE(std::isfinite(x) && x > 0);
  EXPECT_LE(marginal_errors(k, m, m).second, 1e-12);
}

TEST(SinkhornKnopp, EmptyKernelIsValid) {
  const auto r = sinkhorn_knopp({{nullptr, 0, 0}, {}});
  EXPECT_TRUE(r.finite);
  EXPECT_EQ(r.row_error, 0.0);
}

TEST(SinkhornKnopp, BadShapesAndOptionsNameTheArgument) {
  std::vector<double> k(12, 1.0);
  const SinkhornKnoppOptions ok;
  EXPECT_EQ(error_of({{k.data(), 3, 4}, {}}, ok).rfind("kernel: ", 0), 0u);
  EXPECT_EQ(error_of({{k.data(), 3, 3, 2}, {}}, ok).rfind("kernel: ", 0), 0u);
  EXPECT_EQ(error_of({{nullptr, 3, 3}, {}}, ok).rfind("kernel: ", 0), 0u);
  const KernelMatrix square{{k.data(), 3, 3}, {}};
  const auto with = [&](auto change) {
    SinkhornKnoppOptions o;
    change(o);
    return error_of(square, o);
  };
  EXPECT_EQ(with([](auto& o) { o.max_sweeps = 0; }).rfind("max_sweeps: ", 0), 0u);
  EXPECT_EQ(with([](auto& o) { o.tol = -1e-9; }).rfind("tol: ", 0), 0u);
  EXPECT_EQ(with([](auto& o) { o.tol = std::nan(""); }).rfind("tol: ", 0), 0u);
  EXPECT_EQ(with([](auto& o) { o.anderson_memory = -1; }).rfind("anderson_memory: ", 0), 0u);
  EXPECT_EQ(with([](auto& o) { o.num_threads = -2; }).rfind("num_threads: ", 0), 0u);
  EXPECT_EQ(with([](auto& o) { o.floor = -1.0; }).rfind("floor: ", 0), 0u);
  EXPECT_EQ(with([](auto& o) { o.floor = std::nan(""); }).rfind("floor: ", 0), 0u);
  EXPECT_EQ(with([](auto& o) { o.floor = kInf; }).rfind("floor: ", 0), 0u);
  EXPECT_EQ(with([](auto&) {}), "");
}

}  // namespace
}  // namespace birkhoff::transport
