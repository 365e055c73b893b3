#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"
#include "birkhoff/transport/cost.hpp"

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
/// previous iteration's potentials when the support moved by an RMS of at most a fifth of the
/// blur sqrt(epsilon)): POT's free_support_sinkhorn_barycenter, in
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

/// Settings of the fixed-support barycenter.
struct FixedBarycenterOptions {
  /// The debiased Sinkhorn barycenter [janati2020] (true) or the entropic one of iterative
  /// Bregman projections [benamou2015] (false, POT's ot.bregman.barycenter).
  bool debias = true;
  /// Iterations at the most (one pass over every measure each).
  int max_iter = 2000;
  /// Stop when the plans' marginals on the support agree, sum_k weights_k |P_k^T 1 - q|_1 / |q|_1,
  /// and q's relative change in one iteration, |q_new - q|_1 / |q_new|_1, both fall below this.
  double tol = 1e-7;
  /// OpenMP threads; 0 = default. Results do not depend on it.
  int num_threads = 0;
  /// Called once per iteration with stage "barycenter" and the marginal error; false cancels.
  ProgressCallback progress;
};

/// The outcome of fixed_support_barycenter().
template <class T>
struct FixedBarycenterResult {
  std::int64_t n = 0, measures = 0;
  /// (n) the barycenter's weights q on the support.
  std::vector<T> weights;
  /// sum_k weights_k S_eps(q, measure_k), the debiased Sinkhorn divergence [feydy2019] eq. (9)
  /// (debias) or OT_eps(q, measure_k) (plain), each from a converged solve at epsilon.
  double loss = 0;
  /// (K) each measure's term of loss.
  std::vector<double> losses;
  int iterations = 0;
  /// The marginal error and q's change fell below tol.
  bool converged = false;
  /// sum_k weights_k |P_k^T 1 - q|_1 / |q|_1 at the last iteration.
  double marginal_error = 0;
};

/// Entropic Wasserstein barycenter on a fixed support X (n, d): the weights q minimising
/// sum_k weights_k S_eps(q, measure_k) (debias, [janati2020] Alg. 1) or
/// sum_k weights_k OT_eps(q, measure_k) ([benamou2015], debias false), in the log domain: per
/// iteration one streamed LogSumExp each way between X and every cloud, and one from X to
/// itself for the debiasing potential d (log q = sum_k weights_k log(K_k^T u_k) + log d,
/// log d <- (log d + log q - log K d) / 2). The measures may live on their own supports
/// (m_k, d); a shared support with K histograms is POT's ot.bregman.barycenter_debiased.
/// Computed in float64; memory O((n + max m_k) d + K n), the n x m_k costs are never formed.
///
/// @param support (n, d) the fixed support X, finite.
/// @param clouds K >= 1 supports (m_k, d) of the measures, finite, of X's dimension.
/// @param cloud_weights K weight vectors (m_k), or empty for uniform; all of one total mass.
/// @param weights (K) non-negative weights of the measures, normalised to sum 1; empty for
///        uniform.
/// @param epsilon > 0 in cost units (blur^p).
/// @param cost the ground cost (any of the registry).
/// @throws InvalidInput naming `support`, `clouds`, `cloud_weights`, `weights`, `epsilon`,
///         `max_iter`, `tol` or `num_threads`; Cancelled.
template <class T>
FixedBarycenterResult<T> fixed_support_barycenter(MatrixView<const T> support,
                                                  std::span<const MatrixView<const T>> clouds,
                                                  std::span<const std::span<const T>> cloud_weights,
                                                  std::span<const double> weights, double epsilon,
                                                  const Cost& cost = Cost(),
                                                  const FixedBarycenterOptions& options = {});

}  // namespace birkhoff::transport
