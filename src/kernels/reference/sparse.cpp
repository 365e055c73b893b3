// Scalar twins of the sparse row kernels (kernels/sparse.hpp). For tests.
#include "birkhoff/kernels/sparse.hpp"

namespace birkhoff::kernels {

void weighted_row_sum_reference(bool assign, int count, const double* w, const double* const* src,
                                double* out, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) {
    double a = assign ? w[0] * src[0][j] : out[j] + w[0] * src[0][j];
    for (int c = 1; c < count; ++c) a = a + w[c] * src[c][j];
    out[j] = a;
  }
}

void csr_gather_reference(const std::int64_t* indptr, const std::int32_t* indices,
                          const double* values, std::int64_t n, const double* x, double alpha,
                          double* out) {
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (std::int64_t q = indptr[j]; q < indptr[j + 1]; ++q) s = s + x[indices[q]] * values[q];
    out[j] = out[j] + alpha * s;
  }
}

void csr_scatter_reference(const std::int64_t* indptr, const std::int32_t* indices,
                           const double* values, std::int64_t n, const double* x, double alpha,
                           double* out) {
  for (std::int64_t k = 0; k < n; ++k) {
    for (std::int64_t q = indptr[k]; q < indptr[k + 1]; ++q) {
      out[indices[q]] = out[indices[q]] + (alpha * x[k]) * values[q];
    }
  }
}

}  // namespace birkhoff::kernels
