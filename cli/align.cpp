// `birkhoff align G1_DIR G2_DIR` (QPAlign) and `birkhoff generate wigner|er OUT_DIR`.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/describe.hpp"
#include "birkhoff/graph/align/generate.hpp"
#include "birkhoff/graph/align/multilevel.hpp"
#include "birkhoff/graph/align/presets.hpp"
#include "birkhoff/graph/align/qpalign.hpp"
#include "birkhoff/graph/graph.hpp"
#include "birkhoff/io/graph_dir.hpp"
#include "birkhoff/io/npy.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"
#include "graph_input.hpp"

namespace birkhoff::cli {
namespace {

struct AlignArgs {
  std::string g1_dir, g2_dir, seeds, truth, output, preset = "auto";
  align::QpAlignOptions options;
  align::MultilevelOptions multilevel;
  bool directed = false, json = false, quiet = false;
  std::set<std::string, std::less<>> given;  // described names of the options on the line
};

io::NpyArray load_pairs(const std::string& path, const std::string& what,
                        std::map<std::string, std::string>& converted) {
  require(std::filesystem::exists(path), what, "file not found: " + path);
  io::NpyArray a = io::read_npy_as<std::int64_t>(path, what);
  require(a.shape.size() == 2 && a.shape[1] == 2, what,
          path + " must hold a (k, 2) integer array [node of G1, node of G2]");
  if (a.converted_from) converted[what] = a.conversion();
  return a;
}

void run_align(AlignArgs args) {
  align::QpAlignOptions& o = args.options;
  require(args.output.empty() || !std::filesystem::exists(args.output) ||
              std::filesystem::is_directory(args.output),
          "--output", args.output + " exists and is not a folder");
  std::map<std::string, std::string> converted;
  const GraphInput g1 = load_graph(args.g1_dir, "1", args.directed, o.num_threads, converted);
  const GraphInput g2 = load_graph(args.g2_dir, "2", args.directed, o.num_threads, converted);
  io::NpyArray seeds, truth;
  if (!args.seeds.empty()) {
    seeds = load_pairs(args.seeds, "seeds", converted);
    o.seeds = {seeds.as<std::int64_t>("seeds").data(), seeds.shape[0], 2};
  }
  if (!args.truth.empty()) {
    truth = load_pairs(args.truth, "truth", converted);
    o.truth = {truth.as<std::int64_t>("truth").data(), truth.shape[0], 2};
  }
  note_conversions(converted, args.json);
  ProgressBar bar(args.quiet || args.json);
  o.progress = bar.callback();
  const auto start = std::chrono::steady_clock::now();
  align::Selection selection;
  try {
    const auto candidates = align::preset_candidates(o, args.preset, args.given);
    selection = align::align_select(g1.graph, g2.graph, candidates, args.multilevel);
    o = candidates[selection.chosen].options;
  } catch (const InvalidInput& e) {
    auto names = flag_names<align::QpAlignOptions>();
    const auto more = flag_names<align::MultilevelOptions>();
    names.insert(names.end(), more.begin(), more.end());
    rethrow_with_cli_names(e, names);
  }
  const align::Alignment& r = selection.alignment;
  const double seconds = seconds_since(start);

  if (!args.output.empty()) {
    std::filesystem::create_directories(args.output);
    write_arrays(args.output, r);
  }
  const std::int64_t unmatched = std::count(r.perm.begin(), r.perm.end(), -1);
  std::vector<std::string> warnings;
  for (const auto* g : {&g1, &g2}) {
    const std::string name = std::string("edge_index") + (g == &g1 ? "1" : "2");
    const std::string w = orientation_warning(
        g->graph, name, "pass --directed to read each column (u, v) as the entry A[u, v] only");
    if (!w.empty()) warnings.push_back(w);
  }
  if (const std::string hint = align::stop_hint(r); !hint.empty()) warnings.push_back(hint);
  for (const auto& w : warnings) print_warning(w);
  if (args.json) {
    auto j = to_json(r);
    nlohmann::json candidates = nlohmann::json::array();
    for (std::size_t k = 0; k < selection.presets.size(); ++k)
      candidates.push_back({{"preset", enum_name(kPresetNames, selection.presets[k])},
                            {"likelihood", selection.likelihoods[k]}});
    j.update({{"options", to_json(o)},
              {"multilevel_options", to_json(args.multilevel)},
              {"refine_objective", r.refine_objective},
              {"candidates", candidates},
              {"objective", r.objective.empty() ? 0.0 : r.objective.back()},
              {"unmatched", unmatched},
              {"graph1", graph_input_json(g1.graph, g1.nodes_from_ids, "self_loops_used")},
              {"graph2", graph_input_json(g2.graph, g2.nodes_from_ids, "self_loops_used")},
              {"warnings", warnings},
              {"converted", converted},
              {"seconds", seconds},
              {"seconds_per_iteration",
               r.iterations > 0 ? seconds / static_cast<double>(r.iterations) : 0.0},
              {"peak_rss_mb", peak_rss_mb()}});
    if (r.has_metrics) j.update(to_json(r.metrics));
    print_json(j);
  } else {
    std::printf(
        "qpalign: %lld -> %lld nodes, preset %s (of %zu runs), %lld iterations (stopped by %s), "
        "%.3f s, peak RSS %.1f MB\n",
        static_cast<long long>(r.n1), static_cast<long long>(r.n2),
        enum_name(kPresetNames, r.preset), selection.presets.size(),
        static_cast<long long>(r.iterations), enum_name(kStopReasonNames, r.stopped_by), seconds,
        peak_rss_mb());
    if (selection.presets.size() > 1) {
      std::printf("preset runs by likelihood under the planted model (largest kept):");
      for (std::size_t k = 0; k < selection.presets.size(); ++k)
        std::printf(" %s %.6g", enum_name(kPresetNames, selection.presets[k]),
                    selection.likelihoods[k]);
      std::printf("\n");
    }
    if (r.method == align::Method::Multilevel) {
      std::printf(
          "multilevel: %lld super-nodes per coarse graph, %zu refinement rounds kept, "
          "objective %.6g -> %.6g\n",
          static_cast<long long>(r.coarse_nodes), r.refine_objective.size() - 1,
          r.refine_objective.front(), r.refine_objective.back());
    }
    std::printf("%s\n%s\n",
                graph_input_line(g1.graph, g1.nodes_from_ids, "G1", "used as A[i, i]").c_str(),
                graph_input_line(g2.graph, g2.nodes_from_ids, "G2", "used as B[i, i]").c_str());
    if (r.has_metrics) {
      std::printf("overlap %.4f (%lld pairs), Hits@1 %.4f, Hits@5 %.4f, Hits@10 %.4f, MRR %.4f\n",
                  r.metrics.overlap, static_cast<long long>(r.metrics.pairs), r.metrics.hits1,
                  r.metrics.hits5, r.metrics.hits10, r.metrics.mrr);
    }
  }
}

struct GenerateArgs {
  std::string model, output;
  std::int64_t n = 100, d = 16;
  double rho = 0.9, r = 0.9, p = 0.5;
  std::uint64_t seed = 0;
  bool raw_features = false, dense = false, json = false;
};

void write_graph(const std::string& dir, std::int64_t n, std::int64_t d,
                 const std::vector<double>& a, const std::vector<float>& x, bool binary,
                 bool dense) {
  io::GraphDirArrays arrays;
  if (d > 0) arrays.features = MatrixView<const float>(x.data(), n, d);
  if (dense) {
    arrays.adjacency = MatrixView<const double>(a.data(), n, n);
    io::write_graph_dir(dir, arrays);
    return;
  }
  std::vector<std::int64_t> src, dst;
  std::vector<double> w;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i + 1; j < n; ++j) {
      if (binary && a[i * n + j] == 0.0) continue;
      src.push_back(i);
      dst.push_back(j);
      w.push_back(a[i * n + j]);
    }
  }
  const auto e = static_cast<std::int64_t>(src.size());
  src.insert(src.end(), dst.begin(), dst.end());
  arrays.edge_index = MatrixView<const std::int64_t>(src.data(), 2, e);
  if (!binary) arrays.edge_weight = std::span<const double>(w);
  io::write_graph_dir(dir, arrays);
}

