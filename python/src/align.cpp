// Bindings of birkhoff::align (QPAlign and the planted-instance generators): thin wrappers,
// GIL released while solving.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <span>
#include <type_traits>

#include "arrays.hpp"
#include "birkhoff/graph/align/generate.hpp"
#include "birkhoff/graph/align/qpalign.hpp"
#include "birkhoff/graph/align/score.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::python {
namespace {

/// The graph of one side from an edge list or a dense adjacency (checked by the builders).
graph::AttributedGraph make_graph(std::int64_t n, const std::optional<In<std::int64_t>>& edge_index,
                                  const std::optional<In<double>>& edge_weight,
                                  const std::optional<In<double>>& adjacency,
                                  const std::optional<In<float>>& x, bool directed, int num_threads,
                                  const std::string& suffix) {
  graph::BuildOptions options;
  options.directed = directed;
  options.num_threads = num_threads;
  options.suffix = suffix;
  MatrixView<const float> features;
  if (x) {
    require(x->ndim() == 2, "x" + suffix, "must have shape (n, d)");
    features = matrix(*x, ("x" + suffix).c_str());
  }
  if (adjacency) {
    require(!edge_index, "edge_index" + suffix,
            "give either an edge list or a dense adjacency, not both");
    require(adjacency->ndim() == 2, "adjacency" + suffix, "must have shape (n, n)");
    const auto a = matrix(*adjacency, ("adjacency" + suffix).c_str());
    require(a.rows == n && a.cols == n, "adjacency" + suffix,
            "expected shape (" + std::to_string(n) + ", " + std::to_string(n) + "), got (" +
                std::to_string(a.rows) + ", " + std::to_string(a.cols) + ")");
    return graph::from_adjacency(a, features, options);
  }
  MatrixView<const std::int64_t> edges;
  if (edge_index) {
    require(edge_index->ndim() == 2, "edge_index" + suffix, "must have shape (2, E)");
    edges = matrix(*edge_index, ("edge_index" + suffix).c_str());
  }
  return graph::from_edge_index(
      edges, n, vector_view(edge_weight, ("edge_weight" + suffix).c_str()), features, options);
}

// What the builder did with a graph's input (the CLI's "graph1"/"graph2" JSON objects).
struct InputCounts {
  std::int64_t nodes = 0, self_loops = 0, duplicates_merged = 0, one_way_pairs = 0,
               two_way_pairs = 0;
  bool directed = false;
};

InputCounts input_counts(const graph::AttributedGraph& g) {
  return {g.num_nodes,     g.self_loops,    g.duplicates_merged,
          g.one_way_pairs, g.two_way_pairs, g.directed};
}

nb::dict input_dict(const InputCounts& c) {
  nb::dict d;
  d["nodes"] = c.nodes;
  d["self_loops_used"] = c.self_loops;
  d["duplicates_merged"] = c.duplicates_merged;
  d["one_way_pairs"] = c.one_way_pairs;
  d["two_way_pairs"] = c.two_way_pairs;
  d["directed"] = c.directed;
  return d;
}

nb::dict metrics_dict(const align::AlignMetrics& metrics) {
  nb::dict m;
  m["pairs"] = metrics.pairs;
  m["overlap"] = metrics.overlap;
  m["overlap_unseeded"] = metrics.overlap_unseeded;
  m["exact"] = metrics.exact;
  m["hits1"] = metrics.hits1;
  m["hits5"] = metrics.hits5;
  m["hits10"] = metrics.hits10;
  m["mrr"] = metrics.mrr;
  return m;
}

MatrixView<const std::int64_t> pairs(const std::optional<In<std::int64_t>>& a, const char* name) {
  if (!a) return {};
  require(a->ndim() == 2, name, "must have shape (k, 2) [node of G1, node of G2]");
  return matrix(*a, name);
}

nb::dict run_qpalign(std::int64_t n1, std::int64_t n2, std::optional<In<std::int64_t>> e1,
                     std::optional<In<std::int64_t>> e2, std::optional<In<double>> w1,
                     std::optional<In<double>> w2, std::optional<In<double>> a1,
                     std::optional<In<double>> a2, std::optional<In<float>> x1,
                     std::optional<In<float>> x2, bool directed,
                     std::optional<In<std::int64_t>> seeds, std::optional<In<std::int64_t>> truth,
                     double lambda_edge, double lambda_feature, double gamma, double mle_rho,
                     double mle_r, std::int64_t max_iter, std::int64_t sinkhorn_sweeps,
                     double sinkhorn_tol, std::int64_t sinkhorn_anderson, double step,
                     bool barzilai_borwein, const std::string& bb_negative_curvature, double tol,
                     std::int64_t patience, const std::string& init, std::uint64_t seed,
                     std::int64_t top_k, bool return_soft, int num_threads, nb::object progress) {
  require(bb_negative_curvature == "previous" || bb_negative_curvature == "maximum",
          "bb_negative_curvature",
          "must be 'previous' or 'maximum', got '" + bb_negative_curvature + "'");
  require(init == "similarity" || init == "random" || init == "barycenter", "init",
          "must be 'similarity', 'random' or 'barycenter', got '" + init + "'");
  align::QpAlignOptions o;
  o.lambda_edge = lambda_edge;
  o.lambda_feature = lambda_feature;
  o.gamma = gamma;
  o.mle_rho = mle_rho;
  o.mle_r = mle_r;
  o.max_iter = max_iter;
  o.sinkhorn_sweeps = sinkhorn_sweeps;
  o.sinkhorn_tol = sinkhorn_tol;
  o.sinkhorn_anderson = sinkhorn_anderson;
  o.step = step;
  o.barzilai_borwein = barzilai_borwein;
  o.bb_negative_curvature = bb_negative_curvature == "previous" ? align::NegativeCurvature::Previous
                                                                : align::NegativeCurvature::Maximum;
  o.tol = tol;
  o.patience = patience;
  o.init = init == "similarity" ? align::Init::Similarity
           : init == "random"   ? align::Init::Random
                                : align::Init::Barycenter;
  o.seed = seed;
  o.seeds = pairs(seeds, "seeds");
  o.truth = pairs(truth, "truth");
  o.top_k = top_k;
  o.return_soft = return_soft;
  o.num_threads = num_threads;
  o.progress = progress_with_signals(progress);
  align::Alignment r;
  InputCounts c1, c2;
  {
    nb::gil_scoped_release release;
    const auto g1 = make_graph(n1, e1, w1, a1, x1, directed, num_threads, "1");
    const auto g2 = make_graph(n2, e2, w2, a2, x2, directed, num_threads, "2");
    c1 = input_counts(g1);
    c2 = input_counts(g2);
    r = align::qpalign(g1, g2, o);
  }
  const auto rows = static_cast<std::size_t>(r.n1), k = static_cast<std::size_t>(r.top_k);
  nb::dict d;
  d["perm"] = to_numpy(std::move(r.perm), {rows});
  d["topk"] = to_numpy(std::move(r.topk), {rows, k});
  d["topk_scores"] = to_numpy(std::move(r.topk_scores), {rows, k});
  const std::size_t soft_cols = r.soft.empty() ? 0 : static_cast<std::size_t>(r.n2);
  d["soft"] = to_numpy(std::move(r.soft), {r.soft.empty() ? 0 : rows, soft_cols});
  const std::size_t iters = r.objective.size();
  d["objective"] = to_numpy(std::move(r.objective), {iters});
  d["iterations"] = r.iterations;
  d["converged"] = r.converged;
  d["stable"] = r.stable;
  d["nan_restarts"] = r.nan_restarts;
  d["lambda_edge"] = r.lambda_edge;
  d["lambda_feature"] = r.lambda_feature;
  d["graph1"] = input_dict(c1);
  d["graph2"] = input_dict(c2);
  if (r.has_metrics) d["metrics"] = metrics_dict(r.metrics);
  return d;
}

/// align::score() from the soft scores (float64) or the top-k lists (int64).
template <class T>
nb::dict score(In<std::int64_t> perm, In<T> soft_or_topk, In<std::int64_t> truth,
               std::optional<In<std::int64_t>> seeds) {
  const char* name = std::is_same_v<T, double> ? "soft" : "topk";
  require(perm.ndim() == 1, "perm", "must be a 1-D array");
  require(soft_or_topk.ndim() == 2, name, "must be a 2-D array");
  const std::span<const std::int64_t> p(perm.data(), perm.shape(0));
  const auto t = pairs(std::optional<In<std::int64_t>>(truth), "truth");
  const auto s = pairs(seeds, "seeds");
  align::AlignMetrics m;
  {
    nb::gil_scoped_release release;
    m = align::score(p, matrix(soft_or_topk, name), t, s);
  }
  return metrics_dict(m);
}

nb::dict planted(const std::string& model, std::int64_t n, std::int64_t d, double rho, double r,
                 double p, std::uint64_t seed, bool standardize) {
  align::PlantedInstance inst;
  {
    nb::gil_scoped_release release;
    inst = model == "wigner" ? align::correlated_wigner(n, d, rho, r, seed, standardize)
                             : align::correlated_erdos_renyi(n, d, rho, r, p, seed, standardize);
  }
  const auto nn = static_cast<std::size_t>(n), dd = static_cast<std::size_t>(d);
  nb::dict out;
  out["a"] = to_numpy(std::move(inst.a), {nn, nn});
  out["b"] = to_numpy(std::move(inst.b), {nn, nn});
  out["x1"] = to_numpy(std::move(inst.x1), {nn, dd});
  out["x2"] = to_numpy(std::move(inst.x2), {nn, dd});
  out["perm"] = to_numpy(std::move(inst.perm), {nn});
  return out;
}

}  // namespace

