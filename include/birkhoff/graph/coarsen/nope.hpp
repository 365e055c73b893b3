#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::coarsen {

/// Which merge score the greedy loop uses (source: Bai, Lu et al., "Rethinking Efficient Graph
/// Coarsening via a Non-Selfishness Principle", ICML 2026, arXiv 2605.13021 [bai2026nope]).
enum class Variant {
  /// NOPE: L(p,q) = w(p,q) * (sigma_p + sigma_q + sum_{k in N(p) ∩ N(q)} (<x_k,x_p> -
  /// <x_k,x_q>)^2), sigma_i = sum_{k in N(i)} <x_i,x_k>^2 (the neighbourhood interference).
  Nope,
  /// NOPE*: L*(p,q) = w(p,q) * max(|N(p) ∪ N(q)| - 2, 0) * |x_p - x_q|^2 (local isotropy).
  NopeStar,
};

/// Arithmetic of NOPE's key (NOPE* keys are float32 under both).
enum class KeyPrecision {
  /// The authors' code under NumPy 1.x (the golden files): the size factor
  /// w = s_p s_q / (s_p + s_q + 1e-8) and the key are float64, the bracket float32.
  NumPy1,
  /// The same code under NumPy 2 (NEP 50): everything float32, the 1e-8 vanishes.
  NumPy2,
};

/// Settings of nope(). w(p, q) = s_p s_q / (s_p + s_q + 1e-8) with s the super-node sizes.
struct NopeOptions {
  Variant variant = Variant::Nope;
  /// Fraction of nodes KEPT, in (0, 1]: the loop stops at n_coarse = max(1, round(N * ratio))
  /// live super-nodes, round = half to even (Python's round, as the authors' code).
  double ratio = 0.5;
  /// When set, the number of super-nodes to keep, in [1, N]; overrides `ratio`.
  std::optional<std::int64_t> n_coarse;
  KeyPrecision key_precision = KeyPrecision::NumPy1;
  /// NOPE: clamp the updated interference sigma_m at 0 (the authors' code means to but does
  /// not; off reproduces it).
  bool clamp_interference = false;
  /// Also return edge weights (number of original edges between two super-nodes).
  bool edge_weights = true;
  /// OpenMP threads for the initial scoring and the output (0 = default). The result does not
  /// depend on it.
  int num_threads = 0;
  /// Memory cap in bytes for the bitset adjacency of the late, dense part of the run (common
  /// neighbours by AND + popcount of two rows instead of a list scan). -1 = automatic: an
  /// eighth of the input arrays, at least 4 MiB and at most 64 MiB; 0 = never. The result does
  /// not depend on it (same merges, keys and coarse graph, bit for bit).
  std::int64_t bitset_bytes = -1;
  /// Called every few thousand merges with stage "coarsen" (done = merges so far, total = merges
  /// needed); return false to cancel (nope() then throws birkhoff::Cancelled).
  ProgressCallback progress;
};

/// The output of nope(): the merge tree and the coarse graph at the requested ratio.
///
/// Node ids: originals are 0..N-1; merge k creates id N + k. Super-nodes (roots) are listed in
/// ascending id order, and "super-node index" means the position in `roots`.
struct Coarsening {
  std::int64_t num_nodes = 0;  ///< N
  std::int64_t dim = 0;        ///< D
  std::int64_t target = 0;     ///< n_coarse that was asked for
  /// (k, 3) int64 row-major: row k = [N + k, u, v], u < v, in merge (creation) order. Same
  /// layout as the authors' merge tree and the golden files.
  std::vector<std::int64_t> merges;
  /// (k) the key of the heap entry popped for each merge (float64; NOPE* keys are float32
  /// values widened exactly).
  std::vector<double> keys;
  std::vector<std::int64_t> roots;       ///< (K) live ids at the end, ascending
  std::vector<std::int64_t> assignment;  ///< (N) super-node index of each original node
  std::vector<std::int64_t> sizes;       ///< (K) number of original nodes per super-node
  /// (K + 1) offsets and (N) original ids: the members of super-node c are
  /// members[members_indptr[c] .. members_indptr[c + 1]), ascending.
  std::vector<std::int64_t> members_indptr, members;
  /// (K, D) row-major float32: mean of the original feature rows of each super-node.
  std::vector<float> features;
  /// (2, E_c) int64 row-major: coarse edges, both orientations, sorted by (row 0, row 1), no
  /// self-loops, no repeats (the simple graph of the authors' post-processing).
  std::vector<std::int64_t> edge_index;
  /// (E_c) number of original edges between the two super-nodes of each coarse edge (empty
  /// when options.edge_weights is false).
  std::vector<std::int64_t> edge_weight;
  /// False when the graph ran out of edges before reaching `target` (one super-node per
  /// connected component is the best possible); K > target then.
  bool reached_target = true;
  std::int64_t self_loops_dropped = 0;  ///< from the input graph
  std::int64_t duplicates_merged = 0;   ///< from the input graph
  std::int64_t heap_pushes = 0;         ///< E + sum of the new nodes' degrees (as the reference)

