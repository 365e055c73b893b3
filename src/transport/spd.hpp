// PRIVATE: the one small dense SPD solve (Anderson's least squares, the multiscale bounds'
// slopes): Cholesky in place, then the two triangular solves.
#pragma once

#include <cmath>
#include <cstdint>

namespace birkhoff::transport::detail {

/// Solves A x = b for a k x k symmetric positive definite A (row-major, lower triangle read and
/// overwritten by its Cholesky factor); b becomes x. Returns false, b unspecified, when a pivot
/// is not positive (A is not positive definite to working precision).
inline bool spd_solve(double* a, double* b, std::int64_t k) {
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t q = 0; q < p; ++q) a[p * k + p] -= a[p * k + q] * a[p * k + q];
    if (!(a[p * k + p] > 0.0)) return false;
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
  return true;
}

}  // namespace birkhoff::transport::detail
