// Bindings of birkhoff::align (QPAlign and the planted-instance generators) and of graph
// Gromov-Wasserstein, which share the graph builder: thin wrappers, GIL released while solving.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <set>
#include <span>
#include <type_traits>

#include "arrays.hpp"
#include "birkhoff/graph/align/describe.hpp"
#include "birkhoff/graph/align/generate.hpp"
#include "birkhoff/graph/align/multilevel.hpp"
#include "birkhoff/graph/align/presets.hpp"
#include "birkhoff/graph/align/qpalign.hpp"
#include "birkhoff/graph/align/score.hpp"
#include "birkhoff/graph/graph.hpp"
#include "birkhoff/graph/gromov.hpp"
#include "birkhoff/graph/gromov_describe.hpp"
#include "describe.hpp"

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
nb::dict input_dict(const graph::AttributedGraph& g) {
  nb::dict d;
  d["nodes"] = g.num_nodes;
  d["self_loops_used"] = g.self_loops;
  d["duplicates_merged"] = g.duplicates_merged;
  d["one_way_pairs"] = g.one_way_pairs;
  d["two_way_pairs"] = g.two_way_pairs;
  d["directed"] = g.directed;
  return d;
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
                     const nb::dict& options, const nb::dict& multilevel, const std::string& preset,
                     nb::object progress) {
  align::QpAlignOptions o = options_from_kwargs<align::QpAlignOptions>(options);
  const auto ml = options_from_kwargs<align::MultilevelOptions>(multilevel);
  // The options passed hold in every preset's run (presets.hpp).
  std::set<std::string, std::less<>> given;
  for (auto [key, value] : options) given.insert(nb::cast<std::string>(key));
  o.seeds = pairs(seeds, "seeds");
  o.truth = pairs(truth, "truth");
  o.progress = progress_with_signals(progress);
  const auto candidates = align::preset_candidates(o, preset, given);
  nb::dict g1_input, g2_input;
  align::Selection selection = call_without_gil([&] {
    const auto g1 = make_graph(n1, e1, w1, a1, x1, directed, o.num_threads, "1");
    const auto g2 = make_graph(n2, e2, w2, a2, x2, directed, o.num_threads, "2");
    {
      nb::gil_scoped_acquire gil;
      g1_input = input_dict(g1);
      g2_input = input_dict(g2);
    }
    return align::align_select(g1, g2, candidates, ml);
  });
  align::Alignment& r = selection.alignment;
  nb::dict d = to_dict(r);
  nb::dict likelihoods;
  for (std::size_t k = 0; k < selection.presets.size(); ++k)
    likelihoods[enum_name(kPresetNames, selection.presets[k])] = selection.likelihoods[k];
  d["candidates"] = likelihoods;
  d["options"] = to_dict(candidates[selection.chosen].options);
  d["hint"] = align::stop_hint(r);
  if (r.has_metrics) d["metrics"] = to_dict(r.metrics);
  move_arrays(std::move(r), d);
  d["graph1"] = g1_input;
  d["graph2"] = g2_input;
  return d;
}

nb::dict run_graph_gromov(std::int64_t n1, std::int64_t n2, std::optional<In<std::int64_t>> e1,
                          std::optional<In<std::int64_t>> e2, std::optional<In<double>> w1,
                          std::optional<In<double>> w2, std::optional<In<double>> a1,
                          std::optional<In<double>> a2, std::optional<In<float>> x1,
                          std::optional<In<float>> x2, std::optional<In<double>> a,
                          std::optional<In<double>> b, double epsilon,
                          std::optional<In<double>> init, const nb::dict& options,
                          nb::object progress) {
  graph::check_plan_size(n1, n2);
  auto o = options_from_kwargs<graph::GraphGromovOptions>(options);
  o.progress = progress_with_signals(progress);
  const auto av = vector_view(a, "a"), bv = vector_view(b, "b");
  MatrixView<const double> t0;
  if (init) t0 = matrix(*init, "init");
  auto r = call_without_gil([&] {
    const auto g1 = make_graph(n1, e1, w1, a1, x1, false, o.num_threads, "1");
    const auto g2 = make_graph(n2, e2, w2, a2, x2, false, o.num_threads, "2");
    return graph::graph_gromov_wasserstein(g1, g2, av, bv, epsilon, o, t0);
  });
  nb::dict d = to_dict(r);
  move_arrays(std::move(r), d);
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
  return to_dict(
      call_without_gil([&] { return align::score(p, matrix(soft_or_topk, name), t, s); }));
}

nb::dict planted(const std::string& model, std::int64_t n, std::int64_t d, double rho, double r,
                 double p, std::uint64_t seed, bool standardize) {
  align::PlantedInstance inst = call_without_gil([&] {
    return model == "wigner" ? align::correlated_wigner(n, d, rho, r, seed, standardize)
                             : align::correlated_erdos_renyi(n, d, rho, r, p, seed, standardize);
  });
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
  m.def("describe_qpalign_options", &describe_options<align::QpAlignOptions>);
  m.def("align_qpalign", &run_qpalign, nb::arg("n1"), nb::arg("n2"), nb::arg("edge_index1").none(),
        nb::arg("edge_index2").none(), nb::arg("edge_weight1").none(),
        nb::arg("edge_weight2").none(), nb::arg("adjacency1").none(), nb::arg("adjacency2").none(),
        nb::arg("x1").none(), nb::arg("x2").none(), nb::arg("directed"), nb::arg("seeds").none(),
        nb::arg("truth").none(), nb::arg("options"), nb::arg("multilevel"), nb::arg("preset"),
        nb::arg("progress").none());
  m.def("describe_multilevel_options", &describe_options<align::MultilevelOptions>);
  m.def("align_presets", [] {
    nb::dict out;
    for (const align::PresetSettings& p : align::kPresets) {
      nb::dict d;
      d["lambda_edge"] = p.lambda_edge;
      d["lambda_feature"] = p.lambda_feature;
      d["gamma"] = p.gamma;
      d["max_iter"] = p.max_iter;
      d["sinkhorn_sweeps"] = p.sinkhorn_sweeps;
      d["step"] = p.step;
      d["init"] = enum_name(kInitNames, p.init);
      out[enum_name(kPresetNames, p.preset)] = d;
    }
    return out;
  });
  m.def("align_planted", &planted, nb::arg("model"), nb::arg("n"), nb::arg("d"), nb::arg("rho"),
        nb::arg("r"), nb::arg("p"), nb::arg("seed"), nb::arg("standardize"));
  m.def("align_score", &score<double>, nb::arg("perm"), nb::arg("soft"), nb::arg("truth"),
        nb::arg("seeds").none());
  m.def("align_score", &score<std::int64_t>, nb::arg("perm"), nb::arg("topk"), nb::arg("truth"),
        nb::arg("seeds").none());
  m.def("describe_graph_gromov_options", &describe_options<graph::GraphGromovOptions>);
  m.def("graph_gromov_wasserstein", &run_graph_gromov, nb::arg("n1"), nb::arg("n2"),
        nb::arg("edge_index1").none(), nb::arg("edge_index2").none(),
        nb::arg("edge_weight1").none(), nb::arg("edge_weight2").none(),
        nb::arg("adjacency1").none(), nb::arg("adjacency2").none(), nb::arg("x1").none(),
        nb::arg("x2").none(), nb::arg("a").none(), nb::arg("b").none(), nb::arg("epsilon"),
        nb::arg("init").none(), nb::arg("options"), nb::arg("progress").none());
  m.def("align_exact_margin", &align::exact_margin);
  m.def("align_partial_margin", &align::partial_margin);
}

}  // namespace birkhoff::python