  std::int64_t num_merges() const { return static_cast<std::int64_t>(keys.size()); }
  std::int64_t num_super_nodes() const { return static_cast<std::int64_t>(roots.size()); }
  std::int64_t num_coarse_edges() const { return static_cast<std::int64_t>(edge_index.size()) / 2; }
};

/// Greedy attributed-graph coarsening with NOPE or NOPE* [bai2026nope] (the authors' loop,
/// model/merge.py and model/merge_relax.py): repeatedly pop the lowest (key, lo, hi) edge whose
/// ends are both alive, merge it into a new super-node (size-weighted mean feature, union of
/// neighbourhoods) and score the new node's edges. Keys of older pairs are never re-scored
/// (the reference's lazy heap), so the merge order equals the authors' code.
///
/// @param graph undirected graph with (N, D) float32 features (see graph::from_edge_index).
/// @param options variant, ratio (fraction of nodes kept) or n_coarse, and knobs.
/// @return merges, keys, super-nodes, assignment, sizes, mean features, coarse edges.
/// @throws birkhoff::InvalidInput naming `ratio` outside (0, 1] or NaN, `n_coarse` outside
///         [1, N]; birkhoff::Cancelled when the progress callback returns false.
/// Memory O(N D + E) (the caller's features are read in place; merged features use at most
/// N/2 extra rows; adjacency lists and the heap are compacted lazily) plus the bitset of the
/// dense phase (at most `bitset_bytes`). Time O(E (D + t)) for the start plus, per merge,
/// O((d_u + d_v) + d_n D + sum over m in N(n) of c(m) + d_n log E), t the per-edge
/// intersection cost and c(m) = min(d_m, d_n log d_m) with lists, or L / 64 words (L live
/// super-nodes) plus, for NOPE, |N(m) ∩ N(n)| log d_m once the bitset rows are in use.
Coarsening nope(const graph::AttributedGraph& graph, const NopeOptions& options = {});

/// The coarse graph of a prefix of `run`'s merges: the result for a larger kept fraction
/// `ratio` (fewer merges), computed from the run without re-running it (the loop's stop test
/// is its only use of the target, so a shorter run is a prefix of a longer one).
/// @param graph the graph `run` was computed on.
/// @throws birkhoff::InvalidInput naming `ratio` outside (0, 1], or when it asks for more
///         merges than `run` holds while `run` reached its own target.
Coarsening cut(const Coarsening& run, const graph::AttributedGraph& graph, double ratio,
               bool edge_weights = true, int num_threads = 0);

/// Same as cut() with a super-node count in [1, N].
Coarsening cut_to(const Coarsening& run, const graph::AttributedGraph& graph, std::int64_t n_coarse,
                  bool edge_weights = true, int num_threads = 0);

/// n_coarse for a kept fraction: max(1, round_half_even(N * ratio)); 0 when N = 0.
/// @throws birkhoff::InvalidInput naming `ratio` outside (0, 1] or NaN.
std::int64_t target_for_ratio(std::int64_t num_nodes, double ratio);

/// Lifting: out[i, :] = coarse[assignment[i], :], i.e. out = P coarse with P the (N, K) 0/1
/// assignment matrix. coarse (K, C), out (N, C), any row strides.
/// @throws birkhoff::InvalidInput naming `coarse` or `out` on a shape mismatch.
void lift(const Coarsening& c, MatrixView<const float> coarse, MatrixView<float> out);

/// Pooling: out[c, :] = sum (or mean when `mean`) of values[i, :] over the members of
/// super-node c, i.e. out = P^T values (divided by sizes). values (N, C), out (K, C).
/// @throws birkhoff::InvalidInput naming `values` or `out` on a shape mismatch.
void pool(const Coarsening& c, MatrixView<const float> values, MatrixView<float> out,
          bool mean = true);

}  // namespace birkhoff::coarsen
