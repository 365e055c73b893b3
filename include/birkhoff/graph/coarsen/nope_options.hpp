#pragma once

#include <cstdint>
#include <optional>

#include "birkhoff/core/progress.hpp"

namespace birkhoff::coarsen {

/// Which merge key the greedy loop uses [bai2026nope].
enum class Method {
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
  Method method = Method::Nope;
  /// Fraction of nodes KEPT, in (0, 1]: the loop stops at n_coarse = max(1, round(N * ratio))
  /// live super-nodes, round = half to even (Python's round, as the authors' code).
  double ratio = 0.5;
  /// When set, the number of super-nodes to keep, in [1, N]; overrides `ratio`.
  std::optional<std::int64_t> n_coarse;
  KeyPrecision key_precision = KeyPrecision::NumPy1;
  /// NOPE: clamp the updated interference sigma_m at 0 (the authors' code means to but does
  /// not; off reproduces it).
  bool clamp_interference = false;
  /// OpenMP threads for the initial scoring and the merges' pairs (0 = default). The result
  /// does not depend on it.
  int num_threads = 0;
  /// Memory cap in bytes for the bitset adjacency of the late, dense part of the run (common
  /// neighbours by AND + popcount of two rows instead of a list scan). -1 = automatic: an
  /// eighth of the input arrays, at least 4 MiB and at most 64 MiB; 0 = never. The result does
  /// not depend on it (same merges and keys, bit for bit).
  std::int64_t bitset_bytes = -1;
  /// Called every few thousand merges with stage "coarsen" (done = merges so far, total = merges
  /// needed); return false to cancel (nope() then throws birkhoff::Cancelled).
  ProgressCallback progress;
};

}  // namespace birkhoff::coarsen
