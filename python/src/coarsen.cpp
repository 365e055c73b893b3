// Bindings of birkhoff::coarsen (NOPE / NOPE*): thin wrappers, GIL released while coarsening.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "arrays.hpp"
#include "birkhoff/graph/coarsen/nope.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::python {
namespace {

/// The inputs (kept alive without a copy), their graph and the merge list of a run, so that
/// cut() can rebuild coarser-or-equal results without running again.
struct CoarsenState {
  In<float> x;
  In<std::int64_t> edge_index;
  graph::AttributedGraph graph;
  coarsen::Coarsening run;  // merges and keys only
  int threads = 0;
};

nb::dict to_dict(coarsen::Coarsening&& r) {
  const auto k = static_cast<std::size_t>(r.num_merges());
  const auto kc = static_cast<std::size_t>(r.num_super_nodes());
  const auto ec = static_cast<std::size_t>(r.num_coarse_edges());
  const auto n = static_cast<std::size_t>(r.num_nodes);
  nb::dict d;
  d["merges"] = to_numpy(std::move(r.merges), {k, 3});
  d["keys"] = to_numpy(std::move(r.keys), {k});
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
  d["target"] = r.target;
  d["reached_target"] = r.reached_target;
  d["self_loops_dropped"] = r.self_loops_dropped;
  d["duplicates_merged"] = r.duplicates_merged;
  d["heap_pushes"] = r.heap_pushes;
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
  o.edge_weights = edge_weights;
  o.num_threads = num_threads;
  o.progress = progress_with_signals(progress);
  coarsen::Coarsening r;
  {
    nb::gil_scoped_release release;
    state->graph = graph::from_edge_index(
        {edge_index.data(), 2, static_cast<std::int64_t>(edge_index.shape(1))},
        {x.data(), static_cast<std::int64_t>(x.shape(0)), static_cast<std::int64_t>(x.shape(1))},
        num_threads);
    r = coarsen::nope(state->graph, o);
  }
  state->run.num_nodes = r.num_nodes;
  state->run.dim = r.dim;
  state->run.target = r.target;
  state->run.merges = r.merges;
  state->run.keys = r.keys;
  state->run.reached_target = r.reached_target;
  state->run.self_loops_dropped = r.self_loops_dropped;
  state->run.duplicates_merged = r.duplicates_merged;
  nb::object handle = nb::cast(std::move(*state));
  return nb::make_tuple(handle, to_dict(std::move(r)));
}

nb::dict cut(const CoarsenState& s, std::int64_t n_coarse, bool edge_weights) {
  coarsen::Coarsening r;
  {
    nb::gil_scoped_release release;
    r = coarsen::cut_to(s.run, s.graph, n_coarse, edge_weights, s.threads);
  }
  return to_dict(std::move(r));
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
