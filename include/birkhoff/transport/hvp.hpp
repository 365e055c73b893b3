#pragma once

#include <span>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"
#include "birkhoff/transport/solution.hpp"

namespace birkhoff::transport {

/// Settings of the conjugate-gradient solve inside every second-order product.
struct HvpOptions {
  /// CG iterations at most (each costs two streamed passes over the n x m pairs).
  int max_iter = 300;
  /// CG stops once |residual|_2 <= max(rtol |rhs|_2, atol).
  double rtol = 1e-6;
  double atol = 0.0;
  /// OpenMP threads; 0 = the solution's setting. Results do not depend on it.
  int num_threads = 0;
  /// Called once per CG iteration with stage "hvp"; return false to cancel (Cancelled).
  ProgressCallback progress;
};

/// A Hessian-vector product (or an implicit gradient) and how its CG solve went.
template <class T>
struct HvpResult {
  std::vector<T> x;  ///< (n, d) row-major: the x block of the product
  std::vector<T> y;  ///< (m, d) row-major: the y block (empty when not asked for)
  int cg_iterations = 0;
  bool converged = false;  ///< the CG residual met the tolerance
  double residual = 0;     ///< final relative CG residual |r| / |rhs|
};

/// Hessian-vector product of the OT value of a solution with respect to the points:
///     (out.x, out.y) = H (vx, vy),  H = d^2 OT / d(x, y)^2,
/// with the potentials' response found by linearising the optimality conditions (implicit
/// function theorem): one CG solve on the Schur complement diag(D_y) - P^T diag(1/D_x) P of
/// the (n + m) system [[diag(D_x), P], [P^T, diag(D_y)]], D = plan marginals / lambda (the
/// damping of an unbalanced side). Explicit part kappa r_i A_i - (kappa^2 / eps) sum_j P_ij
/// (x_i - y_j) <x_i - y_j, A_i>, with kappa = 2 cs: the half-cost (cs = 1/2) term is
/// kappa^2 / eps, which corrects the reference's 2 kappa / eps. Exact at the fixed point; the
/// plan used is the one of the gradients (f with the pre-extrapolation g).
/// @param vx (n, d) direction on x; vy (m, d) direction on y, or empty (zero). Row-major T.
/// @param want_y compute out.y (one more streamed pass pair); otherwise it stays empty.
/// @throws InvalidInput naming `vx` / `vy` on a shape mismatch or a non-finite entry; Cancelled.
/// Memory O((n + m) d); time (12 + 2 cg_iterations) streamed passes.
/// Source: [flashsinkhorn2026] §7.2, [luise2018] Thm. 2 (differentiability of the potentials).
template <class T>
HvpResult<T> hvp(const Solution<T>& solution, MatrixView<const T> vx, MatrixView<const T> vy = {},
                 bool want_y = false, const HvpOptions& options = {});

/// The same for the debiased divergence S = OT(a,b) - OT(a,a)/2 - OT(b,b)/2: the self terms
/// are differentiated with respect to the cloud on both of their sides.
template <class T>
HvpResult<T> hvp(const DivergenceSolution<T>& solution, MatrixView<const T> vx,
                 MatrixView<const T> vy = {}, bool want_y = false, const HvpOptions& options = {});

/// Settings of inverse_hvp's outer CG (its inner solves use `inner`).
struct InverseHvpOptions {
  int max_iter = 100;
  double rtol = 1e-6;
  double atol = 0.0;
  HvpOptions inner{300, 1e-8, 0.0, 0, {}};
};

/// What inverse_hvp found.
template <class T>
struct InverseHvpResult {
  std::vector<T> x;  ///< (n, d) the solution w of H_xx w = g
  int iterations = 0;
  bool converged = false;
  /// CG met a direction of non-positive curvature (H is indefinite there: the OT value is not
  /// convex in x) and stopped; x is the last iterate, still a descent direction for g.
  bool negative_curvature = false;
  double residual = 0;
};

/// Solves H_xx w = g (x block of the Hessian only) by CG whose products are hvp(): a Newton
/// direction -w for the gradient g. Each outer iteration is one hvp (an inner CG).
/// @param g (n, d) row-major right-hand side. @throws InvalidInput naming `g`; Cancelled.
/// Source: [flashsinkhorn2026] §7.4 (inverse_hvp), [nocedal2006] Alg. 5.2 (CG).
template <class T>
InverseHvpResult<T> inverse_hvp(const Solution<T>& solution, MatrixView<const T> g,
                                const InverseHvpOptions& options = {});

/// Gradient of a scalar function L(f, g) of the potentials with respect to x, y, a, b, given
/// grad_f = dL/df (n) and grad_g = dL/dg (m), by implicit differentiation of the optimality
/// conditions at the returned potentials (OTT's ImplicitDiff): one Schur-complement CG solve,
/// then streamed passes. It does not unroll the iterations, so a solve stopped short of
/// convergence is differentiated as if its potentials were the fixed point. Balanced problems
/// fix f, g only up to (f + t, g - t): the part of (grad_f, grad_g) along (1, -1) is dropped
/// (exact for any L invariant under that shift), and the weight gradients are defined up to a
/// common constant. A zero weight gets the limit value of its gradient.
/// @throws InvalidInput naming `grad_f` / `grad_g` on a length mismatch or non-finite entry.
/// Source: [luise2018] Thm. 2; [cuturi2022ott] (ImplicitDiff); [flashsinkhorn2026] §7.4.
template <class T>
Gradients<T> implicit_gradient(const Solution<T>& solution, std::span<const T> grad_f,
                               std::span<const T> grad_g, const HvpOptions& options = {},
                               HvpResult<T>* report = nullptr);

}  // namespace birkhoff::transport
