#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/core/view.hpp"
#include "birkhoff/graph/align/balance.hpp"
#include "birkhoff/graph/align/lap.hpp"
#include "birkhoff/graph/align/qpalign_options.hpp"
#include "birkhoff/graph/align/score.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::align {

/// Why qpalign() stopped iterating.
enum class StopReason {
  MaxIter,    ///< the budget of max_iter iterations ran out
  Tolerance,  ///< the objective's relative change fell below tol (the reference's rule)
  Patience,   ///< the argmax bijection stayed the same for `patience` iterations
  Seeded,     ///< nothing to iterate: every node is fixed by a seed
};

/// How a pair is aligned: QPAlign on the whole pair, or on coarse graphs then refined
/// (multilevel.hpp); Auto chooses by size (choose_method()).
enum class Method { Auto, Dense, Multilevel };

/// The authors' settings for one kind of pair (presets.hpp); None: the options as given.
enum class Preset { None, Gaussian, Douban, AcmDblp };

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
  /// A stopping rule fired before max_iter ran out (stopped_by says which); false when the
  /// iteration budget did. The quality of the matching is in `metrics`, not here.
  bool converged = false;
  StopReason stopped_by = StopReason::MaxIter;
  std::int64_t nan_restarts = 0;  ///< steps retried from the last finite Pi with alpha halved
  double lambda_edge = 0, lambda_feature = 0;  ///< the weights used (after MLE weighting)
  /// matching_likelihood() of perm (presets.hpp): comparable between runs on the same pair.
  double likelihood = 0;
  Preset preset = Preset::None;  ///< the candidate qpalign_select() kept (None: a single run)
  /// Dense or Multilevel. For Multilevel, the fields from `objective` to `preset` describe the
  /// QPAlign run on the coarse graphs, and topk / topk_scores the refinement's candidates
  /// (perm[i] first, then by linearised gain).
  Method method = Method::Dense;
  std::int64_t coarse_nodes = 0;  ///< Multilevel: super-nodes of each coarse graph (else 0)
  /// Multilevel: F of the fine matching read from the coarse alignment, then after each accepted
  /// refinement round (non-increasing); empty for Dense.
  std::vector<double> refine_objective;
  bool has_metrics = false;  ///< options.truth was given
  AlignMetrics metrics;      ///< score(perm, soft, truth, seeds) when has_metrics
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
/// @param g1, g2 the two graphs (graph::from_edge_index or graph::from_adjacency, which check
///        ids, weights and feature values and name them with their suffix "1" / "2"); both
///        with features of the same dimension d, or neither.
/// @throws birkhoff::InvalidInput naming the argument: features in only one graph or with
///         different d, a graph without nodes, seeds or truth out of range or repeated (in
///         either column), bad options; birkhoff::Cancelled when the progress callback returns
///         false.
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

}  // namespace birkhoff::align
