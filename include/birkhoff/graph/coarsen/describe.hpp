#pragma once

#include <tuple>

#include "birkhoff/core/describe.hpp"
#include "birkhoff/graph/coarsen/nope.hpp"

namespace birkhoff {

/// "nope_star" is accepted as well (Python identifiers); "nope-star" is written.
inline constexpr EnumName<coarsen::Method> kCoarsenMethodNames[] = {
    {"nope", coarsen::Method::Nope},
    {"nope-star", coarsen::Method::NopeStar},
    {"nope_star", coarsen::Method::NopeStar}};
inline constexpr EnumName<coarsen::KeyPrecision> kKeyPrecisionNames[] = {
    {"numpy1", coarsen::KeyPrecision::NumPy1}, {"numpy2", coarsen::KeyPrecision::NumPy2}};

/// The options of nope() as every front end shows them (progress excepted).
template <>
struct Describe<coarsen::NopeOptions> {
  using S = coarsen::NopeOptions;
  static constexpr auto fields() {
    return std::tuple{
        field("method", &S::method,
              "nope (neighbourhood interference) or nope-star (isotropic relaxation, faster)",
              kCoarsenMethodNames),
        field("ratio", &S::ratio,
              "fraction of nodes KEPT, in (0, 1]: stop at round(N * ratio) super-nodes"),
        field("n_coarse", &S::n_coarse, "number of super-nodes to keep (overrides ratio)"),
        field("key_precision", &S::key_precision,
              "NOPE key arithmetic of the authors' code under numpy1 (the goldens) or numpy2",
              kKeyPrecisionNames),
        field("clamp_interference", &S::clamp_interference,
              "NOPE: clamp the updated interference at 0 (the authors' code does not)"),
        field("bitset_bytes", &S::bitset_bytes,
              "memory cap of the dense phase's bitset adjacency (-1 = automatic, 0 = never); "
              "the result does not depend on it"),
        field("num_threads", &S::num_threads, "OpenMP threads (0 = OpenMP's default)", "--threads"),
    };
  }
};

/// The merge tree: its counts (JSON, Python attributes) and its arrays (files, Python arrays).
template <>
struct Describe<coarsen::MergeTree> {
  using S = coarsen::MergeTree;
  static constexpr auto fields() {
    return std::tuple{
        field("num_nodes", &S::num_nodes, "N, nodes of the input"),
        field("num_edges", &S::num_edges, "E, the input's edges between distinct nodes"),
        field("target", &S::target, "super-nodes asked for"),
        field("reached_target", &S::reached_target,
              "false when the graph ran out of edges first (one super-node per component)"),
        field("self_loops_dropped", &S::self_loops_dropped, "input self-loops, not used"),
        field("duplicates_merged", &S::duplicates_merged, "input entries repeating an edge"),
        field("one_way_pairs", &S::one_way_pairs, "node pairs listed in one orientation only"),
        field("two_way_pairs", &S::two_way_pairs, "node pairs listed in both orientations"),
        field("heap_pushes", &S::heap_pushes, "queue entries pushed (as the reference counts)"),
    };
  }
  static constexpr auto arrays() {
    return std::tuple{
        array_field(
            "merges", &S::merges,
            +[](const S& s) {
              return std::vector<std::int64_t>{s.num_merges(), 3};
            },
            "(k, 3) int64 rows [N + k, u, v], u < v, in merge order"),
        array_field(
            "keys", &S::keys, +[](const S& s) { return std::vector<std::int64_t>{s.num_merges()}; },
            "(k) float64, the key popped for each merge"),
    };
  }
};

/// The coarse graph's arrays (files, Python arrays).
template <>
struct Describe<coarsen::CoarseGraph> {
  using S = coarsen::CoarseGraph;
  static constexpr auto fields() { return std::tuple{}; }
  static constexpr auto arrays() {
    return std::tuple{
        array_field(
            "roots", &S::roots,
            +[](const S& s) { return std::vector<std::int64_t>{s.num_super_nodes()}; },
            "(K) int64, the live ids at the end, ascending"),
        array_field(
            "assignment", &S::assignment,
            +[](const S& s) { return std::vector<std::int64_t>{s.num_nodes}; },
            "(N) int64, the super-node of every node"),
        array_field(
            "sizes", &S::sizes,
            +[](const S& s) { return std::vector<std::int64_t>{s.num_super_nodes()}; },
            "(K) int64, nodes per super-node"),
        array_field(
            "members_indptr", &S::members_indptr,
            +[](const S& s) { return std::vector<std::int64_t>{s.num_super_nodes() + 1}; },
            "(K + 1) int64, offsets of each super-node's members"),
        array_field(
            "members", &S::members,
            +[](const S& s) { return std::vector<std::int64_t>{s.num_nodes}; },
            "(N) int64, the nodes of each super-node, ascending"),
        array_field(
            "features", &S::features,
            +[](const S& s) {
              return std::vector<std::int64_t>{s.num_super_nodes(), s.dim};
            },
            "(K, D) float32, mean feature of each super-node"),
        array_field(
            "edge_index", &S::edge_index,
            +[](const S& s) {
              return std::vector<std::int64_t>{2, s.num_coarse_edges()};
            },
            "(2, E_c) int64, coarse edges in both orientations"),
        array_field(
            "edge_weight", &S::edge_weight,
            +[](const S& s) { return std::vector<std::int64_t>{s.num_coarse_edges()}; },
            "(E_c) int64, input edges between the two super-nodes", true),
    };
  }
};

}  // namespace birkhoff