void run_generate(const GenerateArgs& args) {
  // OUT_DIR without its trailing slashes, so that the printed paths read dir/g1, not dir//g1.
  std::string dir = args.output;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  require(args.model == "wigner" || args.model == "er", "MODEL",
          "must be wigner or er; got " + args.model);
  const auto start = std::chrono::steady_clock::now();
  const auto inst = args.model == "wigner"
                        ? align::correlated_wigner(args.n, args.d, args.rho, args.r, args.seed,
                                                   !args.raw_features)
                        : align::correlated_erdos_renyi(args.n, args.d, args.rho, args.r, args.p,
                                                        args.seed, !args.raw_features);
  write_graph(dir + "/g1", inst.n, inst.d, inst.a, inst.x1, args.model == "er", args.dense);
  write_graph(dir + "/g2", inst.n, inst.d, inst.b, inst.x2, args.model == "er", args.dense);
  std::vector<std::int64_t> truth;
  for (std::int64_t i = 0; i < inst.n; ++i) {
    truth.push_back(i);
    truth.push_back(inst.perm[i]);
  }
  const std::vector<std::int64_t> s_perm = {inst.n}, s_truth = {inst.n, 2};
  io::write_npy(dir + "/perm.npy", std::span<const std::int64_t>(s_perm), inst.perm.data());
  io::write_npy(dir + "/truth.npy", std::span<const std::int64_t>(s_truth), truth.data());
  const double margin = align::exact_margin(inst.n, inst.d, args.rho, args.r);
  if (args.json) {
    nlohmann::json j = {{"model", args.model},
                        {"n", inst.n},
                        {"d", inst.d},
                        {"rho", args.rho},
                        {"r", args.r},
                        {"seed", args.seed},
                        {"dense", args.dense},
                        {"standardized", !args.raw_features},
                        {"output", dir},
                        {"files", {"g1", "g2", "perm.npy", "truth.npy"}},
                        {"exact_margin", margin},
                        {"seconds", seconds_since(start)},
                        {"peak_rss_mb", peak_rss_mb()}};
    if (args.model == "er") j["p"] = args.p;
    print_json(j);
    return;
  }
  std::printf(
      "%s: n = %lld, d = %lld, rho = %g, r = %g, seed = %llu -> %s/{g1,g2,perm.npy,"
      "truth.npy}; exact margin %.2f (conjectured, align.md §3.2)\n",
      args.model.c_str(), static_cast<long long>(inst.n), static_cast<long long>(inst.d), args.rho,
      args.r, static_cast<unsigned long long>(args.seed), dir.c_str(), margin);
}

}  // namespace

