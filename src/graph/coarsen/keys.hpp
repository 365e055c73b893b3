// PRIVATE (coarsen): the merge keys of NOPE and NOPE* as small policy types. A policy names the
// adjacency entry the merge loop keeps for it and the arithmetic of its key; the loop
// (MergeLoop<Key>) gathers the inputs. Both round exactly as the authors' NumPy code does
// [bai2026nope] (this library is compiled with -ffp-contract=off).
#pragma once

#include <algorithm>
#include <cstdint>

#include "birkhoff/graph/coarsen/nope_options.hpp"
#include "graph/coarsen/adjacency.hpp"

namespace birkhoff::coarsen::detail {

/// NOPE*'s local-isotropy key
///   L*(p, q) = (w * max(d_p + d_q - |N(p) ∩ N(q)| - 2, 0)) * |x_p - x_q|^2,
/// w = s_p s_q / (s_p + s_q + 1e-8), all in float32: with the live degrees d (q counted in
/// N(p), p in N(q)) the middle factor is |N(p) ∪ N(q)| - 2.
struct NopeStarKey {
  using Entry = Id;  ///< the lists hold ids only
  static constexpr bool kInterference = false;

  explicit NopeStarKey(const NopeOptions&) {}

  static double key(float size_p, float size_q, std::int64_t deg_p, std::int64_t deg_q,
                    std::int64_t common, float distance) {
    const float w = (size_p * size_q) / ((size_p + size_q) + 1e-8f);
    const std::int64_t touched = std::max<std::int64_t>(deg_p + deg_q - common - 2, 0);
    return static_cast<double>((w * static_cast<float>(touched)) * distance);
  }
};

/// NOPE's neighbourhood-interference key
///   L(p, q) = w * ((sigma_p + sigma_q) + c),  c = sum_{k in N(p) ∩ N(q)} (<x_k,x_p> -
///   <x_k,x_q>)^2,
/// sigma_i = sum_{k in N(i)} <x_i, x_k>^2, the bracket in float32; w and the product in float64
/// (KeyPrecision::NumPy1) or float32 (NumPy2, where the 1e-8 vanishes).
struct NopeKey {
  using Entry = IdDot;  ///< the lists keep <x_i, x_j> with each neighbour
  static constexpr bool kInterference = true;

  explicit NopeKey(const NopeOptions& options) : precision(options.key_precision) {}

  double key(float size_p, float size_q, float sigma_p, float sigma_q, float common) const {
    const float bracket = (sigma_p + sigma_q) + common;
    if (precision == KeyPrecision::NumPy1) {
      const double w =
          static_cast<double>(size_p * size_q) / (static_cast<double>(size_p + size_q) + 1e-8);
      return w * static_cast<double>(bracket);
    }
    const float w = (size_p * size_q) / ((size_p + size_q) + 1e-8f);
    return static_cast<double>(w * bracket);
  }

  KeyPrecision precision;
};

}  // namespace birkhoff::coarsen::detail
