// Scalar twin of the dense products (kernels/gemm.hpp). For tests.
#include "birkhoff/kernels/gemm.hpp"

namespace birkhoff::kernels {

void gemm_reference(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                    double alpha, const double* a, std::int64_t lda, const double* b,
                    std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double s = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
      for (std::int64_t p = 0; p < k; ++p) {
        const double ap = trans_a ? a[p * lda + i] : a[i * lda + p];
        const double bp = trans_b ? b[j * ldb + p] : b[p * ldb + j];
        s = s + (alpha * ap) * bp;
      }
      c[i * ldc + j] = s;
    }
  }
}

}  // namespace birkhoff::kernels
