// Row kernels of Sinkhorn-Knopp matrix scaling (see scaling.hpp); built with -ffp-contract=off.
#include "birkhoff/kernels/scaling.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/target_clones.hpp"

namespace birkhoff::kernels {

BIRKHOFF_CLONES_AVX512 double scale_row(const double* row, const double* v, double* acc,
                                        std::int64_t m) {
  // 16 interleaved partial sums (4 independent AVX2 chains): fast, and the same summation
  // order, hence the same result, in every clone.
  constexpr std::int64_t kLanes = 16;
  double part[kLanes] = {};
  std::int64_t j0 = 0;
  for (; j0 + kLanes <= m; j0 += kLanes) {
    for (std::int64_t q = 0; q < kLanes; ++q) part[q] += row[j0 + q] * v[j0 + q];
  }
  for (std::int64_t j = j0; j < m; ++j) part[j - j0] += row[j] * v[j];
  double s = 0;
  for (const double x : part) s += x;
  const double ui = 1.0 / s;
#pragma omp simd
  for (std::int64_t j = 0; j < m; ++j) acc[j] += ui * row[j];
  return ui;
}

BIRKHOFF_CLONES_AVX512 void step_row(const double* x, const double* grad, double alpha, double* row,
                                     std::int64_t m) {
#pragma omp simd
  for (std::int64_t j = 0; j < m; ++j) row[j] = x[j] - alpha * grad[j];
}

BIRKHOFF_CLONES_AVX512 bool floor_row(double* row, std::int64_t m, double floor) {
  // x * 0 is 0 for finite x and NaN for NaN or inf: one vectorisable sum checks the row.
  double probe = 0;
#pragma omp simd reduction(+ : probe)
  for (std::int64_t j = 0; j < m; ++j) {
    probe += row[j] * 0.0;
    row[j] = std::max(row[j], floor);
  }
  return probe == 0.0;
}

BIRKHOFF_CLONES_AVX512 double scale_columns(double* row, double u, const double* v,
                                            std::int64_t m) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (std::int64_t j = 0; j < m; ++j) {
    row[j] *= u * v[j];
    s += row[j];
  }
  return s;
}

BIRKHOFF_CLONES_AVX512 void scale_rows4(const double* row0, std::int64_t stride, const double* v,
                                        double* acc, std::int64_t m, double* u) {
  // Each row's 16 partial sums in the same lanes and order as scale_row, and acc[j] gets the
  // four rows' terms one after the other (one load and store of acc for four rows; the dots'
  // 16 independent chains hide the add latency).
  using V4 = double __attribute__((vector_size(32)));
  constexpr std::int64_t kLanes = 16, kVectors = kLanes / 4;
  V4 part[4][kVectors];
  for (auto& row_part : part) {
    for (V4& x : row_part) x = V4{0, 0, 0, 0};
  }
  std::int64_t j0 = 0;
  for (; j0 + kLanes <= m; j0 += kLanes) {
    for (std::int64_t k = 0; k < kVectors; ++k) {
      V4 vk;
      std::memcpy(&vk, v + j0 + 4 * k, sizeof vk);
      for (std::int64_t r = 0; r < 4; ++r) {
        V4 x;
        std::memcpy(&x, row0 + r * stride + j0 + 4 * k, sizeof x);
        part[r][k] += x * vk;
      }
    }
  }
  for (std::int64_t r = 0; r < 4; ++r) {
    double lanes[kLanes];
    std::memcpy(lanes, part[r], sizeof lanes);
    const double* row = row0 + r * stride;
    for (std::int64_t j = j0; j < m; ++j) lanes[j - j0] += row[j] * v[j];
    double s = 0;
    for (const double x : lanes) s += x;
    u[r] = 1.0 / s;
  }
  const double *r0 = row0, *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
  const double u0 = u[0], u1 = u[1], u2 = u[2], u3 = u[3];
#pragma omp simd
  for (std::int64_t j = 0; j < m; ++j) {
    double a = acc[j];
    a += u0 * r0[j];
    a += u1 * r1[j];
    a += u2 * r2[j];
    a += u3 * r3[j];
    acc[j] = a;
  }
}

}  // namespace birkhoff::kernels
