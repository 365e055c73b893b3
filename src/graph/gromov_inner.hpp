#pragma once
// The inner costs of graph Gromov-Wasserstein: a graph's adjacency (sparse) or its
// shortest-path lengths (dense).
#include <cstdint>
#include <vector>

#include "birkhoff/graph/gromov.hpp"

namespace birkhoff::graph::detail {

/// Shortest-path lengths from every node (Dijkstra; weights are lengths), unreachable pairs at
/// the largest finite length plus one; (n, n) row-major.
std::vector<double> shortest_paths(const AttributedGraph& g, int threads);

/// One side's inner cost: the CSR of the graph (adjacency) or a dense matrix (shortest paths).
struct Inner {
  const AttributedGraph& g;
  std::int64_t n;
  std::vector<double> values;  // CSR values (the weights, or ones)
  std::vector<double> dense;   // (n, n), shortest paths only

  Inner(const AttributedGraph& graph, Structure s, int threads);
  bool sparse() const { return dense.empty(); }
  // (C^2 w)_i for the weights w.
  std::vector<double> squared_times(const std::vector<double>& w) const;
};

}  // namespace birkhoff::graph::detail
