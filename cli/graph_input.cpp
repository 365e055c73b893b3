#include "graph_input.hpp"

#include <algorithm>
#include <filesystem>

#include "birkhoff/core/error.hpp"

namespace birkhoff::cli {

GraphInput load_graph(const std::string& path, const std::string& suffix, bool directed,
                      int threads, std::map<std::string, std::string>& converted) {
  require(std::filesystem::is_directory(path), "G" + suffix + "_DIR", "not a folder: " + path);
  GraphInput g;
  io::GraphDirOptions dir_options;
  dir_options.adjacency = true;
  g.dir = io::read_graph_dir(path, dir_options);
  for (const auto& [name, conversion] : g.dir.converted) converted[name + suffix] = conversion;
  graph::BuildOptions options;
  options.directed = directed;
  options.num_threads = threads;
  options.suffix = suffix;
  if (g.dir.adjacency) {
    g.graph = graph::from_adjacency(g.dir.adjacency_view(), g.dir.features_view(), options);
    // The graph holds its own CSR: the dense array is not read again.
    g.dir.adjacency.reset();
    return g;
  }
  std::int64_t n = 0;
  if (g.dir.features) {
    n = g.dir.features->shape[0];
  } else {
    for (const std::int64_t v : g.dir.edge_index->as<std::int64_t>("edge_index" + suffix))
      n = std::max(n, v + 1);
    g.nodes_from_ids = n;
  }
  g.graph = graph::from_edge_index(g.dir.edge_index_view(), n, g.dir.edge_weight_view(),
                                   g.dir.features_view(), options);
  g.dir.edge_index.reset();
  g.dir.edge_weight.reset();
  return g;
}

}  // namespace birkhoff::cli
