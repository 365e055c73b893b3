#pragma once

#include <tuple>

#include "birkhoff/core/describe.hpp"
#include "birkhoff/graph/gromov.hpp"

namespace birkhoff {

inline constexpr EnumName<graph::Structure> kStructureNames[] = {
    {"adjacency", graph::Structure::Adjacency}, {"shortest_path", graph::Structure::ShortestPath}};

/// The graph Gromov-Wasserstein settings as every front end shows them (progress excepted).
template <>
struct Describe<graph::GraphGromovOptions> {
  using S = graph::GraphGromovOptions;
  static constexpr auto fields() {
    return std::tuple{
        field("alpha", &S::alpha,
              "fused GW: weight of the structure term, (1 - alpha) features + alpha GW"),
        field("structure", &S::structure,
              "inner cost: the adjacency (sparse) or shortest-path lengths (dense)",
              kStructureNames),
        field("max_iter", &S::max_iter, "outer iterations (one Sinkhorn solve each) at the most"),
        field("tol", &S::tol, "stop when the plan changes by less than this (relative L1)"),
        field("marginal_tol", &S::marginal_tol, "each inner solve's relative marginal error"),
        field("inner_max_iter", &S::inner_max_iter, "each inner solve's iteration budget"),
        field("num_threads", &S::num_threads, "OpenMP threads (0 = OpenMP's default)"),
    };
  }
};

/// The graph Gromov-Wasserstein result: the CLI's JSON and .npz members, Python's keys.
template <>
struct Describe<graph::GraphGromovResult> {
  using S = graph::GraphGromovResult;
  static std::vector<std::int64_t> nm(const S& s) { return {s.n, s.m}; }
  static std::vector<std::int64_t> rows(const S& s) { return {s.n}; }
  static constexpr auto fields() {
    return std::tuple{
        field("loss", &S::loss, "the objective at the final plan, without the entropy"),
        field("gw_loss", &S::gw_loss, "the Gromov-Wasserstein term"),
        field("feature_loss", &S::feature_loss, "fused GW: the feature term <T, M>"),
        field("epsilon", &S::epsilon, "the entropic regularisation"),
        field("iterations", &S::iterations, "outer iterations"),
        field("inner_iterations", &S::inner_iterations, "Sinkhorn iterations in all"),
        field("converged", &S::converged, "tol met and the last inner solve converged"),
        field("marginal_error", &S::marginal_error, "relative marginal error of the final plan"),
    };
  }
  static constexpr auto arrays() {
    return std::tuple{
        array_field("plan", &S::plan, &nm, "the final plan"),
        array_field("matching", &S::matching, &rows, "each row's largest plan entry"),
    };
  }
};

}  // namespace birkhoff