void add_align_command(CLI::App& app) {
  auto args = std::make_shared<AlignArgs>();
  auto* cmd = app.add_subcommand(
      "align",
      "Attributed graph alignment with QPAlign (Huang, Tian, Yang, ICML 2026). Each graph folder "
      "holds edge_index.npy (2, E) int64, optionally edge_weight.npy (E) and features.npy (n, d) "
      "float32 (n = rows of features, else the largest id + 1), or adjacency.npy (n, n) float64 "
      "instead of the edge list; other integer and float dtypes are converted. Self-loops are "
      "diagonal entries of A; duplicates merge; an undirected list mixing pairs given in both "
      "orientations with pairs given in one warns (see --directed); the counts are in the "
      "output. Node i of G1 is matched to node "
      "perm[i] of G2. OUT_DIR receives perm.npy (n1) int64 (-1 = unmatched when n1 > n2), "
      "topk.npy (n1, k) int64, topk_scores.npy, objective.npy and with --return-soft soft.npy (n1, "
      "n2). "
      "By default (--preset auto) the presets of the authors' settings (gaussian, douban, "
      "acmdblp) run in turn until one converges, and the matching of largest profile likelihood "
      "under the planted model is kept; a flag given on the line holds in every run. The "
      "output's "
      "`converged` says that a stopping rule fired before --max-iter ran out and `stopped_by` "
      "which: tol (the objective's relative change fell below --tol, the authors' rule) or "
      "patience (the rounded matching stayed the same for --patience iterations); max_iter "
      "when neither did. Neither says how good the matching is: the metrics (with --truth) do. "
      "--method multilevel (auto: above --dense-max-nodes nodes) coarsens both graphs with "
      "NOPE*, aligns the coarse graphs and refines the matching by sparse assignments that "
      "never raise the objective; then the iteration counts describe the coarse run.");
  cmd->add_option("G1_DIR", args->g1_dir, "folder of the first graph")->required();
  cmd->add_option("G2_DIR", args->g2_dir, "folder of the second graph")->required();
  cmd->add_option("--seeds", args->seeds, "known pairs (k, 2) integer .npy [G1 node, G2 node]");
  cmd->add_option("--truth", args->truth, "true pairs (t, 2) integer .npy for the metrics");
  cmd->add_option("--output", args->output, "write perm.npy, topk.npy, ... into this folder");
  cmd->add_option("--preset", args->preset,
                  "auto (the presets in turn until one converges, the most likely matching "
                  "kept), gaussian, douban, "
                  "acmdblp (the authors' settings for those pairs; they fill in the flags not "
                  "given, whose defaults below are gaussian's) or none (the flags as shown)")
      ->check(CLI::IsMember({"auto", "none", "gaussian", "douban", "acmdblp"}))
      ->capture_default_str();
  add_options(cmd, args->options);
  add_options(cmd, args->multilevel);
  cmd->add_flag("--directed", args->directed, "read edges as directed (u -> v)");
  add_report_flags(cmd, args->json, args->quiet);
  cmd->callback([args, cmd] {
    for (const auto& [name, flag] : flag_names<align::QpAlignOptions>()) {
      const CLI::Option* on = cmd->get_option_no_throw(flag);
      const CLI::Option* off = cmd->get_option_no_throw("--no-" + flag.substr(2));
      if ((on && on->count() > 0) || (off && off->count() > 0)) args->given.insert(name);
    }
    run_align(*args);
  });
}

