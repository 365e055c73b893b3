#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"

namespace birkhoff::transport {

/// Settings of the free-support Wasserstein barycenter.
struct BarycenterOptions {
  /// Fixed-point iterations at the most.
  int max_iter = 100;
  /// Stop when the support moves by less than this: sum_i |X_new,i - X_i|^2 (POT's stopThr).
  double tol = 1e-7;
  /// Each inner Sinkhorn solve stops at this relative marginal error.
  double marginal_tol = 1e-5;
  /// OpenMP threads; 0 = default. Results do not depend on it.
  int num_threads = 0;
  /// Called once per iteration with stage "barycenter"; return false to cancel.
  ProgressCallback progress;
};

/// The outcome of barycenter().
template <class T>
struct BarycenterResult {
  std::int64_t n = 0, d = 0, measures = 0;
  /// (n, d) the support of the barycenter, row-major.
  std::vector<T> points;
  /// sum_k weights_k OT_eps(barycenter, measure_k): each term the Sinkhorn loss of the last
  /// iteration's solve (GeomLoss's value <b, f> + <a_k, g>).
  double loss = 0;
  /// (K) each measure's OT_eps term.
  std::vector<double> losses;
  int iterations = 0;
  int inner_iterations = 0;
  /// The support moved by less than tol, and every inner solve of the last iteration converged.
  bool converged = false;
  /// sum_i |X_new,i - X_i|^2 of the last iteration.
  double displacement = 0;
};

/// Free-support Wasserstein barycenter of K weighted clouds [cuturi2014] Alg. 2, entropic:
/// the support X (n, d) with weights `support_weights` is moved by the fixed-point iteration
///   X_i <- sum_k weights_k (T_k Y_k)_i / b_i,
/// T_k the entropic OT plan between (X, b) and (Y_k, a_k) at epsilon with the squared Euclidean
/// cost, each a streamed Sinkhorn solve (converged to marginal_tol, warm-started from the
/// previous iteration's potentials): POT's free_support_sinkhorn_barycenter, in
/// O((n + max m_k) d) memory.
///
/// @param clouds K >= 1 point clouds (m_k, d), finite, of one dimension d.
/// @param cloud_weights K weight vectors (m_k), or empty spans for uniform; each of total mass
///        equal to the support's.
/// @param weights (K) non-negative weights of the measures, normalised to sum 1; empty for
///        uniform.
/// @param init (n, d) the initial support.
/// @param support_weights (n) the support's weights b; empty for uniform.
/// @param epsilon > 0 in cost units (blur^2).
/// @throws InvalidInput naming `clouds`, `cloud_weights`, `weights`, `init`, `support_weights`,
///         `epsilon`, `max_iter`, `tol`, `marginal_tol` or `num_threads`; Cancelled.
template <class T>
BarycenterResult<T> barycenter(std::span<const MatrixView<const T>> clouds,
                               std::span<const std::span<const T>> cloud_weights,
                               std::span<const double> weights, MatrixView<const T> init,
                               std::span<const T> support_weights, double epsilon,
                               const BarycenterOptions& options = {});

}  // namespace birkhoff::transport
