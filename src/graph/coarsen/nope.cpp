// NOPE and NOPE*: the entry point (checks, target) in front of the merge loop.
#include "birkhoff/graph/coarsen/nope.hpp"

#include <algorithm>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "graph/coarsen/merge_loop.hpp"

namespace birkhoff::coarsen {

MergeTree nope(const graph::AttributedGraph& graph, const NopeOptions& options) {
  const std::int64_t n = graph.num_nodes;
  std::int64_t target = target_for_ratio(n, options.ratio);
  if (options.n_coarse) {
    require(*options.n_coarse >= 1 && *options.n_coarse <= std::max<std::int64_t>(n, 1), "n_coarse",
            "must lie in [1, N]; got " + std::to_string(*options.n_coarse));
    target = n == 0 ? 0 : *options.n_coarse;
  }
  require(graph.x.rows == n, "x",
          "has " + std::to_string(graph.x.rows) + " rows but the graph " + std::to_string(n) +
              " nodes");
  require(n == 0 || graph.dim() >= 1, "x", "expected shape (N, D) with D >= 1");
  require(static_cast<std::int64_t>(graph.indptr.size()) == n + 1, "graph",
          "indptr must have N + 1 entries");
  require(n < (std::int64_t{1} << 31), "graph", "too many nodes (ids must fit in 31 bits)");
  require(!graph.directed, "graph", "NOPE coarsens undirected graphs (directed is set)");
  require(graph.weights.empty(), "graph",
          "NOPE coarsens unweighted graphs (build it without edge weights)");
  // The edges between distinct nodes: the entries above the diagonal of the symmetric CSR.
  std::int64_t edges = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto row = graph.neighbors(i);
    edges += row.end() - std::upper_bound(row.begin(), row.end(), static_cast<std::int32_t>(i));
  }

  MergeTree out;
  out.num_nodes = n;
  out.dim = graph.dim();
  out.num_edges = edges;
  out.target = target;
  out.self_loops_dropped = graph.self_loops;
  out.duplicates_merged = graph.duplicates_merged;
  out.one_way_pairs = graph.one_way_pairs;
  out.two_way_pairs = graph.two_way_pairs;
  if (n > 0) {
    if (options.method == Method::Nope) {
      detail::MergeLoop<detail::NopeKey>(graph, edges, options).run(target, out);
    } else {
      detail::MergeLoop<detail::NopeStarKey>(graph, edges, options).run(target, out);
    }
    // The run's lists are many small blocks that the allocator keeps once freed: hand them
    // back before the caller builds the coarse graph, so that the two do not add up.
    release_free_memory();
  }
  return out;
}

}  // namespace birkhoff::coarsen
