// `birkhoff coarsen GRAPH_DIR`: NOPE / NOPE* attributed-graph coarsening.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/coarsen/nope.hpp"
#include "birkhoff/graph/graph.hpp"
#include "birkhoff/io/graph_dir.hpp"
#include "birkhoff/io/npy.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace birkhoff::cli {
namespace {

struct CoarsenArgs {
  std::string graph_dir, output, method = "nope", key_precision = "numpy1";
  double ratio = 0.5;
  std::optional<std::int64_t> n_coarse;
  int threads = 0;
  bool json = false, quiet = false;
};

void run(const CoarsenArgs& args) {
  require(args.method == "nope" || args.method == "nope-star", "--method",
          "must be nope or nope-star; got " + args.method);
  require(args.key_precision == "numpy1" || args.key_precision == "numpy2", "--key-precision",
          "must be numpy1 or numpy2");
  io::GraphDir input = io::read_graph_dir(args.graph_dir);
  require(input.features.has_value(), "GRAPH_DIR",
          input.missing("features.npy") +
              "; NOPE merges nodes by their features (N, D): save them as features.npy "
              "(float32; float64 and integers are converted), or np.ones((N, 1), np.float32) to "
              "coarsen by the edges alone");
  note_conversions(input.converted, args.json);

  const auto start = std::chrono::steady_clock::now();
  const auto graph =
      graph::from_edge_index(input.edge_index_view(), input.features_view(), args.threads);
  // The graph holds its own adjacency: the edge list is not read again.
  input.edge_index.reset();
  coarsen::NopeOptions o;
  o.variant = args.method == "nope" ? coarsen::Variant::Nope : coarsen::Variant::NopeStar;
  o.ratio = args.ratio;
  o.n_coarse = args.n_coarse;
  o.key_precision = args.key_precision == "numpy1" ? coarsen::KeyPrecision::NumPy1
                                                   : coarsen::KeyPrecision::NumPy2;
  o.num_threads = args.threads;
  ProgressBar bar(args.quiet || args.json);
  o.progress = bar.callback();
  const auto tree = coarsen::nope(graph, o);
  coarsen::CutOptions cut_options;
  cut_options.num_threads = args.threads;
  const auto r = coarsen::cut(tree, graph, cut_options);
  const double seconds = seconds_since(start);

  if (!args.output.empty()) {
    std::filesystem::create_directories(args.output);
    const std::string dir = args.output + "/";
    const std::int64_t k = tree.num_merges(), kc = r.num_super_nodes(), ec = r.num_coarse_edges();
    const std::vector<std::int64_t> s_merges = {k, 3}, s_k = {k}, s_n = {r.num_nodes}, s_kc = {kc},
                                    s_feat = {kc, r.dim}, s_edges = {2, ec}, s_ec = {ec};
    io::write_npy(dir + "merges.npy", std::span<const std::int64_t>(s_merges), tree.merges.data());
    io::write_npy(dir + "keys.npy", std::span<const std::int64_t>(s_k), tree.keys.data());
    io::write_npy(dir + "roots.npy", std::span<const std::int64_t>(s_kc), r.roots.data());
    io::write_npy(dir + "assignment.npy", std::span<const std::int64_t>(s_n), r.assignment.data());
    io::write_npy(dir + "sizes.npy", std::span<const std::int64_t>(s_kc), r.sizes.data());
    io::write_npy(dir + "features.npy", std::span<const std::int64_t>(s_feat), r.features.data());
    io::write_npy(dir + "edge_index.npy", std::span<const std::int64_t>(s_edges),
                  r.edge_index.data());
    io::write_npy(dir + "edge_weight.npy", std::span<const std::int64_t>(s_ec),
                  r.edge_weight.data());
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
    print_json({{"method", args.method},
                {"ratio", args.ratio},
                {"nodes_before", r.num_nodes},
                {"edges_before", tree.num_edges},
                {"nodes_after", r.num_super_nodes()},
                {"edges_after", r.num_coarse_edges() / 2},
                {"target", tree.target},
                {"reached_target", tree.reached_target},
                {"merges", tree.num_merges()},
                {"self_loops_dropped", tree.self_loops_dropped},
                {"duplicates_merged", tree.duplicates_merged},
                {"input", graph_input_json(graph, nodes_from_ids, "self_loops_dropped")},
                {"warnings", warnings},
                {"converted", input.converted},
                {"seconds", seconds},
                {"peak_rss_mb", peak_rss_mb()}});
  } else {
    std::printf(
        "%s: %lld -> %lld nodes, %lld -> %lld edges, %lld merges, %.3f s, peak RSS %.1f MB\n",
        args.method.c_str(), static_cast<long long>(r.num_nodes),
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
      "roots.npy, assignment.npy (N), sizes.npy, features.npy (K, D), edge_index.npy (2, E_c) "
      "and edge_weight.npy (E_c, number of original edges).");
  cmd->add_option("GRAPH_DIR", args->graph_dir, "folder with features.npy and edge_index.npy")
      ->required();
  cmd->add_option("--ratio", args->ratio,
                  "fraction of nodes KEPT, in (0, 1]: stop at round(N * ratio) super-nodes")
      ->capture_default_str();
  cmd->add_option("--n-coarse", args->n_coarse,
                  "number of super-nodes to keep (overrides --ratio)");
  cmd->add_option("--method", args->method, "nope or nope-star")->capture_default_str();
  cmd->add_option("--key-precision", args->key_precision,
                  "NOPE key arithmetic of the authors' code under numpy1 (goldens) or numpy2")
      ->capture_default_str();
  cmd->add_option("--output", args->output, "write the result as .npy files into this folder");
  cmd->add_option("--threads", args->threads, "OpenMP threads (0 = all cores)");
  cmd->add_flag("--json", args->json, "print one JSON object with the results");
  cmd->add_flag("--quiet", args->quiet, "no progress bar");
  cmd->callback([args] { run(*args); });
}

}  // namespace birkhoff::cli
