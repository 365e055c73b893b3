#include "birkhoff/kernels/gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace birkhoff::kernels {
namespace {

std::vector<double> normals(std::int64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = normal(rng);
  return v;
}

struct Shape {
  std::int64_t m, n, k;
};

TEST(Gemm, RowLoopsEqualTheScalarTwinAndBlasIsClose) {
  for (const Shape s : {Shape{1, 1, 1}, Shape{3, 5, 2}, Shape{17, 9, 33}, Shape{64, 70, 40}}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        for (const double beta : {0.0, 1.0, -0.5}) {
          const std::int64_t lda = (ta ? s.m : s.k) + 2, ldb = (tb ? s.k : s.n) + 1, ldc = s.n + 3;
          const auto a = normals((ta ? s.k : s.m) * lda, 1), b = normals((tb ? s.n : s.k) * ldb, 2);
          const auto c0 = normals(s.m * ldc, 3);
          auto rows = c0, ref = c0, blas = c0;
          gemm_rows(ta, tb, s.m, s.n, s.k, 0.75, a.data(), lda, b.data(), ldb, beta, rows.data(),
                    ldc);
          gemm_reference(ta, tb, s.m, s.n, s.k, 0.75, a.data(), lda, b.data(), ldb, beta,
                         ref.data(), ldc);
          gemm(ta, tb, s.m, s.n, s.k, 0.75, a.data(), lda, b.data(), ldb, beta, blas.data(), ldc);
          EXPECT_EQ(rows, ref);
          for (std::size_t q = 0; q < ref.size(); ++q) {
            EXPECT_NEAR(blas[q], ref[q], 1e-12 * static_cast<double>(s.k + 1));
          }
        }
      }
    }
  }
}

TEST(Gemm, BetaZeroIgnoresTheOldValuesEvenNaN) {
  const std::vector<double> a = {1, 2, 3, 4}, b = {1, 0, 0, 1};
  std::vector<double> c(4, std::nan("")), d(4, std::nan(""));
  gemm_rows(false, false, 2, 2, 2, 1.0, a.data(), 2, b.data(), 2, 0.0, c.data(), 2);
  gemm_reference(false, false, 2, 2, 2, 1.0, a.data(), 2, b.data(), 2, 0.0, d.data(), 2);
  EXPECT_EQ(c, a);
  EXPECT_EQ(d, a);
}

}  // namespace
}  // namespace birkhoff::kernels
