// `birkhoff gw-graph G1_DIR G2_DIR`: entropic (fused) Gromov-Wasserstein between two graphs.
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/gromov.hpp"
#include "birkhoff/graph/gromov_describe.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"
#include "graph_input.hpp"
#include "gromov_report.hpp"

namespace birkhoff::cli {
namespace {

struct GraphGromovArgs {
  std::string g1_dir, g2_dir, weights_a, weights_b, init, output;
  double epsilon = 0.01;
  bool structure_only = false, json = false, quiet = false;
  graph::GraphGromovOptions options;
};

void run(const GraphGromovArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  if (!args.output.empty()) check_writable(args.output, "--output");
  std::map<std::string, std::string> converted;
  GraphInput g1 = load_graph(args.g1_dir, "1", false, args.options.num_threads, converted);
  GraphInput g2 = load_graph(args.g2_dir, "2", false, args.options.num_threads, converted);
  const bool fused = !args.structure_only && g1.graph.dim() > 0 && g2.graph.dim() > 0;
  if (!fused) g1.graph.x = {}, g2.graph.x = {};
  Matrix t0;
  if (!args.init.empty()) t0 = load_double_matrix(args.init, "--init", converted);
  std::vector<double> a, b;
  if (!args.weights_a.empty()) a = load_vector<double>(args.weights_a, "--weights-a", converted);
  if (!args.weights_b.empty()) b = load_vector<double>(args.weights_b, "--weights-b", converted);
  note_conversions(converted, args.json);
  graph::GraphGromovOptions o = args.options;
  ProgressBar bar(args.quiet || args.json);
  o.progress = bar.callback();
  const auto r = graph::graph_gromov_wasserstein(
      g1.graph, g2.graph, a, b, args.epsilon, o,
      t0.rows ? MatrixView<const double>{t0.array.as<double>("--init").data(), t0.rows, t0.cols}
              : MatrixView<const double>{});
  if (!args.output.empty()) write_npz(args.output, r);
  const double seconds = seconds_since(start);
  report_gromov(r, args.options, fused, {{"n", r.n}, {"m", r.m}, {"converted", converted}},
                args.json, seconds);
}

}  // namespace

void add_graph_gromov_command(CLI::App& app) {
  auto args = std::make_shared<GraphGromovArgs>();
  auto* cmd = app.add_subcommand(
      "gw-graph",
      "Entropic Gromov-Wasserstein between two undirected graph folders (edge_index.npy or "
      "adjacency.npy, optional edge_weight.npy and features.npy), the inner costs the adjacency "
      "(sparse) or shortest-path lengths; with features.npy in both, fused GW (1 - alpha) "
      "<T, |x1 - x2|^2> + alpha GW(T). The plan is dense: n1 n2 <= 10^8. POT's definitions.");
  cmd->add_option("G1_DIR", args->g1_dir, "graph folder of G1")->required();
  cmd->add_option("G2_DIR", args->g2_dir, "graph folder of G2")->required();
  cmd->add_option("--weights-a", args->weights_a, "node weights a of G1, .npy (n1,); default 1/n1");
  cmd->add_option("--weights-b", args->weights_b, "node weights b of G2, .npy (n2,); default 1/n2");
  cmd->add_option("--epsilon", args->epsilon, "entropic regularisation (POT's epsilon)")
      ->capture_default_str();
  cmd->add_option("--init", args->init, "initial plan, .npy (n1, n2) (POT's G0)");
  cmd->add_flag("--structure-only", args->structure_only,
                "plain GW even when both folders hold features.npy");
  add_options(cmd, args->options);
  cmd->add_option("--output", args->output,
                  "write the plan (n1, n2) and the matching (n1,) to this .npz");
  add_report_flags(cmd, args->json, args->quiet);
  cmd->callback([args] {
    try {
      run(*args);
    } catch (const InvalidInput& e) {
      rethrow_with_cli_names(e, flag_names<graph::GraphGromovOptions>(),
                             {{"graph1", "G1_DIR"},
                              {"graph2", "G2_DIR"},
                              {"a", "--weights-a"},
                              {"b", "--weights-b"},
                              {"init", "--init"},
                              {"epsilon", "--epsilon"}});
    }
  });
}

}  // namespace birkhoff::cli
