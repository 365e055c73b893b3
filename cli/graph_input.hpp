#pragma once
// A graph folder read for a command that takes two graphs (align, gw-graph).
#include <cstdint>
#include <map>
#include <string>

#include "birkhoff/graph/graph.hpp"
#include "birkhoff/io/graph_dir.hpp"

namespace birkhoff::cli {

/// The arrays read (the graph borrows the features) and the graph built from them (the edges
/// become its CSR).
struct GraphInput {
  io::GraphDir dir;
  graph::AttributedGraph graph;
  std::int64_t nodes_from_ids = 0;  ///< N when N was set by the largest id, not by features
};

/// Reads folder `path` as graph G<suffix> (errors name G<suffix>_DIR and the arrays with the
/// suffix); conversions are recorded in `converted`.
GraphInput load_graph(const std::string& path, const std::string& suffix, bool directed,
                      int threads, std::map<std::string, std::string>& converted);

}  // namespace birkhoff::cli
