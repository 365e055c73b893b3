#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/transport/geometry.hpp"

namespace birkhoff::transport {

/// The hard c-transform of a potential and the semi-dual objective built on it.
template <class T>
struct CTransform {
  std::vector<T> values;             ///< (n) c_i = min_j C_ij - g_j (cost units)
  std::vector<std::int64_t> argmin;  ///< (n) the smallest j attaining the minimum
  double value = 0;                  ///< semi-dual objective sum_i a_i c_i + sum_j b_j g_j
  std::vector<T> grad_x;             ///< (n, d) d value / d x_i = a_i dC/dx (x_i, y_j*(i))
  std::vector<T> grad_g;             ///< (m) d value / d g_j = b_j - sum_{i: j*(i) = j} a_i
};

/// Hard (epsilon = 0) c-transform c_i = min_j [C(x_i, y_j) - g_j] for any ground cost, streamed:
/// one pass of the row-minimum kernel over the pairs, O((n + m) d) memory. Also the semi-dual
/// objective of non-entropic OT, L(x, g) = <a, c> + <b, g> (a lower bound of the OT cost, tight at
/// the optimal g), with its Danskin gradients (valid where the argmin is unique).
/// @param g (m) potential on y, finite. a (n), b (m) weights, empty = uniform; a >= 0, b >= 0.
/// @throws InvalidInput naming `g`, `a` or `b` on a length mismatch or non-finite or negative
///         entry, `geometry` for an empty geometry or one with a label cost.
/// Source: [santambrogio2015] §1.6 (c-transforms, semi-dual); [flashsinkhorn2026] §8.
template <class T>
CTransform<T> c_transform(const PointCloud<T>& geometry, std::span<const T> g,
                          std::span<const T> a = {}, std::span<const T> b = {},
                          int num_threads = 0);

}  // namespace birkhoff::transport
