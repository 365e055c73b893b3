#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/core/view.hpp"

namespace birkhoff::graph {

/// An undirected simple graph with node features: symmetric CSR adjacency plus a non-owning
/// view of the (N, D) float32 feature matrix.
///
/// Row i of the CSR lists the neighbours of node i in ascending order, without i itself and
/// without repeats; every undirected edge {i, j} appears twice (in row i and in row j).
/// Node ids are int32 inside the CSR (N < 2^31), int64 at every API boundary.
/// The features are borrowed: the caller keeps `x` alive while the graph is used.
struct AttributedGraph {
  std::int64_t num_nodes = 0;           ///< N
  std::vector<std::int64_t> indptr;     ///< (N + 1) row offsets into `indices`
  std::vector<std::int32_t> indices;    ///< (2E) neighbour ids, rows sorted ascending
  MatrixView<const float> x;            ///< (N, D) row-major float32, finite
  std::int64_t self_loops_dropped = 0;  ///< input columns (i, i) that were skipped
  /// Input columns that repeated an edge already seen, in either orientation (a PyG-style
  /// edge_index listing both directions reports E here).
  std::int64_t duplicates_merged = 0;

  /// Number of undirected edges E.
  std::int64_t num_edges() const { return static_cast<std::int64_t>(indices.size()) / 2; }
  /// Feature dimension D.
  std::int64_t dim() const { return x.cols; }
  /// Degree of node i.
  std::int64_t degree(std::int64_t i) const { return indptr[i + 1] - indptr[i]; }
  /// Sorted neighbours of node i.
  std::span<const std::int32_t> neighbors(std::int64_t i) const {
    return {indices.data() + indptr[i], static_cast<std::size_t>(degree(i))};
  }
};

/// Builds an AttributedGraph from a PyG-style edge list.
///
/// @param edge_index (2, E') int64 node pairs, row 0 = sources, row 1 = targets (any row stride).
///        Read as undirected: self-loops are dropped, duplicate and reversed pairs collapse into
///        one edge; the counts are reported in the result.
/// @param x (N, D) row-major float32 features; N is the node count (isolated nodes allowed).
///        Must be finite; D >= 1 when N >= 1. Borrowed, not copied.
/// @throws birkhoff::InvalidInput naming `edge_index` when it does not have two rows or holds an
///         id outside [0, N); naming `x` when it holds NaN/inf, has no columns, or has 2^31 - 1
///         rows or more.
/// Time O(E' + N + sum of d log d) (rows sorted in parallel), memory O(N + E').
AttributedGraph from_edge_index(MatrixView<const std::int64_t> edge_index,
                                MatrixView<const float> x, int num_threads = 0);

/// Checks that every entry of `x` is finite; throws InvalidInput naming `argument` otherwise.
void require_finite(MatrixView<const float> x, const char* argument, int num_threads = 0);

}  // namespace birkhoff::graph
