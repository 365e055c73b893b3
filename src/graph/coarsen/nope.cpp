// NOPE and NOPE*: the entry point (checks, target) in front of the merge loop.
#include "birkhoff/graph/coarsen/nope.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "graph/coarsen/build.hpp"
#include "graph/coarsen/merge_loop.hpp"

namespace birkhoff::coarsen {

std::int64_t target_for_ratio(std::int64_t num_nodes, double ratio) {
  require(std::isfinite(ratio) && ratio > 0.0 && ratio <= 1.0, "ratio",
          "must be the fraction of nodes kept, in (0, 1]; got " + std::to_string(ratio));
  if (num_nodes == 0) return 0;
  // Python's round() on the double product: half to even (std::nearbyint under the default
  // rounding mode; std::llround would round 1663.5 up).
  const auto rounded =
      static_cast<std::int64_t>(std::nearbyint(static_cast<double>(num_nodes) * ratio));
  return std::max<std::int64_t>(1, rounded);
}

Coarsening nope(const graph::AttributedGraph& graph, const NopeOptions& options) {
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
  require(static_cast<std::int64_t>(graph.indptr.size()) == n + 1, "graph",
          "indptr must have N + 1 entries");
  require(n < (std::int64_t{1} << 31), "graph", "too many nodes (ids must fit in 31 bits)");

  Coarsening out;
  out.num_nodes = n;
  out.dim = graph.dim();
  out.target = target;
  out.self_loops_dropped = graph.self_loops_dropped;
  out.duplicates_merged = graph.duplicates_merged;
  if (n > 0) {
    if (options.variant == Variant::Nope) {
      detail::MergeLoop<detail::NopeKey>(graph, options).run(target, out);
    } else {
      detail::MergeLoop<detail::NopeStarKey>(graph, options).run(target, out);
    }
    // The run's lists are many small blocks that the allocator keeps once freed: hand them
    // back before the output is built, so that the two do not add up.
    release_free_memory();
  }
  detail::build_coarse_graph(graph, out.num_merges(), options.edge_weights, options.num_threads,
                             out);
  return out;
}

}  // namespace birkhoff::coarsen
