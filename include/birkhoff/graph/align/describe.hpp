#pragma once

#include <tuple>

#include "birkhoff/core/describe.hpp"
#include "birkhoff/graph/align/multilevel.hpp"
#include "birkhoff/graph/align/qpalign.hpp"

namespace birkhoff {

inline constexpr EnumName<align::Init> kInitNames[] = {{"similarity", align::Init::Similarity},
                                                       {"random", align::Init::Random},
                                                       {"barycenter", align::Init::Barycenter}};
inline constexpr EnumName<align::NegativeCurvature> kNegativeCurvatureNames[] = {
    {"maximum", align::NegativeCurvature::Maximum},
    {"previous", align::NegativeCurvature::Previous}};
inline constexpr EnumName<align::StopReason> kStopReasonNames[] = {
    {"max_iter", align::StopReason::MaxIter},
    {"tol", align::StopReason::Tolerance},
    {"patience", align::StopReason::Patience},
    {"seeded", align::StopReason::Seeded}};
inline constexpr EnumName<align::Preset> kPresetNames[] = {{"none", align::Preset::None},
                                                           {"gaussian", align::Preset::Gaussian},
                                                           {"douban", align::Preset::Douban},
                                                           {"acmdblp", align::Preset::AcmDblp}};
inline constexpr EnumName<align::Method> kAlignMethodNames[] = {
    {"auto", align::Method::Auto},
    {"dense", align::Method::Dense},
    {"multilevel", align::Method::Multilevel}};

/// The options of qpalign() as every front end shows them (the seeds and truth arrays and the
/// progress callback excepted).
template <>
struct Describe<align::QpAlignOptions> {
  using S = align::QpAlignOptions;
  static constexpr auto fields() {
    return std::tuple{
        field("lambda_edge", &S::lambda_edge, "weight of ||A Pi - Pi B||^2"),
        field("lambda_feature", &S::lambda_feature, "weight of sum D Pi^2"),
        field("gamma", &S::gamma, "weight of the concave penalty sum Pi - ||Pi||^2"),
        field("mle_rho", &S::mle_rho, "with mle_r: MLE-consistent weights (-1 = off)"),
        field("mle_r", &S::mle_r, "with mle_rho: MLE-consistent weights (-1 = off)"),
        field("max_iter", &S::max_iter, "maximum projected-gradient iterations T", "--iters"),
        field("sinkhorn_sweeps", &S::sinkhorn_sweeps, "maximum balancing sweeps K per projection",
              "--sweeps"),
        field("sinkhorn_tol", &S::sinkhorn_tol,
              "row and column sum error that stops a balancing (0 = always K sweeps)"),
        field("sinkhorn_anderson", &S::sinkhorn_anderson,
              "Anderson acceleration window of the balancing (0 = plain Sinkhorn-Knopp)",
              "--anderson"),
        field("step", &S::step, "first (and, without Barzilai-Borwein, every) step alpha0"),
        field("barzilai_borwein", &S::barzilai_borwein,
              "Barzilai-Borwein long steps, clipped to [1e-5, 0.5]", "--bb"),
        field("bb_negative_curvature", &S::bb_negative_curvature,
              "BB step when <S,Y> < 0: maximum (the reference's 0.5) or previous (keep the last)",
              kNegativeCurvatureNames),
        field("tol", &S::tol,
              "stopping rule 'tol': the objective's relative change falls below this"),
        field("patience", &S::patience,
              "stopping rule 'patience': the argmax bijection is unchanged this many iterations "
              "(0 = off)"),
        field("init", &S::init, "initial point: similarity, random (uses seed) or barycenter",
              kInitNames),
        field("seed", &S::seed, "random seed of init random"),
        field("top_k", &S::top_k, "candidates per node of G1 in topk"),
        field("return_soft", &S::return_soft, "also return the soft matrix (n1, n2)", "--soft"),
        field("num_threads", &S::num_threads, "OpenMP threads (0 = OpenMP's default)", "--threads"),
    };
  }
};

/// The options of the multilevel alignment (multilevel.hpp).
template <>
struct Describe<align::MultilevelOptions> {
  using S = align::MultilevelOptions;
  static constexpr auto fields() {
    return std::tuple{
        field("method", &S::method,
              "dense (QPAlign on the whole pair), multilevel (coarsen, align the coarse graphs, "
              "refine) or auto (multilevel above dense_max_nodes for attributed undirected pairs)",
              kAlignMethodNames),
        field("dense_max_nodes", &S::dense_max_nodes,
              "auto: the largest max(n1, n2) aligned densely"),
        field("coarse_nodes", &S::coarse_nodes, "multilevel: super-nodes of each coarse graph"),
        field("coarse_top_k", &S::coarse_top_k,
              "multilevel: coarse partners whose members are a node's candidates"),
        field("fine_candidates", &S::fine_candidates,
              "multilevel: candidates per node among those members (nearest features)"),
        field("propagated", &S::propagated,
              "multilevel: candidates per node and round from the neighbours' partners"),
        field("refine_rounds", &S::refine_rounds, "multilevel: maximum refinement rounds"),
    };
  }
};

/// Scores against a ground truth (align::score, and the metrics of a run with truth).
template <>
struct Describe<align::AlignMetrics> {
  using S = align::AlignMetrics;
  static constexpr auto fields() {
    return std::tuple{
        field("pairs", &S::pairs, "truth pairs t"),
        field("overlap", &S::overlap, "fraction of truth pairs matched"),
        field("overlap_unseeded", &S::overlap_unseeded, "the same over unseeded G1 nodes"),
        field("exact", &S::exact, "overlap == 1"),
        field("hits1", &S::hits1, "partner ranked first"),
        field("hits5", &S::hits5, "partner among the top 5"),
        field("hits10", &S::hits10, "partner among the top 10"),
        field("mrr", &S::mrr, "mean reciprocal rank of the partner"),
    };
  }
};

/// The result of qpalign(): its scalars (JSON, Python attributes) and arrays (files, Python
/// arrays). `converged` means a stopping rule fired (`stopped_by`: tol or patience) before
/// max_iter ran out; it says nothing about the matching's quality (the metrics do).
template <>
struct Describe<align::Alignment> {
  using S = align::Alignment;
  static constexpr auto fields() {
    return std::tuple{
        field("n1", &S::n1, "nodes of G1"),
        field("n2", &S::n2, "nodes of G2"),
        field("iterations", &S::iterations, "projected-gradient iterations run"),
        field("converged", &S::converged,
              "a stopping rule (tol or patience) fired before max_iter ran out"),
        field("stopped_by", &S::stopped_by, "max_iter, tol, patience or seeded", kStopReasonNames),
        field("nan_restarts", &S::nan_restarts, "steps retried with a halved step"),
        field("lambda_edge", &S::lambda_edge, "the edge weight used (after MLE weighting)"),
        field("lambda_feature", &S::lambda_feature, "the feature weight used"),
        field("likelihood", &S::likelihood,
              "profile log-likelihood of perm under the planted model (larger: more likely)"),
        field("preset", &S::preset, "the preset whose run was kept (none: a single run)",
              kPresetNames),
        field("method", &S::method,
              "dense or multilevel (then iterations .. preset describe the coarse QPAlign run)",
              kAlignMethodNames),
        field("coarse_nodes", &S::coarse_nodes, "multilevel: super-nodes per coarse graph"),
    };
  }
  static constexpr auto arrays() {
    return std::tuple{
        array_field(
            "perm", &S::perm, +[](const S& s) { return std::vector<std::int64_t>{s.n1}; },
            "(n1) int64: node i of G1 -> node perm[i] of G2 (-1: unmatched)"),
        array_field(
            "topk", &S::topk,
            +[](const S& s) {
              return std::vector<std::int64_t>{s.n1, s.top_k};
            },
            "(n1, k) int64: the k best candidates in G2, best first"),
        array_field(
            "topk_scores", &S::topk_scores,
            +[](const S& s) {
              return std::vector<std::int64_t>{s.n1, s.top_k};
            },
            "(n1, k) float64: their soft scores"),
        array_field(
            "objective", &S::objective,
            +[](const S& s) {
              return std::vector<std::int64_t>{static_cast<std::int64_t>(s.objective.size())};
            },
            "(iterations + 1) float64: the objective per iteration"),
        array_field(
            "refine_objective", &S::refine_objective,
            +[](const S& s) {
              return std::vector<std::int64_t>{
                  static_cast<std::int64_t>(s.refine_objective.size())};
            },
            "(rounds + 1) float64: multilevel: F of the fine matching before refinement and "
            "after each kept round"),
        array_field(
            "soft", &S::soft,
            +[](const S& s) {
              return std::vector<std::int64_t>{s.n1, s.n2};
            },
            "(n1, n2) float64: the doubly-stochastic matrix (return_soft)", true),
    };
  }
};

}  // namespace birkhoff
