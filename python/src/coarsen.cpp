// Bindings of birkhoff::coarsen (NOPE / NOPE*): thin wrappers, GIL released while coarsening.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "arrays.hpp"
#include "birkhoff/graph/coarsen/nope.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::python {
namespace {

/// The inputs (kept alive without a copy), their graph and the merge tree of a run, so that
/// cut() can rebuild coarser-or-equal results without running again.
struct CoarsenState {
  In<float> x;
  In<std::int64_t> edge_index;
  graph::AttributedGraph graph;
  coarsen::MergeTree run;
  int threads = 0;
};

/// One dict with the tree's merges and counts and the coarse graph's arrays.
nb::dict to_dict(coarsen::MergeTree tree, coarsen::CoarseGraph&& r) {
  const auto k = static_cast<std::size_t>(tree.num_merges());
  const auto kc = static_cast<std::size_t>(r.num_super_nodes());
  const auto ec = static_cast<std::size_t>(r.num_coarse_edges());
  const auto n = static_cast<std::size_t>(r.num_nodes);
  nb::dict d;
  d["merges"] = to_numpy(std::move(tree.merges), {k, 3});
  d["keys"] = to_numpy(std::move(tree.keys), {k});
  d["roots"] = to_numpy(std::move(r.roots), {kc});
  d["assignment"] = to_numpy(std::move(r.assignment), {n});
  d["sizes"] = to_numpy(std::move(r.sizes), {kc});
  d["members_indptr"] = to_numpy(std::move(r.members_indptr), {kc + 1});
  d["members"] = to_numpy(std::move(r.members), {n});
  d["x"] = to_numpy(std::move(r.features), {kc, static_cast<std::size_t>(r.dim)});
  d["edge_index"] = to_numpy(std::move(r.edge_index), {2, ec});
  const std::size_t ew = r.edge_weight.size();
  d["edge_weight"] = to_numpy(std::move(r.edge_weight), {ew});
  d["num_nodes"] = r.num_nodes;
  d["target"] = tree.target;
  d["reached_target"] = tree.reached_target;
  d["self_loops_dropped"] = tree.self_loops_dropped;
  d["duplicates_merged"] = tree.duplicates_merged;
  d["one_way_pairs"] = tree.one_way_pairs;
  d["two_way_pairs"] = tree.two_way_pairs;
  d["heap_pushes"] = tree.heap_pushes;
  return d;
}

nb::tuple run_nope(In<float> x, In<std::int64_t> edge_index, double ratio,
                   std::optional<std::int64_t> n_coarse, const std::string& method,
                   const std::string& key_precision, bool clamp_interference, bool edge_weights,
                   int num_threads, nb::object progress) {
  require(method == "nope" || method == "nope_star" || method == "nope-star", "method",
          "must be 'nope' or 'nope_star', got '" + method + "'");
  require(key_precision == "numpy1" || key_precision == "numpy2", "key_precision",
          "must be 'numpy1' or 'numpy2', got '" + key_precision + "'");
  require(x.ndim() == 2, "x", "must be a 2-D array of shape (N, D)");
  require(edge_index.ndim() == 2 && edge_index.shape(0) == 2, "edge_index",
          "must have shape (2, E)");
  auto state = std::make_unique<CoarsenState>();
  state->x = x;
  state->edge_index = edge_index;
  state->threads = num_threads;
  coarsen::NopeOptions o;
  o.variant = method == "nope" ? coarsen::Variant::Nope : coarsen::Variant::NopeStar;
  o.ratio = ratio;
  o.n_coarse = n_coarse;
  o.key_precision =
      key_precision == "numpy1" ? coarsen::KeyPrecision::NumPy1 : coarsen::KeyPrecision::NumPy2;
  o.clamp_interference = clamp_interference;
  o.num_threads = num_threads;
  o.progress = progress_with_signals(progress);
  coarsen::CutOptions cut_options;
  cut_options.edge_weights = edge_weights;
  cut_options.num_threads = num_threads;
  coarsen::CoarseGraph r;
  {
    nb::gil_scoped_release release;
    state->graph = graph::from_edge_index(
        {edge_index.data(), 2, static_cast<std::int64_t>(edge_index.shape(1))},
        {x.data(), static_cast<std::int64_t>(x.shape(0)), static_cast<std::int64_t>(x.shape(1))},
        num_threads);
    state->run = coarsen::nope(state->graph, o);
    r = coarsen::cut(state->run, state->graph, cut_options);
  }
  nb::dict fields = to_dict(state->run, std::move(r));
  nb::object handle = nb::cast(std::move(*state));
  return nb::make_tuple(handle, fields);
}

nb::dict cut(const CoarsenState& s, std::int64_t n_coarse, bool edge_weights) {
  coarsen::MergeTree tree;
  coarsen::CoarseGraph r;
  coarsen::CutOptions cut_options;
  cut_options.edge_weights = edge_weights;
  cut_options.num_threads = s.threads;
  {
    nb::gil_scoped_release release;
    tree = coarsen::prefix(s.run, n_coarse);
    r = coarsen::cut(tree, s.graph, cut_options);
  }
  return to_dict(std::move(tree), std::move(r));
}

}  // namespace

void register_coarsen(nb::module_& m) {
  nb::class_<CoarsenState>(m, "CoarsenState")
      .def("cut", &cut, nb::arg("n_coarse"), nb::arg("edge_weights") = true);
  m.def("coarsen_nope", &run_nope, nb::arg("x"), nb::arg("edge_index"), nb::arg("ratio"),
        nb::arg("n_coarse").none(), nb::arg("method"), nb::arg("key_precision"),
        nb::arg("clamp_interference"), nb::arg("edge_weights"), nb::arg("num_threads"),
        nb::arg("progress").none());
  m.def("coarsen_target", &coarsen::target_for_ratio, nb::arg("num_nodes"), nb::arg("ratio"));
}

}  // namespace birkhoff::python
