#pragma once

#include <cstdint>
#include <span>

#include "birkhoff/core/view.hpp"

namespace birkhoff::align {

/// Scores of an alignment against a ground truth; every fraction is over the t truth pairs.
struct AlignMetrics {
  std::int64_t pairs = 0;       ///< t
  double overlap = 0.0;         ///< fraction with perm[i] == j
  double overlap_unseeded = 0;  ///< the same over the pairs whose G1 node is not a seed
  bool exact = false;           ///< overlap == 1
  /// j among the top 1 / 5 / 10 of row i, ranking by the soft scores (ties rank first) or by
  /// the position in the top-k list; NaN when only a top-k list shorter than 10 (or 5) is known.
  double hits1 = 0, hits5 = 0, hits10 = 0;
  /// Mean of 1 / rank of j in row i (the same ranks); from a top-k list, a partner outside it
  /// counts 0 (MRR@k).
  double mrr = 0;
};

/// Scores a matching and its soft scores against a ground truth (the metrics of qpalign(),
/// whose numbers it reproduces when given its perm and soft matrix).
/// @param perm (n1) int64: node i of G1 matched to perm[i] of G2, or -1.
/// @param soft (n1, n2) float64 scores, larger = more likely (row i ranks the G2 candidates of
///        node i; any row stride).
/// @param truth (t, 2) int64 rows [node of G1, node of G2], a matching (no node twice per side).
/// @param seeds (k, 2) int64 known pairs, for overlap_unseeded; empty when there are none.
/// @throws birkhoff::InvalidInput naming `soft` for a row count other than n1, `truth` or
///         `seeds` for a wrong shape, an id out of range or a node repeated on one side.
/// Time O(t n2).
AlignMetrics score(std::span<const std::int64_t> perm, MatrixView<const double> soft,
                   MatrixView<const std::int64_t> truth, MatrixView<const std::int64_t> seeds = {});

/// The same from the top-k candidate lists instead of the soft scores.
/// @param topk (n1, k) int64: the G2 candidates of each G1 node, best first (the rank of j is
///        its position + 1). hits@m for m > k are NaN; a partner outside the list adds 0 to
///        the MRR.
/// @throws birkhoff::InvalidInput as above, naming `topk` for a row count other than n1.
/// Time O(t k).
AlignMetrics score(std::span<const std::int64_t> perm, MatrixView<const std::int64_t> topk,
                   MatrixView<const std::int64_t> truth, MatrixView<const std::int64_t> seeds = {});

}  // namespace birkhoff::align
