#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/core/view.hpp"

namespace birkhoff::graph {

/// A graph on N nodes with optional edge weights and node features, stored as CSR: the one
/// input of the coarsening and the alignment.
///
/// Row i of the CSR lists the out-neighbours of node i in ascending order, without repeats:
/// an entry (i, j) stands for the adjacency entry A[i, j] (weight 1 when `weights` is empty).
/// Undirected graphs are symmetric: an edge {i, j}, i != j, appears in row i and in row j. A
/// self-loop (i, i) appears once, in row i: the alignment uses it as A[i, i]; NOPE ignores it.
/// Node ids are int32 inside the CSR (N < 2^31 - 1), int64 at every API boundary.
/// The features are borrowed: the caller keeps `x` alive while the graph is used.
struct AttributedGraph {
  std::int64_t num_nodes = 0;         ///< N
  bool directed = false;              ///< false: the CSR is symmetric
  std::vector<std::int64_t> indptr;   ///< (N + 1) row offsets into `indices`
  std::vector<std::int32_t> indices;  ///< (nnz) neighbour ids, rows sorted ascending
  std::vector<double> weights;        ///< (nnz) finite float64 entry weights, or empty (all 1)
  MatrixView<const float> x;          ///< (N, D) row-major float32, finite; or empty (D = 0)
  /// What the builder did with its input: the input entries (u, u), each one counted...
  std::int64_t self_loops = 0;
  /// ... and the input entries u != v that repeated an edge already seen (in either
  /// orientation when undirected: a PyG-style edge_index listing both reports E here).
  std::int64_t duplicates_merged = 0;
  /// Undirected builds from an edge list: the node pairs {u, v}, u != v, that the input lists
  /// in one orientation only, and those it lists in both. A list that gives every edge once
  /// (one_way only) or in both orientations (two_way only) is an undirected encoding; one that
  /// mixes them looks like a directed graph read as undirected (see mixed_orientation()).
  /// Both 0 for directed builds and for from_adjacency.
  std::int64_t one_way_pairs = 0;
  std::int64_t two_way_pairs = 0;

  /// True when an undirected build's edge list gives some pairs in both orientations and
  /// others in one only: a directed graph, probably, that was read as undirected.
  bool mixed_orientation() const { return one_way_pairs > 0 && two_way_pairs > 0; }
  /// Entries of the CSR (nnz).
  std::int64_t num_entries() const { return static_cast<std::int64_t>(indices.size()); }
  /// Feature dimension D (0 without features).
  std::int64_t dim() const { return x.cols; }
  /// Out-degree of node i, its self-loop included.
  std::int64_t degree(std::int64_t i) const { return indptr[i + 1] - indptr[i]; }
  /// Sorted out-neighbours of node i.
  std::span<const std::int32_t> neighbors(std::int64_t i) const {
    return {indices.data() + indptr[i], static_cast<std::size_t>(degree(i))};
  }
  /// Weights of neighbors(i), in the same order; empty for an unweighted graph.
  std::span<const double> neighbor_weights(std::int64_t i) const {
    if (weights.empty()) return {};
    return {weights.data() + indptr[i], static_cast<std::size_t>(degree(i))};
  }
};

/// How the builders read their input.
struct BuildOptions {
  /// An edge (u, v) is the entry A[u, v] only; false: both A[u, v] and A[v, u].
  bool directed = false;
  int num_threads = 0;  ///< OpenMP threads for the row sorts (0 = default)
  /// Appended to the argument names in error messages ("edge_index" + suffix, ...), for
  /// callers that take two graphs.
  std::string suffix;
};

/// Builds a graph from a PyG-style edge list.
///
/// @param edge_index (2, E) int64 node pairs, row 0 = sources, row 1 = targets (any row
///        stride), or an empty (0, 0) view. Repeated pairs (and, undirected, reversed ones)
///        collapse into one entry; self-loops are kept once. The counts are reported in the
///        result.
/// @param num_nodes N (isolated nodes allowed), < 2^31 - 1.
/// @param edge_weight (E) finite float64 weights, or empty (every edge weighs 1). A pair
///        listed more than once must carry the same weight each time.
/// @param x (N, D) row-major float32 features, finite; or empty. Borrowed, not copied.
/// @throws birkhoff::InvalidInput naming `edge_index` when it does not have two rows or holds
///         an id outside [0, N); `edge_weight` for a wrong length, NaN/inf or conflicting
///         repeats; `x` for a row count other than N or NaN/inf; `num_nodes` out of range
///         (each name followed by options.suffix).
/// Time O(E' + N + sum of d log d) (rows sorted in parallel), memory O(N + E').
AttributedGraph from_edge_index(MatrixView<const std::int64_t> edge_index, std::int64_t num_nodes,
                                std::span<const double> edge_weight = {},
                                MatrixView<const float> x = {}, const BuildOptions& options = {});

/// The unweighted undirected graph of `edge_index` on N = x.rows nodes with features x (the
/// coarsening's input): from_edge_index(edge_index, x.rows, {}, x).
/// @throws birkhoff::InvalidInput as above; also naming `x` when it has 2^31 - 1 rows or more.
AttributedGraph from_edge_index(MatrixView<const std::int64_t> edge_index,
                                MatrixView<const float> x, int num_threads = 0);

/// Builds a graph from a dense (N, N) float64 adjacency: each non-zero A[i, j] becomes the
/// entry (i, j) with that weight (a non-zero diagonal entry a self-loop).
/// @param adjacency (N, N) row-major, finite; symmetric up to 1e-12 relative when undirected
///        (each entry is kept as given).
/// @param x (N, D) float32 features or empty, as for from_edge_index.
/// @throws birkhoff::InvalidInput naming `adjacency` (+ suffix) when it is not square, holds
///         NaN/inf, or is not symmetric while options.directed is false; `x` as above.
/// Time and memory O(N^2) for the scan, O(N + nnz) for the result.
AttributedGraph from_adjacency(MatrixView<const double> adjacency, MatrixView<const float> x = {},
                               const BuildOptions& options = {});

/// Checks that every entry of `x` is finite; throws InvalidInput naming `argument` otherwise.
void require_finite(MatrixView<const float> x, const char* argument, int num_threads = 0);

}  // namespace birkhoff::graph
