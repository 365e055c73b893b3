// Dense float64 products: the system BLAS, and plain row loops for small sizes.
#include "birkhoff/kernels/gemm.hpp"

#include <cblas.h>

namespace birkhoff::kernels {

void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

void gemv(bool trans_a, std::int64_t m, std::int64_t n, double alpha, const double* a,
          std::int64_t lda, const double* x, double beta, double* y) {
  cblas_dgemv(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), alpha, a, static_cast<int>(lda), x, 1, beta, y, 1);
}

void gemm_rows(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
               double alpha, const double* a, std::int64_t lda, const double* b, std::int64_t ldb,
               double beta, double* c, std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i) {
    double* o = c + i * ldc;
    for (std::int64_t j = 0; j < n; ++j) o[j] = beta == 0.0 ? 0.0 : beta * o[j];
    for (std::int64_t p = 0; p < k; ++p) {
      const double w = alpha * (trans_a ? a[p * lda + i] : a[i * lda + p]);
      if (trans_b) {
        for (std::int64_t j = 0; j < n; ++j) o[j] += w * b[j * ldb + p];
      } else {
        const double* src = b + p * ldb;
#pragma omp simd
        for (std::int64_t j = 0; j < n; ++j) o[j] += w * src[j];
      }
    }
  }
}

}  // namespace birkhoff::kernels
