#include "birkhoff/transport/anderson.hpp"

#include <algorithm>
#include <cmath>

#include "transport/spd.hpp"

namespace birkhoff::transport {

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
  if (!detail::spd_solve(a, b, k)) {
    reset();
    x = t;
    return;
  }
  x = t;
  for (std::int64_t p = 0; p < k; ++p) {
    const double* dt = dt_.data() + p * n;
    for (std::int64_t j = 0; j < n; ++j) x[j] -= b[p] * dt[j];
  }
}

}  // namespace birkhoff::transport
