#include "graph/align/balance.hpp"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BIRKHOFF_SIMD_CLONE [[gnu::target_clones("arch=icelake-server", "avx2", "default")]]
#else
#define BIRKHOFF_SIMD_CLONE
#endif

namespace birkhoff::align::detail {

BIRKHOFF_SIMD_CLONE double scale_row(const double* row, const double* v, double* acc,
                                     std::int64_t m) {
  // 16 interleaved partial sums (4 independent AVX2 chains): fast, and the same summation
  // order, hence the same result, in both clones.
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

BIRKHOFF_SIMD_CLONE void step_row(const double* x, const double* grad, double alpha, double* row,
                                  std::int64_t m) {
#pragma omp simd
  for (std::int64_t j = 0; j < m; ++j) row[j] = x[j] - alpha * grad[j];
}

BIRKHOFF_SIMD_CLONE bool floor_row(double* row, std::int64_t m) {
  // x * 0 is 0 for finite x and NaN for NaN or inf: one vectorisable sum checks the row.
  double probe = 0;
#pragma omp simd reduction(+ : probe)
  for (std::int64_t j = 0; j < m; ++j) {
    probe += row[j] * 0.0;
    row[j] = std::max(row[j], kFloor);
  }
  return probe == 0.0;
}

BIRKHOFF_SIMD_CLONE double scale_columns(double* row, double u, const double* v, std::int64_t m) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (std::int64_t j = 0; j < m; ++j) {
    row[j] *= u * v[j];
    s += row[j];
  }
  return s;
}

BIRKHOFF_SIMD_CLONE void scale_rows4(const double* row0, std::int64_t stride, const double* v,
                                     double* acc, std::int64_t m, double* u) {
  // scale_row on four rows at once, with the same values: each row's 16 partial sums in the
  // same lanes and order, and acc[j] gets the four rows' terms one after the other (one load
  // and store of acc for four rows; the dots' 16 independent chains hide the add latency).
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

Anderson::Anderson(std::int64_t n, std::int64_t memory)
    : n_(n),
      memory_(memory),
      dr_(static_cast<std::size_t>(memory * n)),
      dt_(dr_.size()),
      gram_(static_cast<std::size_t>(memory * memory)),
      chol_(gram_.size()),
      dots_(static_cast<std::size_t>(memory)),
      last_r_(static_cast<std::size_t>(memory > 0 ? n : 0)),
      last_t_(last_r_.size()),
      r_(last_r_.size()) {}

void Anderson::reset() {
  count_ = 0;
  head_ = 0;
  has_last_ = false;
}

void Anderson::dot_rows(const double* x) {
  // The count_ sums run side by side (independent chains), each in the order of j.
  std::fill(dots_.begin(), dots_.begin() + count_, 0.0);
  for (std::int64_t j = 0; j < n_; ++j) {
    const double xj = x[j];
    for (std::int64_t q = 0; q < count_; ++q) dots_[q] += xj * dr_[q * n_ + j];
  }
}

void Anderson::step(std::vector<double>& x, const std::vector<double>& t) {
  if (memory_ == 0) {
    x = t;
    return;
  }
  const std::int64_t n = n_;
  for (std::int64_t j = 0; j < n; ++j) r_[j] = t[j] - x[j];
  if (has_last_) {
    // New differences into slot head_, then its row and column of the Gram matrix.
    double* dr = dr_.data() + head_ * n;
    double* dt = dt_.data() + head_ * n;
    for (std::int64_t j = 0; j < n; ++j) {
      dr[j] = r_[j] - last_r_[j];
      dt[j] = t[j] - last_t_[j];
    }
    count_ = std::min(count_ + 1, memory_);
    dot_rows(dr);
    for (std::int64_t q = 0; q < count_; ++q) {
      gram_[head_ * memory_ + q] = dots_[q];
      gram_[q * memory_ + head_] = dots_[q];
    }
    head_ = (head_ + 1) % memory_;
  }
  last_r_ = r_;
  last_t_ = t;
  has_last_ = true;
  if (count_ == 0) {
    x = t;
    return;
  }
  // gamma = argmin |r - dR gamma|: normal equations (Gram + tiny ridge), Cholesky.
  const std::int64_t k = count_;
  double* const a = chol_.data();  // k x k
  dot_rows(r_.data());
  double* const b = dots_.data();
  double trace = 0;
  for (std::int64_t p = 0; p < k; ++p) trace += gram_[p * memory_ + p];
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t q = 0; q < k; ++q) a[p * k + q] = gram_[p * memory_ + q];
    a[p * k + p] += 1e-12 * trace;
  }
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t q = 0; q < p; ++q) a[p * k + p] -= a[p * k + q] * a[p * k + q];
    if (!(a[p * k + p] > 0.0)) {
      reset();
      x = t;
      return;
    }
    a[p * k + p] = std::sqrt(a[p * k + p]);
    for (std::int64_t i = p + 1; i < k; ++i) {
      for (std::int64_t q = 0; q < p; ++q) a[i * k + p] -= a[i * k + q] * a[p * k + q];
      a[i * k + p] /= a[p * k + p];
    }
  }
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t q = 0; q < p; ++q) b[p] -= a[p * k + q] * b[q];
    b[p] /= a[p * k + p];
  }
  for (std::int64_t p = k - 1; p >= 0; --p) {
    for (std::int64_t q = p + 1; q < k; ++q) b[p] -= a[q * k + p] * b[q];
    b[p] /= a[p * k + p];
  }
  x = t;
  for (std::int64_t p = 0; p < k; ++p) {
    const double* dt = dt_.data() + p * n;
    for (std::int64_t j = 0; j < n; ++j) x[j] -= b[p] * dt[j];
  }
}

}  // namespace birkhoff::align::detail
