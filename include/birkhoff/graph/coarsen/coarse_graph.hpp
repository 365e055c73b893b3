#pragma once

#include <cstdint>
#include <vector>

#include "birkhoff/core/view.hpp"
#include "birkhoff/graph/coarsen/merge_tree.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::coarsen {

/// A coarse graph: which super-node each node of the fine graph belongs to (the fine-to-coarse
/// mapping) and the graph of the K super-nodes, as NetworKit's GraphCoarsening returns them.
/// Super-node c is the c-th in `sizes`, `members`, `features` and the coarse edges.
struct CoarseGraph {
  std::int64_t num_nodes = 0;            ///< N, nodes of the fine graph
  std::int64_t dim = 0;                  ///< D
  std::vector<std::int64_t> assignment;  ///< (N) int64: the super-node of each fine node
  std::vector<std::int64_t> sizes;       ///< (K) int64: fine nodes per super-node, >= 1
  /// (K + 1) offsets and (N) fine ids: the members of super-node c are
  /// members[members_indptr[c] .. members_indptr[c + 1]), ascending.
  std::vector<std::int64_t> members_indptr, members;
  /// (K, D) row-major float32: the mean of the members' feature rows (summed in float64).
  std::vector<float> features;
  /// (2, E_c) int64 row-major: coarse edges, both orientations, sorted by (row 0, row 1), no
  /// self-loops, no repeats.
  std::vector<std::int64_t> edge_index;
  /// (E_c) int64: the number of fine edges between the two super-nodes of each coarse edge
  /// (empty when CutOptions::edge_weights is false).
  std::vector<std::int64_t> edge_weight;
  /// (K) int64, for a cut of a merge tree: the tree id of each super-node (ascending); empty
  /// otherwise.
  std::vector<std::int64_t> roots;

  std::int64_t num_super_nodes() const { return static_cast<std::int64_t>(sizes.size()); }
  std::int64_t num_coarse_edges() const { return static_cast<std::int64_t>(edge_index.size()) / 2; }
};

/// Settings of cut() and contract().
struct CutOptions {
  bool edge_weights = true;  ///< also count the fine edges behind each coarse edge
  int num_threads = 0;       ///< OpenMP threads (0 = default); the result does not depend on it
};

/// The coarse graph after all the merges of `tree`: the super-nodes are the tree's roots in
/// ascending id order. Self-loops of the graph do not enter the coarse edges.
/// @param graph the graph the tree was computed on, with its (N, D) features.
/// @throws birkhoff::InvalidInput naming `graph` when its N or D differ from the tree's.
/// Time and memory O(N D + E).
CoarseGraph cut(const MergeTree& tree, const graph::AttributedGraph& graph,
                const CutOptions& options = {});

/// The coarse graph of any fine-to-coarse mapping (graph contraction): super-node c gathers the
/// nodes i with assignment[i] = c; its feature is their mean, and two super-nodes are adjacent
/// when a fine edge joins them.
/// @param assignment (N) int64 values in [0, K), each of 0..K-1 taken at least once.
/// @throws birkhoff::InvalidInput naming `assignment` for a wrong length, a value outside
///         [0, K) or an empty super-node.
CoarseGraph contract(const graph::AttributedGraph& graph, std::vector<std::int64_t> assignment,
                     std::int64_t num_super_nodes, const CutOptions& options = {});

/// Lifting: out[i, :] = coarse[assignment[i], :], i.e. out = P coarse with P the (N, K) 0/1
/// assignment matrix. coarse (K, C), out (N, C) float32, any row strides.
/// @throws birkhoff::InvalidInput naming `coarse` or `out` on a shape mismatch.
void lift(const CoarseGraph& c, MatrixView<const float> coarse, MatrixView<float> out);

/// Pooling: out[c, :] = sum (or mean when `mean`) of values[i, :] over the members of
/// super-node c, i.e. out = P^T values (divided by sizes), summed in float64. values (N, C),
/// out (K, C) float32.
/// @throws birkhoff::InvalidInput naming `values` or `out` on a shape mismatch.
void pool(const CoarseGraph& c, MatrixView<const float> values, MatrixView<float> out,
          bool mean = true);

}  // namespace birkhoff::coarsen
