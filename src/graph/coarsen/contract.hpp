// PRIVATE (coarsen): graph contraction without the argument checks of contract().
#pragma once

#include <cstdint>
#include <vector>

#include "birkhoff/graph/coarsen/coarse_graph.hpp"

namespace birkhoff::coarsen::detail {

/// contract() for an assignment known to be valid (values in [0, K), every super-node taken).
CoarseGraph contract_valid(const graph::AttributedGraph& graph,
                           std::vector<std::int64_t> assignment, std::int64_t num_super_nodes,
                           const CutOptions& options);

}  // namespace birkhoff::coarsen::detail
