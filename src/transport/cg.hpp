// PRIVATE: the one preconditioned conjugate-gradient solve of the second-order products (the
// Schur complement of the HVP, the inverse HVP); the operator is a callable, so each caller's
// streamed plan products stay where they are.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace birkhoff::transport::detail {

struct CgResult {
  std::vector<double> x;
  int iterations = 0;
  bool converged = false;
  bool negative_curvature = false;  ///< a direction with <d, A d> <= 0 stopped the solve
  double residual = 0;              ///< |r| / |rhs| at the end (0 for a zero rhs)
};

/// Solves A x = rhs for a symmetric positive (semi-)definite A, from x = 0: apply(v) returns
/// A v; `diagonal` (empty for none) is a Jacobi preconditioner M = diag(diagonal); stops once
/// |r| <= max(rtol |rhs|, atol), after max_iter iterations, or at a non-positive curvature;
/// on_iteration(k) is called after iteration k.
template <class Apply, class OnIteration>
CgResult conjugate_gradient(const Apply& apply, const std::vector<double>& rhs,
                            const std::vector<double>& diagonal, int max_iter, double rtol,
                            double atol, const OnIteration& on_iteration) {
  const std::size_t m = rhs.size();
  auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  };
  auto precondition = [&](const std::vector<double>& r) {
    if (diagonal.empty()) return r;
    std::vector<double> s(m);
    for (std::size_t j = 0; j < m; ++j) s[j] = r[j] / diagonal[j];
    return s;
  };
  CgResult out;
  out.x.assign(m, 0.0);
  std::vector<double> r = rhs;
  const double norm0 = std::sqrt(dot(rhs, rhs));
  const double target = std::max(rtol * norm0, atol);
  if (norm0 <= target || norm0 == 0) {
    out.converged = true;
    return out;
  }
  std::vector<double> s = precondition(r), dir = s;
  double rs = dot(r, s), norm = norm0;
  for (int it = 0; it < max_iter; ++it) {
    const std::vector<double> ad = apply(dir);
    const double curvature = dot(dir, ad);
    if (!(curvature > 0)) {
      out.negative_curvature = true;
      break;
    }
    const double alpha = rs / curvature;
    for (std::size_t j = 0; j < m; ++j) {
      out.x[j] += alpha * dir[j];
      r[j] -= alpha * ad[j];
    }
    ++out.iterations;
    norm = std::sqrt(dot(r, r));
    on_iteration(out.iterations);
    if (norm <= target) break;
    s = precondition(r);
    const double rs_new = dot(r, s);
    const double beta = rs_new / rs;
    rs = rs_new;
    for (std::size_t j = 0; j < m; ++j) dir[j] = s[j] + beta * dir[j];
  }
  out.residual = norm / norm0;
  out.converged = norm <= target;
  return out;
}

}  // namespace birkhoff::transport::detail
