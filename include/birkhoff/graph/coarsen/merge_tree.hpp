#pragma once

#include <cstdint>
#include <vector>

namespace birkhoff::coarsen {

/// The merges of a greedy coarsening run, in order: what nope() returns. A prefix of the merges
/// is the run to a larger kept fraction (the loop's only use of its target is the stop test),
/// so one run at the smallest ratio serves every larger one (prefix(), then cut()).
///
/// Node ids: the N original nodes are 0..N-1; merge k creates id N + k from two live ids.
struct MergeTree {
  std::int64_t num_nodes = 0;  ///< N
  std::int64_t dim = 0;        ///< D, the feature dimension of the graph it was computed on
  std::int64_t num_edges = 0;  ///< E, the input's edges between distinct nodes
  std::int64_t target = 0;     ///< the number of super-nodes that was asked for
  /// (k, 3) int64 row-major: row k = [N + k, u, v], u < v, in merge (creation) order; the
  /// layout of the authors' merge tree.
  std::vector<std::int64_t> merges;
  /// (k) float64: the key of the queue entry popped for each merge (NOPE* keys are float32
  /// values widened exactly).
  std::vector<double> keys;
  /// False when the graph ran out of edges before reaching `target` (one super-node per
  /// connected component is the best possible); N - k > target then.
  bool reached_target = true;
  std::int64_t self_loops_dropped = 0;  ///< input self-loops, which the merges ignore
  std::int64_t duplicates_merged = 0;   ///< input entries that repeated an edge
  /// Input pairs listed in one orientation only / in both (AttributedGraph::one_way_pairs):
  /// NOPE reads every edge as undirected.
  std::int64_t one_way_pairs = 0;
  std::int64_t two_way_pairs = 0;
  std::int64_t heap_pushes = 0;  ///< E + the new nodes' degrees (as the reference counts)

  std::int64_t num_merges() const { return static_cast<std::int64_t>(keys.size()); }
};

/// The first N - n_coarse merges of `tree`: the run that stops at n_coarse super-nodes.
/// When the tree holds fewer merges because its run ran out of edges (reached_target false),
/// the result holds all of them and reached_target stays false.
/// @throws birkhoff::InvalidInput naming `n_coarse` outside [1, N] (N >= 1), or asking for more
///         merges than a tree that reached its own target holds.
MergeTree prefix(const MergeTree& tree, std::int64_t n_coarse);

/// n_coarse for a kept fraction: max(1, round_half_even(N * ratio)), as Python's round; 0 when
/// N = 0.
/// @throws birkhoff::InvalidInput naming `ratio` outside (0, 1] or NaN.
std::int64_t target_for_ratio(std::int64_t num_nodes, double ratio);

}  // namespace birkhoff::coarsen