void add_generate_command(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  auto* cmd = app.add_subcommand(
      "generate",
      "Planted alignment instances (align.md §2): MODEL wigner (featured correlated Gaussian "
      "Wigner) or er (correlated Erdős–Rényi, marginal --p). OUT_DIR receives g1/ and g2/ "
      "(edge_index.npy, edge_weight.npy for wigner, features.npy), perm.npy (n) with node i of "
      "G1 <-> perm[i] of G2, and truth.npy (n, 2).");
  cmd->add_option("MODEL", args->model, "wigner or er")->required();
  cmd->add_option("OUT_DIR", args->output, "output folder")->required();
  cmd->add_option("--n", args->n, "nodes")->capture_default_str();
  cmd->add_option("--d", args->d, "feature dimension")->capture_default_str();
  cmd->add_option("--rho", args->rho, "edge correlation in [0, 1]")->capture_default_str();
  cmd->add_option("--r", args->r, "feature correlation in [0, 1]")->capture_default_str();
  cmd->add_option("--p", args->p, "edge probability (er)")->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed, >= 0")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) { return v.starts_with('-') ? std::string("must be >= 0") : ""; },
          "INT >= 0"));
  cmd->add_flag("--raw-features", args->raw_features, "skip the column standardisation");
  cmd->add_flag("--dense", args->dense,
                "write adjacency.npy (n, n) float64 instead of an edge list (large n)");
  cmd->add_flag("--json", args->json, "print one JSON object describing what was written");
  cmd->callback([args] { run_generate(*args); });
}

}  // namespace birkhoff::cli
