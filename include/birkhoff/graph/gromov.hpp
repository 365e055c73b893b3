#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::graph {

/// The inner cost of a graph in Gromov-Wasserstein.
enum class Structure {
  /// C = A, the (weighted) adjacency matrix, kept sparse: the products cost O(m nnz(A1) +
  /// n nnz(A2)) per outer iteration.
  Adjacency,
  /// C_ik = the length of a shortest path from i to k (edge weights as lengths, 1 when the
  /// graph has none), stored dense (n^2 entries); pairs in different components get the
  /// graph's largest finite distance plus one.
  ShortestPath,
};

/// Settings of graph_gromov_wasserstein().
struct GraphGromovOptions {
  /// Fused GW: the weight of the structure term, in [0, 1]; the objective is
  /// (1 - alpha) <T, M_features> + alpha GW(T) (POT's convention). Ignored without features.
  double alpha = 0.5;
  Structure structure = Structure::Adjacency;
  /// Outer iterations (each one Sinkhorn solve on the linearised cost) at the most.
  int max_iter = 100;
  /// The outer loop stops when the plan changes by less than this in relative L1 norm,
  /// sum |T_k+1 - T_k| / sum T_k.
  double tol = 1e-6;
  /// Each inner Sinkhorn solve stops at this relative marginal error.
  double marginal_tol = 1e-6;
  /// Iterations of each inner solve at the most.
  int inner_max_iter = 10000;
  /// OpenMP threads; 0 = default (the matrix-vector products use the system BLAS's own).
  int num_threads = 0;
  /// Called once per outer iteration with stage "gromov"; return false to cancel.
  ProgressCallback progress;
};

/// The outcome of graph_gromov_wasserstein().
struct GraphGromovResult {
  std::int64_t n = 0, m = 0;
  /// The objective at the final plan T, without the entropy: alpha GW(T) + (1 - alpha) F(T)
  /// for fused GW, GW(T) otherwise (POT's gw_dist / fgw_dist).
  double loss = 0;
  /// GW(T) = sum_ijkl (C1_ik - C2_jl)^2 T_ij T_kl with the marginal terms taken at a and b
  /// (POT's square-loss gwloss).
  double gw_loss = 0;
  /// F(T) = sum_ij T_ij |x1_i - x2_j|^2 (0 without features).
  double feature_loss = 0;
  double epsilon = 0;
  /// Outer iterations, and inner Sinkhorn iterations of all of them.
  int iterations = 0;
  int inner_iterations = 0;
  /// The outer tol was met and the last inner solve converged.
  bool converged = false;
  /// Relative marginal error of the final plan (its columns are exact).
  double marginal_error = 0;
  /// (n, m) the final plan, row-major.
  std::vector<double> plan;
  /// (n) the column of each row's largest plan entry (the hard matching of an alignment).
  std::vector<std::int64_t> matching;
};

/// The largest n m the dense plan of graph_gromov_wasserstein() may have (10^4 x 10^4: the
/// plan, the linearised cost and the kernel take 2.4 GB).
inline constexpr std::int64_t kMaxGraphPlanEntries = 100'000'000;

/// Entropic (fused) Gromov-Wasserstein between two undirected graphs [peyre2016]:
/// min_T GW(T) + epsilon KL(T | a b^T) over plans with marginals a, b, the inner costs C1, C2
/// given by `structure` and the square loss, by POT's projected gradient: T_{k+1} is the
/// entropic OT plan for the linearised cost 2 L(T_k), L = (C1^2 a) 1^T + 1 (C2^2 b)^T -
/// 2 C1 T_k C2. Fused GW [vayer2019] (both graphs with features) adds M_ij = |x1_i - x2_j|^2
/// with weight 1 - alpha. The plan is stored dense (n m <= kMaxGraphPlanEntries) and the inner
/// solve is log-stabilised Sinkhorn over it, warm-started from the previous potentials; with
/// the adjacency the products are sparse x dense.
///
/// @param g1, g2 undirected graphs; their features (float32) are used when both have them.
/// @param a (n), b (m) non-negative weights of equal total mass; empty means uniform.
/// @param epsilon > 0, in the units of the linearised cost (as POT's epsilon).
/// @param init (n, m) an initial plan (POT's G0) replacing a b^T; empty for none.
/// @throws InvalidInput naming `graph1`/`graph2` (directed, empty, or a plan above the
///         limit), `x1`/`x2`, `a`, `b`, `epsilon` (also when it is too small for the solve to
///         hold the marginals), `init`, `alpha`, `max_iter`, `tol`,
///         `marginal_tol`, `inner_max_iter` or `num_threads`; Cancelled when the progress
///         callback returns false.
GraphGromovResult graph_gromov_wasserstein(const AttributedGraph& g1, const AttributedGraph& g2,
                                           std::span<const double> a, std::span<const double> b,
                                           double epsilon, const GraphGromovOptions& options = {},
                                           MatrixView<const double> init = {});

/// Throws InvalidInput naming `graph2` when an n x m plan exceeds kMaxGraphPlanEntries (front
/// ends call it before building graphs of that size).
void check_plan_size(std::int64_t n, std::int64_t m);

/// The dense inner cost of `g` for `structure` (row-major, n^2 entries), for tests and
/// references.
std::vector<double> structure_matrix(const AttributedGraph& g, Structure structure,
                                     int num_threads = 0);

}  // namespace birkhoff::graph
