#pragma once

#include <cstdint>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"

namespace birkhoff::align {

// QPAlign [huang2026qpalign]. The tags say where a choice comes from, as in docs/align.md:
// [R] the authors' code, [O] ours.

/// Initial point of the iteration (docs/align.md, "What is computed").
enum class Init {
  /// The authors' synthetic start [R]: S0[i,j] = max(<x_i, y_j>, 0) + 0.1 / (1 + |deg_A(i) -
  /// deg_B(j)|), deg = weighted out-degree (row sum), then balanced.
  Similarity,
  /// The authors' real-data start [R]: U[i,j] ~ Uniform(0,1) from `seed`, then balanced.
  Random,
  /// The barycentre J / m (deterministic; scipy's FAQ default) [O].
  Barycenter,
};

/// What a Barzilai-Borwein step does when the curvature estimate <S, Y> is negative (S = Pi_t -
/// Pi_{t-1}, Y = G_t - G_{t-1}; with gamma > 0 F is not convex, so this can happen).
enum class NegativeCurvature {
  /// The reference code's quirk (the default): <S, Y> is clamped to 1e-12, i.e. the maximum
  /// step 0.5 [R].
  Maximum,
  /// Keep the previous step (a safeguard) [O].
  Previous,
};

/// Settings of qpalign(). Defaults are the authors' synthetic Gaussian settings (their
/// run_gaussian.sh [R]); Douban uses lambda_edge 0.2, lambda_feature 0.8, gamma 0, 1000
/// iterations, 200 sweeps, step 5e-3, Init::Random.
struct QpAlignOptions {
  double lambda_edge = 0.1;     ///< weight of ||A Pi - Pi B||_F^2
  double lambda_feature = 0.9;  ///< weight of sum D[i,j] Pi[i,j]^2, D = squared distances
  double gamma = 0.1;           ///< weight of the concave penalty sum Pi - ||Pi||_F^2
  /// When both are set (in [0, 1)), replace lambda_edge : lambda_feature by the MLE-consistent
  /// rho / (4 (1 - rho^2)) : r / (2 (1 - r^2)), normalised to sum 1 [O].
  double mle_rho = -1.0, mle_r = -1.0;
  std::int64_t max_iter = 400;        ///< T, projected-gradient iterations
  std::int64_t sinkhorn_sweeps = 80;  ///< K, maximum balancing sweeps per projection
  /// Stop a balancing early once every row and column sum is within this of 1 (0 = always
  /// run K sweeps, as the reference); see balance().
  double sinkhorn_tol = 1e-9;
  /// Anderson acceleration of the balancing: window of past sweeps extrapolated (0 = plain
  /// Sinkhorn-Knopp, as the reference) [O]. Same stopping rule; fewer sweeps on the
  /// ill-conditioned matrices of real graphs (docs/align.md).
  std::int64_t sinkhorn_anderson = 20;
  double step = 1e-4;            ///< alpha0, the first (and non-BB) step
  bool barzilai_borwein = true;  ///< BB long steps <S,S> / <S,Y> clipped to [1e-5, 0.5]
  /// The BB step on negative curvature (docs/align.md: no effect on the results measured).
  NegativeCurvature bb_negative_curvature = NegativeCurvature::Maximum;
  double tol = 1e-7;  ///< stop when |f_t - f_{t-1}| / (1 + |f_{t-1}|) < tol
  /// Also stop once the row-wise argmax of Pi has been the same bijection for `patience`
  /// consecutive iterations (0 = off: the reference's stopping rule only) [O]. The BB steps
  /// cycle, so the reference rule rarely fires and the last iterate can be much worse than an
  /// early one (docs/align.md, "What is computed").
  std::int64_t patience = 5;
  Init init = Init::Similarity;
  std::uint64_t seed = 0;  ///< for Init::Random
  /// Known pairs (k, 2) int64 rows [node of G1, node of G2], fixed throughout (as scipy's
  /// partial_match): their rows and columns of Pi are one-hot.
  MatrixView<const std::int64_t> seeds;
  std::int64_t top_k = 10;   ///< candidates per node of G1 in the result (0 = none)
  bool return_soft = false;  ///< also return Pi restricted to real nodes, (n1, n2)
  /// Ground truth (t, 2) int64 rows [node of G1, node of G2] for the metrics (optional); a
  /// matching, as seeds: a node repeated on either side throws InvalidInput.
  MatrixView<const std::int64_t> truth;
  int num_threads = 0;  ///< OpenMP threads (0 = default); BLAS uses its own setting
  /// Called once per iteration with stage "qpalign" (done = iterations, total = max_iter);
  /// return false to cancel (qpalign() then throws birkhoff::Cancelled).
  ProgressCallback progress;
};

}  // namespace birkhoff::align
