#pragma once

#include <cstdint>

namespace birkhoff::kernels {

/// C = alpha op(A) op(B) + beta C for row-major float64 matrices, op(X) = X or X^T:
/// op(A) (m, k), op(B) (k, n), C (m, n), leading dimensions (row strides) in elements. Through
/// the system BLAS (cblas_dgemm), which picks its own threads and summation order.
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc);

/// y = alpha op(A) x + beta y for a row-major (m, n) float64 matrix A (leading dimension lda)
/// and contiguous vectors, through the system BLAS (cblas_dgemv): x has n entries and y m
/// (op(A) = A), or m and n (op(A) = A^T).
void gemv(bool trans_a, std::int64_t m, std::int64_t n, double alpha, const double* a,
          std::int64_t lda, const double* x, double beta, double* y);

/// The same product by plain loops, one row of C at a time, for small sizes where a threaded
/// BLAS call costs more than the work: C[i, :] = beta C[i, :] (zeros when beta = 0), then
/// C[i, :] += (alpha op(A)[i, p]) op(B)[p, :] for p = 0, ..., k - 1 in order. One thread.
void gemm_rows(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
               double alpha, const double* a, std::int64_t lda, const double* b, std::int64_t ldb,
               double beta, double* c, std::int64_t ldc);

/// Scalar twin for tests: the triple loop of gemm_rows' order (equal to it bit for bit, and to
/// gemm up to rounding).
void gemm_reference(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                    double alpha, const double* a, std::int64_t lda, const double* b,
                    std::int64_t ldb, double beta, double* c, std::int64_t ldc);

}  // namespace birkhoff::kernels
