#pragma once

#include "birkhoff/graph/coarsen/coarse_graph.hpp"
#include "birkhoff/graph/coarsen/merge_tree.hpp"
#include "birkhoff/graph/coarsen/nope_options.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::coarsen {

/// Greedy attributed-graph coarsening with NOPE or NOPE* [bai2026nope] (the authors' loop,
/// model/merge.py and model/merge_relax.py): repeatedly pop the lowest (key, lo, hi) edge whose
/// ends are both alive, merge it into a new super-node (size-weighted mean feature, union of
/// neighbourhoods) and score the new node's edges. Keys of older pairs are never re-scored
/// (the reference's lazy heap), so the merge order equals the authors' code. Self-loops of the
/// graph are ignored (and counted in the result).
///
/// @param graph undirected graph with (N, D) float32 features, D >= 1 (see graph::from_edge_index).
/// @param options method, ratio (fraction of nodes kept) or n_coarse, and knobs.
/// @return the merge tree; cut(tree, graph) gives the coarse graph (super-nodes, assignment,
///         mean features, coarse edges).
/// @throws birkhoff::InvalidInput naming `ratio` outside (0, 1] or NaN, `n_coarse` outside
///         [1, N]; birkhoff::Cancelled when the progress callback returns false.
/// Memory O(N D + E) (the caller's features are read in place; merged features use at most
/// N/2 extra rows; adjacency lists and the heap are compacted lazily) plus the bitset of the
/// dense phase (at most `bitset_bytes`). Time O(E (D + t)) for the start plus, per merge,
/// O((d_u + d_v) + d_n D + sum over m in N(n) of c(m) + d_n log E), t the per-edge
/// intersection cost and c(m) = min(d_m, d_n log d_m) with lists, or L / 64 words (L live
/// super-nodes) plus, for NOPE, |N(m) ∩ N(n)| log d_m once the bitset rows are in use.
MergeTree nope(const graph::AttributedGraph& graph, const NopeOptions& options = {});

}  // namespace birkhoff::coarsen
