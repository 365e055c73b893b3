#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"
#include "birkhoff/graph/align/lap.hpp"
#include "birkhoff/graph/align/score.hpp"
#include "birkhoff/graph/graph.hpp"

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

/// The output of qpalign().
struct Alignment {
  std::int64_t n1 = 0, n2 = 0;  ///< sizes of G1 and G2
  /// (n1) int64: node i of G1 is matched to node perm[i] of G2, or -1 when it was matched to a
  /// padding node (only when n1 > n2).
  std::vector<std::int64_t> perm;
  std::int64_t top_k = 0;  ///< k actually returned (min(options.top_k, n2))
  /// (n1, k) int64 / float64: the k nodes of G2 with the largest Pi[i, :], best first, and
  /// their Pi values (a seed row is one-hot: its partner first, then others at 0).
  std::vector<std::int64_t> topk;
  std::vector<double> topk_scores;
  std::vector<double> soft;       ///< (n1, n2) float64 Pi when options.return_soft, else empty
  std::vector<double> objective;  ///< F(Pi_t) per iteration (not monotone: BB steps)
  std::int64_t iterations = 0;
  bool converged = false;         ///< the relative objective change fell below tol
  bool stable = false;            ///< stopped by `patience` (the argmax bijection stopped changing)
  std::int64_t nan_restarts = 0;  ///< steps retried from the last finite Pi with alpha halved
  double lambda_edge = 0, lambda_feature = 0;  ///< the weights used (after MLE weighting)
  bool has_metrics = false;                    ///< options.truth was given
  AlignMetrics metrics;                        ///< score(perm, soft, truth, seeds) when has_metrics
};

/// QPAlign [huang2026qpalign]: minimise over doubly-stochastic Pi
///   F(Pi) = lambda_e ||A Pi - Pi B||_F^2 + lambda_f sum_ij D_ij Pi_ij^2 + gamma (sum Pi -
///   ||Pi||^2)
/// with D_ij = ||x_i - y_j||^2, by projected gradient with Barzilai-Borwein steps and Sinkhorn
/// balancing [sinkhorn1967], then round by an exact linear assignment maximising
/// sum_i Pi[i, perm(i)] (docs/align.md, "What is computed").
///
/// Deviations from the reference code, all [O]: the balancing keeps its potentials in log space
/// and floors entries at 1e-100 instead of 0 (no zero rows, no NaN), stops early at
/// sinkhorn_tol and is Anderson-accelerated (sinkhorn_anderson); the iteration also stops once
/// the rounded matching is stable (patience); a non-finite step is retried from the last finite Pi
/// with alpha halved; unequal sizes are padded with isolated nodes whose feature distance to every
/// node is the mean of D over real pairs; seeds fix their rows and columns of Pi.
///
/// Direction: perm maps G1 -> G2 (node i of G1 to node perm[i] of G2), and A Pi - Pi B keeps
/// A^T, B^T in the gradient, so directed graphs are aligned without symmetrising.
/// A, B are CSR (sparse products O(nnz n)) unless denser than 1/16, then dense BLAS GEMMs.
///
/// @throws birkhoff::InvalidInput naming the argument: ids out of range, wrong shapes, NaN/inf
///         weights, adjacency or features, features in only one graph or with different d,
///         conflicting repeated edges, seeds out of range or repeated (in either column), bad
///         options; birkhoff::Cancelled when the progress callback returns false.
/// Memory about 6 N^2 doubles with N = max(n1, n2) (+ 2 N^2 for dense graphs). Time per
/// iteration O(N (nnz(A) + nnz(B)) + K N^2), or O(N^3) for dense graphs.
Alignment qpalign(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                  const QpAlignOptions& options = {});

/// F(Pi) and its gradient (docs/align.md, "What is computed") for equal sizes n and a dense Pi (n,
/// n) row-major; `gradient` (n*n) receives 2 lambda_e (A^T E - E B^T) + 2 lambda_f D∘Pi + gamma (J
/// - 2 Pi), E = A Pi - Pi B. Seeds and init in `options` are ignored. For tests.
double objective_and_gradient(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                              const QpAlignOptions& options, std::span<const double> pi,
                              std::span<double> gradient);

/// Report of balance().
struct BalanceReport {
  std::int64_t sweeps = 0;
  double row_error = 0;  ///< max_i |sum_j M_ij - 1| of the result (its columns sum to 1)
};

/// Sinkhorn-Knopp scaling [sinkhorn1967] of a non-negative square matrix to doubly stochastic
/// (the KL projection onto the Birkhoff polytope; the reference's Balance_K [R]), in place.
/// Entries below 1e-100 (and negatives) are raised to 1e-100. Each sweep scales the rows to sum
/// to 1 and measures the column error delta = max_j |column sum - 1|; the balancing stops once
/// delta <= tol / (1 + tol) or after `max_sweeps` sweeps, then scales the columns: they sum to 1
/// up to rounding and, when it stopped on tol, every row within tol of 1. `anderson` > 0
/// extrapolates the column potentials from that many past sweeps (Anderson acceleration
/// [walker2011anderson]; 0 = plain Sinkhorn-Knopp, the reference).
/// @throws birkhoff::InvalidInput naming `matrix` when it is not square or holds NaN/inf,
///         `max_sweeps` when < 1, `anderson` when < 0.
BalanceReport balance(MatrixView<double> matrix, std::int64_t max_sweeps, double tol,
                      int num_threads = 0, std::int64_t anderson = 0);

}  // namespace birkhoff::align
