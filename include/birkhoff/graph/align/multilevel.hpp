#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/graph/align/presets.hpp"
#include "birkhoff/graph/align/qpalign.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::align {

/// Settings of the multilevel alignment (docs/align.md, "Multilevel alignment") [O].
struct MultilevelOptions {
  Method method = Method::Auto;  ///< Auto: see choose_method()
  /// Auto aligns pairs of at most this many nodes (max(n1, n2)) densely; QPAlign's memory is
  /// about 6 N^2 float64 (1.2 GB at N = 5000).
  std::int64_t dense_max_nodes = 5000;
  std::int64_t coarse_nodes = 500;  ///< super-nodes of each coarse graph (NOPE*)
  std::int64_t coarse_top_k = 3;  ///< coarse partners of a super-node whose members are candidates
  /// Candidates per node from those members: the nearest in feature distance.
  std::int64_t fine_candidates = 16;
  /// Candidates per node and round from the partners' neighbourhoods: the largest edge gains.
  std::int64_t propagated = 32;
  std::int64_t refine_rounds = 30;  ///< maximum refinement rounds
};

/// The method that align_select() runs for `options.method`: Auto picks Multilevel when both
/// graphs have features, are undirected and max(n1, n2) > dense_max_nodes, else Dense.
Method choose_method(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                     const MultilevelOptions& options);

/// Multilevel QPAlign for large pairs [O], in four steps (docs/align.md):
/// 1. coarsen both graphs with NOPE* [bai2026nope] to K = min(coarse_nodes, n1, n2) super-nodes
///    (coarse edges weighted by the density of fine edges between the two super-nodes, scaled
///    to mean 1; features the members' mean);
/// 2. align the coarse graphs with qpalign_select() over `candidates` (seeds mapped to their
///    super-nodes, one per super-node);
/// 3. give each node of G1 the `options.fine_candidates` members of G2's super-nodes in the coarse
///    top-k of its own super-node nearest in features, and match by a sparse maximum-weight
///    assignment of -lambda_f D_ij (sparse_assignment());
/// 4. refine: each round linearises F at the current matching P, gain_ij = 4 lambda_e (A P
///    B)_ij - lambda_e ||B_j||^2 - lambda_f D_ij over the node's candidates, its partner and
///    the `propagated` best nodes of its neighbours' partners' neighbourhoods, solves the
///    sparse assignment, and keeps the new matching only if F (QPAlign's objective at a
///    permutation matrix, the gamma term 0) decreases; it stops at the first round that does
///    not, so refinement never worsens the matching of step 3.
/// lambda_e and lambda_f are those of the coarse run. Seeds fix their pairs at every level.
/// Memory O((n1 + n2) (D + K / n) + nnz + n (candidates + propagated)) plus QPAlign's 6 K^2
/// doubles; time per round O(sum over edges (i, l) of deg_B(perm l) + n (candidates +
/// propagated) D).
/// @throws birkhoff::InvalidInput as qpalign(), and naming `method` for graphs without
///         features or directed ones, `return_soft` (no dense Pi is formed) or a bad option.
Selection multilevel_select(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                            std::span<const Candidate> candidates,
                            const MultilevelOptions& options = {});

/// qpalign_select() or multilevel_select(), as choose_method() says.
Selection align_select(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                       std::span<const Candidate> candidates,
                       const MultilevelOptions& options = {});

/// QPAlign's objective at the permutation (n1 <= n2: injection) matrix P of `perm`:
/// lambda_e ||A P - P B||_F^2 + lambda_f sum_i D(i, perm i) (the gamma term vanishes there).
/// @throws birkhoff::InvalidInput naming `perm` when it is not an injection into [0, n2).
double matching_objective(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                          std::span<const std::int64_t> perm, double lambda_edge,
                          double lambda_feature);

}  // namespace birkhoff::align
