// Sparse-times-dense row kernels (see sparse.hpp); built with -ffp-contract=off.
#include "birkhoff/kernels/sparse.hpp"

#include <cstring>

#include "kernels/target_clones.hpp"

namespace birkhoff::kernels {
namespace {

template <int C>
[[gnu::always_inline]] inline void add_rows(bool assign, const double* w, const double* const* src,
                                            double* out, std::int64_t n) {
  if (assign) {
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) {
      double a = w[0] * src[0][j];
      for (int c = 1; c < C; ++c) a += w[c] * src[c][j];
      out[j] = a;
    }
  } else {
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) {
      double a = out[j];
      for (int c = 0; c < C; ++c) a += w[c] * src[c][j];
      out[j] = a;
    }
  }
}

// The four interleaved rows of `tile` (n x 4) against the columns of M^T.
BIRKHOFF_CLONES_AVX2 void gather4(const std::int64_t* indptr, const std::int32_t* indices,
                                  const double* values, std::int64_t n, const double* tile,
                                  double alpha, double* o0, std::int64_t stride) {
  using V4 = double __attribute__((vector_size(32)));
  V4 t;
  // Two columns side by side (independent chains), each summed in its own order.
  std::int64_t j = 0;
  for (; j + 2 <= n; j += 2) {
    V4 sa = {0, 0, 0, 0}, sb = {0, 0, 0, 0};
    std::int64_t qa = indptr[j], qb = indptr[j + 1];
    const std::int64_t ea = indptr[j + 1], eb = indptr[j + 2];
    for (; qa < ea && qb < eb; ++qa, ++qb) {
      std::memcpy(&t, tile + static_cast<std::int64_t>(indices[qa]) * 4, sizeof t);
      sa += t * values[qa];
      std::memcpy(&t, tile + static_cast<std::int64_t>(indices[qb]) * 4, sizeof t);
      sb += t * values[qb];
    }
    for (; qa < ea; ++qa) {
      std::memcpy(&t, tile + static_cast<std::int64_t>(indices[qa]) * 4, sizeof t);
      sa += t * values[qa];
    }
    for (; qb < eb; ++qb) {
      std::memcpy(&t, tile + static_cast<std::int64_t>(indices[qb]) * 4, sizeof t);
      sb += t * values[qb];
    }
    for (int r = 0; r < 4; ++r) {
      o0[r * stride + j] += alpha * sa[r];
      o0[r * stride + j + 1] += alpha * sb[r];
    }
  }
  for (; j < n; ++j) {
    V4 s = {0, 0, 0, 0};
    for (std::int64_t q = indptr[j]; q < indptr[j + 1]; ++q) {
      std::memcpy(&t, tile + static_cast<std::int64_t>(indices[q]) * 4, sizeof t);
      s += t * values[q];
    }
    for (int r = 0; r < 4; ++r) o0[r * stride + j] += alpha * s[r];
  }
}

}  // namespace

BIRKHOFF_CLONES_AVX2 void weighted_row_sum(bool assign, int count, const double* w,
                                           const double* const* src, double* out, std::int64_t n) {
  switch (count) {
    case 1:
      add_rows<1>(assign, w, src, out, n);
      break;
    case 2:
      add_rows<2>(assign, w, src, out, n);
      break;
    case 3:
      add_rows<3>(assign, w, src, out, n);
      break;
    default:
      add_rows<4>(assign, w, src, out, n);
  }
}

void csr_gather(const std::int64_t* indptr, const std::int32_t* indices, const double* values,
                std::int64_t n, const double* x, double alpha, double* out) {
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (std::int64_t q = indptr[j]; q < indptr[j + 1]; ++q) s += x[indices[q]] * values[q];
    out[j] += alpha * s;
  }
}

void csr_gather4(const std::int64_t* indptr, const std::int32_t* indices, const double* values,
                 std::int64_t n, const double* x, std::int64_t x_stride, double alpha, double* out,
                 std::int64_t out_stride, double* tile) {
  for (std::int64_t k = 0; k < n; ++k) {
    for (int r = 0; r < 4; ++r) tile[k * 4 + r] = x[r * x_stride + k];
  }
  gather4(indptr, indices, values, n, tile, alpha, out, out_stride);
}

void csr_scatter(const std::int64_t* indptr, const std::int32_t* indices, const double* values,
                 std::int64_t n, const double* x, double alpha, double* out) {
  for (std::int64_t k = 0; k < n; ++k) {
    const double w = alpha * x[k];
    for (std::int64_t q = indptr[k]; q < indptr[k + 1]; ++q) out[indices[q]] += w * values[q];
  }
}

}  // namespace birkhoff::kernels
