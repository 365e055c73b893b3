// `birkhoff coarsen GRAPH_DIR`: NOPE / NOPE* attributed-graph coarsening.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/coarsen/describe.hpp"
#include "birkhoff/graph/coarsen/nope.hpp"
#include "birkhoff/graph/graph.hpp"
#include "birkhoff/io/graph_dir.hpp"
#include "birkhoff/io/npy.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"

namespace birkhoff::cli {
namespace {

struct CoarsenArgs {
  std::string graph_dir, output;
  coarsen::NopeOptions options;
  bool json = false, quiet = false;
};

void run(CoarsenArgs args) {
  io::GraphDir input = io::read_graph_dir(args.graph_dir);
  require(input.features.has_value(), "GRAPH_DIR",
          input.missing("features.npy") +
              "; NOPE merges nodes by their features (N, D): save them as features.npy "
              "(float32; float64 and integers are converted), or np.ones((N, 1), np.float32) to "
              "coarsen by the edges alone");
  note_conversions(input.converted, args.json);

  const auto start = std::chrono::steady_clock::now();
  const int threads = args.options.num_threads;
  const auto graph =
      graph::from_edge_index(input.edge_index_view(), input.features_view(), threads);
  // The graph holds its own adjacency: the edge list is not read again.
  input.edge_index.reset();
  ProgressBar bar(args.quiet || args.json);
  args.options.progress = bar.callback();
  coarsen::MergeTree tree;
  try {
    tree = coarsen::nope(graph, args.options);
  } catch (const InvalidInput& e) {
    rethrow_with_cli_names(e, flag_names<coarsen::NopeOptions>());
  }
  coarsen::CutOptions cut_options;
  cut_options.num_threads = threads;
  const auto r = coarsen::cut(tree, graph, cut_options);
  const double seconds = seconds_since(start);

  if (!args.output.empty()) {
    std::filesystem::create_directories(args.output);
    write_arrays(args.output, tree);
    write_arrays(args.output, r);
  }
  std::vector<std::string> warnings;
  if (!tree.reached_target) {
    warnings.push_back("target of " + std::to_string(tree.target) +
                       " super-nodes not reachable: the graph ran out of edges at " +
                       std::to_string(r.num_super_nodes()) +
                       " (one super-node per connected component)");
  }
  // Every node has a features row (ids beyond them are refused): none comes from ids alone.
  const std::int64_t nodes_from_ids = 0;
  const std::string orientation = orientation_warning(
      graph, "edge_index",
      "NOPE coarsens undirected graphs; `birkhoff align --directed` reads a directed one");
  if (!orientation.empty()) warnings.push_back(orientation);
  for (const auto& w : warnings) print_warning(w);
  if (args.json) {
    auto j = to_json(tree);
    j.update({{"options", to_json(args.options)},
              {"nodes_before", r.num_nodes},
              {"edges_before", tree.num_edges},
              {"nodes_after", r.num_super_nodes()},
              {"edges_after", r.num_coarse_edges() / 2},
              {"merges", tree.num_merges()},
              {"input", graph_input_json(graph, nodes_from_ids, "self_loops_dropped")},
              {"warnings", warnings},
              {"converted", input.converted},
              {"seconds", seconds},
              {"peak_rss_mb", peak_rss_mb()}});
    print_json(j);
  } else {
    std::printf(
        "%s: %lld -> %lld nodes, %lld -> %lld edges, %lld merges, %.3f s, peak RSS %.1f MB\n",
        enum_name(kCoarsenMethodNames, args.options.method), static_cast<long long>(r.num_nodes),
        static_cast<long long>(r.num_super_nodes()), static_cast<long long>(tree.num_edges),
        static_cast<long long>(r.num_coarse_edges() / 2), static_cast<long long>(tree.num_merges()),
        seconds, peak_rss_mb());
    std::printf("%s\n", graph_input_line(graph, nodes_from_ids, "input", "dropped").c_str());
  }
}

}  // namespace

void add_coarsen_command(CLI::App& app) {
  auto args = std::make_shared<CoarsenArgs>();
  auto* cmd = app.add_subcommand(
      "coarsen",
      "Attributed-graph coarsening with NOPE or NOPE* (Bai, Lu et al., ICML 2026). GRAPH_DIR "
      "holds features.npy (N, D) float32 and edge_index.npy (2, E) int64 (other integer and float "
      "dtypes are converted; undirected; self-loops "
      "dropped, duplicates merged, counted in the output; a list mixing pairs given in both "
      "orientations with pairs given in one warns). OUT_DIR receives merges.npy (k, 3) [new, u, "
      "v], keys.npy, "
      "roots.npy, assignment.npy (N), sizes.npy, members_indptr.npy (K + 1) and members.npy "
      "(N) (the members of each super-node), features.npy (K, D), edge_index.npy (2, E_c) "
      "and edge_weight.npy (E_c, number of original edges).");
  cmd->add_option("GRAPH_DIR", args->graph_dir, "folder with features.npy and edge_index.npy")
      ->required();
  add_options(cmd, args->options);
  cmd->add_option("--output", args->output, "write the result as .npy files into this folder");
  add_report_flags(cmd, args->json, args->quiet);
  cmd->callback([args] { run(*args); });
}

}  // namespace birkhoff::cli
