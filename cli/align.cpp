// `birkhoff align G1_DIR G2_DIR` (QPAlign) and `birkhoff generate wigner|er OUT_DIR`.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/generate.hpp"
#include "birkhoff/graph/align/qpalign.hpp"
#include "birkhoff/graph/graph.hpp"
#include "birkhoff/io/graph_dir.hpp"
#include "birkhoff/io/npy.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace birkhoff::cli {
namespace {

struct AlignArgs {
  std::string g1_dir, g2_dir, seeds, truth, output, init = "similarity";
  double lambda_edge = 0.1, lambda_feature = 0.9, gamma = 0.1, step = 1e-4, tol = 1e-7;
  double sinkhorn_tol = 1e-9, mle_rho = -1, mle_r = -1;
  std::int64_t max_iter = 400, sweeps = 80, top_k = 10, patience = 5, anderson = 20;
  std::string bb_negative = "maximum";
  std::uint64_t seed = 0;
  int threads = 0;
  bool directed = false, no_bb = false, soft = false, json = false, quiet = false;
};

// A graph folder: the arrays read (the graph borrows the features) and the graph built from
// them (the edges become its CSR).
struct GraphInput {
  io::GraphDir dir;
  graph::AttributedGraph graph;
  std::int64_t nodes_from_ids = 0;  ///< N when N was set by the largest id, not by features
};

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

io::NpyArray load_pairs(const std::string& path, const std::string& what,
                        std::map<std::string, std::string>& converted) {
  require(std::filesystem::exists(path), what, "file not found: " + path);
  io::NpyArray a = io::read_npy_as<std::int64_t>(path, what);
  require(a.shape.size() == 2 && a.shape[1] == 2, what,
          path + " must hold a (k, 2) integer array [node of G1, node of G2]");
  if (a.converted_from) converted[what] = a.conversion();
  return a;
}

// qpalign() names its options as in C++ and Python; the CLI's flags for them.
align::Alignment qpalign_naming_flags(const graph::AttributedGraph& g1,
                                      const graph::AttributedGraph& g2,
                                      const align::QpAlignOptions& o) {
  static const std::pair<const char*, const char*> kFlags[] = {
      {"lambda_edge", "--lambda-edge"},
      {"lambda_feature", "--lambda-feature"},
      {"gamma", "--gamma"},
      {"mle_rho", "--mle-rho"},
      {"mle_r", "--mle-r"},
      {"max_iter", "--iters"},
      {"sinkhorn_sweeps", "--sweeps"},
      {"sinkhorn_tol", "--sinkhorn-tol"},
      {"sinkhorn_anderson", "--anderson"},
      {"step", "--step"},
      {"tol", "--tol"},
      {"top_k", "--top-k"},
      {"patience", "--patience"}};
  try {
    return align::qpalign(g1, g2, o);
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    for (const auto& [option, flag] : kFlags) {
      const std::string prefix = std::string(option) + ": ";
      if (what.rfind(prefix, 0) == 0)
        throw InvalidInput(flag + (": " + what.substr(prefix.size())));
    }
    throw;
  }
}

void run_align(const AlignArgs& args) {
  align::QpAlignOptions o;
  require(args.init == "similarity" || args.init == "random" || args.init == "barycenter", "--init",
          "must be similarity, random or barycenter; got " + args.init);
  o.init = args.init == "similarity" ? align::Init::Similarity
           : args.init == "random"   ? align::Init::Random
                                     : align::Init::Barycenter;
  o.lambda_edge = args.lambda_edge;
  o.lambda_feature = args.lambda_feature;
  o.gamma = args.gamma;
  o.mle_rho = args.mle_rho;
  o.mle_r = args.mle_r;
  o.max_iter = args.max_iter;
  o.sinkhorn_sweeps = args.sweeps;
  o.sinkhorn_tol = args.sinkhorn_tol;
  o.sinkhorn_anderson = args.anderson;
  require(args.bb_negative == "previous" || args.bb_negative == "maximum",
          "--bb-negative-curvature", "must be previous or maximum; got " + args.bb_negative);
  o.bb_negative_curvature = args.bb_negative == "previous" ? align::NegativeCurvature::Previous
                                                           : align::NegativeCurvature::Maximum;
  o.step = args.step;
  o.tol = args.tol;
  o.barzilai_borwein = !args.no_bb;
  o.seed = args.seed;
  o.top_k = args.top_k;
  o.patience = args.patience;
  o.return_soft = args.soft;
  o.num_threads = args.threads;
  std::map<std::string, std::string> converted;
  const GraphInput g1 = load_graph(args.g1_dir, "1", args.directed, args.threads, converted);
  const GraphInput g2 = load_graph(args.g2_dir, "2", args.directed, args.threads, converted);
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
  const auto r = qpalign_naming_flags(g1.graph, g2.graph, o);
  const double seconds = seconds_since(start);

  if (!args.output.empty()) {
    std::filesystem::create_directories(args.output);
    const std::string dir = args.output + "/";
    const std::vector<std::int64_t> s_perm = {r.n1}, s_topk = {r.n1, r.top_k},
                                    s_soft = {r.n1, r.n2},
                                    s_obj = {static_cast<std::int64_t>(r.objective.size())};
    io::write_npy(dir + "perm.npy", std::span<const std::int64_t>(s_perm), r.perm.data());
    io::write_npy(dir + "topk.npy", std::span<const std::int64_t>(s_topk), r.topk.data());
    io::write_npy(dir + "topk_scores.npy", std::span<const std::int64_t>(s_topk),
                  r.topk_scores.data());
    io::write_npy(dir + "objective.npy", std::span<const std::int64_t>(s_obj), r.objective.data());
    if (args.soft) {
      io::write_npy(dir + "soft.npy", std::span<const std::int64_t>(s_soft), r.soft.data());
    }
  }
  const std::int64_t unmatched = std::count(r.perm.begin(), r.perm.end(), -1);
  std::vector<std::string> warnings;
  for (const auto* g : {&g1, &g2}) {
    const std::string name = std::string("edge_index") + (g == &g1 ? "1" : "2");
    const std::string w = orientation_warning(
        g->graph, name, "pass --directed to read each column (u, v) as the entry A[u, v] only");
    if (!w.empty()) warnings.push_back(w);
  }
  for (const auto& w : warnings) print_warning(w);
  if (args.json) {
    nlohmann::json j = {
        {"n1", r.n1},
        {"n2", r.n2},
        {"iterations", r.iterations},
        {"converged", r.converged},
        {"stable", r.stable},
        {"objective", r.objective.empty() ? 0.0 : r.objective.back()},
        {"lambda_edge", r.lambda_edge},
        {"lambda_feature", r.lambda_feature},
        {"unmatched", unmatched},
        {"nan_restarts", r.nan_restarts},
        {"graph1", graph_input_json(g1.graph, g1.nodes_from_ids, "self_loops_used")},
        {"graph2", graph_input_json(g2.graph, g2.nodes_from_ids, "self_loops_used")},
        {"warnings", warnings},
        {"converted", converted},
        {"seconds", seconds},
        {"seconds_per_iteration",
         r.iterations > 0 ? seconds / static_cast<double>(r.iterations) : 0.0},
        {"peak_rss_mb", peak_rss_mb()}};
    if (r.has_metrics) {
      j["pairs"] = r.metrics.pairs;
      j["overlap"] = r.metrics.overlap;
      j["overlap_unseeded"] = r.metrics.overlap_unseeded;
      j["exact"] = r.metrics.exact;
      j["hits1"] = r.metrics.hits1;
      j["hits5"] = r.metrics.hits5;
      j["hits10"] = r.metrics.hits10;
      j["mrr"] = r.metrics.mrr;
    }
    print_json(j);
  } else {
    std::printf("qpalign: %lld -> %lld nodes, %lld iterations%s, %.3f s, peak RSS %.1f MB\n",
                static_cast<long long>(r.n1), static_cast<long long>(r.n2),
                static_cast<long long>(r.iterations), r.converged ? " (converged)" : "", seconds,
                peak_rss_mb());
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
      "topk.npy (n1, k) int64, topk_scores.npy, objective.npy and with --soft soft.npy (n1, n2). "
      "Defaults are the authors' synthetic settings; Douban: --lambda-edge 0.2 --lambda-feature "
      "0.8 --gamma 0 --iters 1000 --sweeps 200 --step 5e-3 --init random.");
  cmd->add_option("G1_DIR", args->g1_dir, "folder of the first graph")->required();
  cmd->add_option("G2_DIR", args->g2_dir, "folder of the second graph")->required();
  cmd->add_option("--seeds", args->seeds, "known pairs (k, 2) integer .npy [G1 node, G2 node]");
  cmd->add_option("--truth", args->truth, "true pairs (t, 2) integer .npy for the metrics");
  cmd->add_option("--output", args->output, "write perm.npy, topk.npy, ... into this folder");
  cmd->add_option("--lambda-edge", args->lambda_edge, "weight of ||A Pi - Pi B||^2")
      ->capture_default_str();
  cmd->add_option("--lambda-feature", args->lambda_feature, "weight of sum D Pi^2")
      ->capture_default_str();
  cmd->add_option("--gamma", args->gamma, "weight of the concave penalty")->capture_default_str();
  cmd->add_option("--mle-rho", args->mle_rho, "with --mle-r: MLE-consistent weights");
  cmd->add_option("--mle-r", args->mle_r, "with --mle-rho: MLE-consistent weights");
  cmd->add_option("--iters", args->max_iter, "maximum iterations T")->capture_default_str();
  cmd->add_option("--sweeps", args->sweeps, "maximum Sinkhorn sweeps K per projection")
      ->capture_default_str();
  cmd->add_option("--sinkhorn-tol", args->sinkhorn_tol, "row-sum error to stop balancing (0 = K)")
      ->capture_default_str();
  cmd->add_option("--anderson", args->anderson,
                  "Anderson acceleration window of the balancing (0 = plain Sinkhorn)")
      ->capture_default_str();
  cmd->add_option("--step", args->step, "first step alpha0")->capture_default_str();
  cmd->add_option("--tol", args->tol, "relative objective change to stop")->capture_default_str();
  cmd->add_option("--patience", args->patience,
                  "also stop when the argmax bijection is unchanged this many iterations (0 = off)")
      ->capture_default_str();
  cmd->add_flag("--no-bb", args->no_bb, "fixed step instead of Barzilai-Borwein");
  cmd->add_option("--bb-negative-curvature", args->bb_negative,
                  "BB step when <S,Y> < 0: maximum (the reference's 0.5) or previous (keep the "
                  "last step)")
      ->capture_default_str();
  cmd->add_option("--init", args->init, "similarity, random or barycenter")->capture_default_str();
  cmd->add_option("--seed", args->seed, "random seed of --init random")->capture_default_str();
  cmd->add_option("--top-k", args->top_k, "candidates per node in topk.npy")->capture_default_str();
  cmd->add_flag("--directed", args->directed, "read edges as directed (u -> v)");
  cmd->add_flag("--soft", args->soft, "also write the soft matrix soft.npy (n1, n2)");
  cmd->add_option("--threads", args->threads, "OpenMP threads (0 = all cores)");
  cmd->add_flag("--json", args->json, "print one JSON object with the results");
  cmd->add_flag("--quiet", args->quiet, "no progress bar");
  cmd->callback([args] { run_align(*args); });
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
  cmd->add_option("--seed", args->seed, "seed")->capture_default_str();
  cmd->add_flag("--raw-features", args->raw_features, "skip the column standardisation");
  cmd->add_flag("--dense", args->dense,
                "write adjacency.npy (n, n) float64 instead of an edge list (large n)");
  cmd->add_flag("--json", args->json, "print one JSON object describing what was written");
  cmd->callback([args] { run_generate(*args); });
}

}  // namespace birkhoff::cli
