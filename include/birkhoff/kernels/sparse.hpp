#pragma once

#include <cstdint>

namespace birkhoff::kernels {

// Products of a sparse matrix M with dense float64 rows. M is CSR with `n` rows: the entries
// of row k are values[q] in column indices[q] for q in [indptr[k], indptr[k + 1]). Every
// kernel adds its terms in a fixed order, so its values do not depend on the SIMD target.

/// out[j] = (assign ? 0 : out[j]) + w[0] src[0][j] + ... + w[count-1] src[count-1][j], the
/// terms added left to right: the values of `count` passes of out += w[c] src[c] (count in
/// [1, 4]). Sizes n.
void weighted_row_sum(bool assign, int count, const double* w, const double* const* src,
                      double* out, std::int64_t n);

/// out[j] += alpha * sum_q x[indices[q]] values[q] over the entries q of row j of M, in order:
/// out += alpha x M^T for the row x (size n; column j of M^T is row j of M).
void csr_gather(const std::int64_t* indptr, const std::int32_t* indices, const double* values,
                std::int64_t n, const double* x, double alpha, double* out);

/// csr_gather on four rows at once, x_r = x + r * x_stride into out_r = out + r * out_stride
/// (r < 4), with the same values; `tile` is scratch of 4 n doubles (the rows interleaved, so
/// that each term is one vector load, multiply and add).
void csr_gather4(const std::int64_t* indptr, const std::int32_t* indices, const double* values,
                 std::int64_t n, const double* x, std::int64_t x_stride, double alpha, double* out,
                 std::int64_t out_stride, double* tile);

/// out += alpha x M for the row x (size n): out[indices[q]] += (alpha x[k]) values[q] for the
/// rows k of M in order.
void csr_scatter(const std::int64_t* indptr, const std::int32_t* indices, const double* values,
                 std::int64_t n, const double* x, double alpha, double* out);

/// Scalar twins for tests (the same values).
void weighted_row_sum_reference(bool assign, int count, const double* w, const double* const* src,
                                double* out, std::int64_t n);
void csr_gather_reference(const std::int64_t* indptr, const std::int32_t* indices,
                          const double* values, std::int64_t n, const double* x, double alpha,
                          double* out);
void csr_scatter_reference(const std::int64_t* indptr, const std::int32_t* indices,
                           const double* values, std::int64_t n, const double* x, double alpha,
                           double* out);

}  // namespace birkhoff::kernels