void register_align(nb::module_& m) {
  m.def("align_qpalign", &run_qpalign, nb::arg("n1"), nb::arg("n2"), nb::arg("edge_index1").none(),
        nb::arg("edge_index2").none(), nb::arg("edge_weight1").none(),
        nb::arg("edge_weight2").none(), nb::arg("adjacency1").none(), nb::arg("adjacency2").none(),
        nb::arg("x1").none(), nb::arg("x2").none(), nb::arg("directed"), nb::arg("seeds").none(),
        nb::arg("truth").none(), nb::arg("lambda_edge"), nb::arg("lambda_feature"),
        nb::arg("gamma"), nb::arg("mle_rho"), nb::arg("mle_r"), nb::arg("max_iter"),
        nb::arg("sinkhorn_sweeps"), nb::arg("sinkhorn_tol"), nb::arg("sinkhorn_anderson"),
        nb::arg("step"), nb::arg("barzilai_borwein"), nb::arg("bb_negative_curvature"),
        nb::arg("tol"), nb::arg("patience"), nb::arg("init"), nb::arg("seed"), nb::arg("top_k"),
        nb::arg("return_soft"), nb::arg("num_threads"), nb::arg("progress").none());
  m.def("align_planted", &planted, nb::arg("model"), nb::arg("n"), nb::arg("d"), nb::arg("rho"),
        nb::arg("r"), nb::arg("p"), nb::arg("seed"), nb::arg("standardize"));
  m.def("align_score", &score<double>, nb::arg("perm"), nb::arg("soft"), nb::arg("truth"),
        nb::arg("seeds").none());
  m.def("align_score", &score<std::int64_t>, nb::arg("perm"), nb::arg("topk"), nb::arg("truth"),
        nb::arg("seeds").none());
  m.def("align_exact_margin", &align::exact_margin);
  m.def("align_partial_margin", &align::partial_margin);
}

}  // namespace birkhoff::python
