// Merge trees: their prefixes, the target of a ratio, and the coarse graph after the merges.
#include "birkhoff/graph/coarsen/merge_tree.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/coarsen/coarse_graph.hpp"
#include "graph/coarsen/contract.hpp"

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

MergeTree prefix(const MergeTree& tree, std::int64_t n_coarse) {
  const std::int64_t n = tree.num_nodes;
  require(n == 0 || (n_coarse >= 1 && n_coarse <= n), "n_coarse",
          "must lie in [1, N]; got " + std::to_string(n_coarse));
  const std::int64_t wanted = n == 0 ? 0 : n - n_coarse;
  std::int64_t k = wanted;
  bool reached = true;
  if (wanted > tree.num_merges()) {
    require(!tree.reached_target, "n_coarse",
            "asks for " + std::to_string(wanted) + " merges but the tree holds only " +
                std::to_string(tree.num_merges()) +
                "; a prefix can only keep more nodes than the run did (run nope() with the "
                "smallest ratio you need)");
    k = tree.num_merges();
    reached = false;
  }
  MergeTree out;
  out.num_nodes = n;
  out.dim = tree.dim;
  out.num_edges = tree.num_edges;
  out.target = n == 0 ? 0 : n_coarse;
  out.merges.assign(tree.merges.begin(), tree.merges.begin() + 3 * k);
  out.keys.assign(tree.keys.begin(), tree.keys.begin() + k);
  out.reached_target = reached;
  out.self_loops_dropped = tree.self_loops_dropped;
  out.duplicates_merged = tree.duplicates_merged;
  out.one_way_pairs = tree.one_way_pairs;
  out.two_way_pairs = tree.two_way_pairs;
  out.heap_pushes = tree.heap_pushes;
  return out;
}

CoarseGraph cut(const MergeTree& tree, const graph::AttributedGraph& graph,
                const CutOptions& options) {
  const std::int64_t n = tree.num_nodes;
  const std::int64_t k = tree.num_merges();
  require(graph.num_nodes == n && graph.dim() == tree.dim, "graph",
          "is not the graph this merge tree was computed on (N or D differ)");
  require(static_cast<std::int64_t>(tree.merges.size()) == 3 * k, "tree",
          "merges must hold 3 ids per key");

  // Each id's root: parents are younger than their children, so one descending sweep suffices.
  const std::int64_t ids = n + k;
  std::vector<std::int64_t> root(static_cast<std::size_t>(ids), -1);
  for (std::int64_t t = 0; t < k; ++t) {
    root[tree.merges[3 * t + 1]] = tree.merges[3 * t];
    root[tree.merges[3 * t + 2]] = tree.merges[3 * t];
  }
  std::vector<std::int64_t> roots;
  for (std::int64_t id = ids - 1; id >= 0; --id) {
    if (root[id] < 0) {
      root[id] = id;
    } else {
      root[id] = root[root[id]];
    }
  }
  std::vector<std::int64_t> index(static_cast<std::size_t>(ids), -1);
  for (std::int64_t id = 0; id < ids; ++id) {
    if (root[id] == id) {
      index[id] = static_cast<std::int64_t>(roots.size());
      roots.push_back(id);
    }
  }
  const auto kc = static_cast<std::int64_t>(roots.size());
  std::vector<std::int64_t> assignment(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) assignment[i] = index[root[i]];
  std::vector<std::int64_t>().swap(root);
  std::vector<std::int64_t>().swap(index);

  CoarseGraph out = detail::contract_valid(graph, std::move(assignment), kc, options);
  out.roots = std::move(roots);
  return out;
}

}  // namespace birkhoff::coarsen
