// Bindings of birkhoff::coarsen (NOPE / NOPE*): thin wrappers, GIL released while coarsening;
// options and results through their descriptions (birkhoff/graph/coarsen/describe.hpp).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "arrays.hpp"
#include "birkhoff/graph/coarsen/describe.hpp"
#include "birkhoff/graph/coarsen/nope.hpp"
#include "birkhoff/graph/graph.hpp"
#include "describe.hpp"

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

/// One dict with the tree's counts and arrays and the coarse graph's arrays (the names of the
/// descriptions, as the CLI's JSON and files).
nb::dict result_dict(coarsen::MergeTree&& tree, coarsen::CoarseGraph&& r) {
  nb::dict d = to_dict(tree);
  move_arrays(std::move(tree), d);
  move_arrays(std::move(r), d);
  return d;
}

nb::tuple run_nope(In<float> x, In<std::int64_t> edge_index, const nb::dict& options,
                   bool edge_weights, nb::object progress) {
  require(x.ndim() == 2, "x", "must be a 2-D array of shape (N, D)");
  require(edge_index.ndim() == 2 && edge_index.shape(0) == 2, "edge_index",
          "must have shape (2, E)");
  coarsen::NopeOptions o = options_from_kwargs<coarsen::NopeOptions>(options);
  o.progress = progress_with_signals(progress);
  auto state = std::make_unique<CoarsenState>();
  state->x = x;
  state->edge_index = edge_index;
  state->threads = o.num_threads;
  coarsen::CutOptions cut_options;
  cut_options.edge_weights = edge_weights;
  cut_options.num_threads = o.num_threads;
  coarsen::CoarseGraph r = call_without_gil([&] {
    state->graph = graph::from_edge_index(
        {edge_index.data(), 2, static_cast<std::int64_t>(edge_index.shape(1))},
        {x.data(), static_cast<std::int64_t>(x.shape(0)), static_cast<std::int64_t>(x.shape(1))},
        o.num_threads);
    state->run = coarsen::nope(state->graph, o);
    return coarsen::cut(state->run, state->graph, cut_options);
  });
  nb::dict fields = result_dict(coarsen::MergeTree(state->run), std::move(r));
  nb::object handle = nb::cast(std::move(*state));
  return nb::make_tuple(handle, fields);
}

nb::dict cut(const CoarsenState& s, std::int64_t n_coarse, bool edge_weights) {
  coarsen::CutOptions cut_options;
  cut_options.edge_weights = edge_weights;
  cut_options.num_threads = s.threads;
  coarsen::MergeTree tree;
  coarsen::CoarseGraph r = call_without_gil([&] {
    tree = coarsen::prefix(s.run, n_coarse);
    return coarsen::cut(tree, s.graph, cut_options);
  });
  return result_dict(std::move(tree), std::move(r));
}

}  // namespace

void register_coarsen(nb::module_& m) {
  m.def("describe_nope_options", &describe_options<coarsen::NopeOptions>);
  nb::class_<CoarsenState>(m, "CoarsenState")
      .def("cut", &cut, nb::arg("n_coarse"), nb::arg("edge_weights") = true);
  m.def("coarsen_nope", &run_nope, nb::arg("x"), nb::arg("edge_index"), nb::arg("options"),
        nb::arg("edge_weights"), nb::arg("progress").none());
  m.def("coarsen_target", &coarsen::target_for_ratio, nb::arg("num_nodes"), nb::arg("ratio"));
}

}  // namespace birkhoff::python
