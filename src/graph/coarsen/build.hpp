#pragma once
// PRIVATE header of birkhoff_coarsen: turning a merge list into the coarse graph.

#include <cstdint>

#include "birkhoff/graph/coarsen/nope.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::coarsen::detail {

/// Fills roots, assignment, sizes, members, features, edge_index and edge_weight of `out` from
/// the first `k` rows of `out.merges` (which must already hold them; `out.keys` likewise) and
/// truncates merges/keys to k. O(N D + E) time and memory.
void build_coarse_graph(const graph::AttributedGraph& graph, std::int64_t k, bool edge_weights,
                        int num_threads, Coarsening& out);

}  // namespace birkhoff::coarsen::detail
