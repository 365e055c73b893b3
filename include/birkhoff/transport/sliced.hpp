#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/core/view.hpp"

namespace birkhoff::transport {

/// Settings of the sliced Wasserstein distance.
struct SlicedOptions {
  /// Number L of random directions (ignored when directions are given).
  int n_projections = 50;
  /// Seed of the random directions: the same seed gives the same directions on every machine.
  std::int64_t seed = 0;
  /// The exponent of the ground cost |s - t|^p on each line, p >= 1.
  double p = 2;
  /// Max-sliced: the largest projected cost instead of their mean [deshpande2019].
  bool max_sliced = false;
  /// OpenMP threads; 0 = default. Results do not depend on it.
  int num_threads = 0;
};

/// The sliced (or max-sliced) Wasserstein distance and its gradients.
template <class T>
struct SlicedResult {
  std::int64_t n = 0, m = 0, d = 0, n_projections = 0;
  /// SW_p = (mean_l W_p^p(theta_l # mu, theta_l # nu))^(1/p), or (max_l ...)^(1/p) when
  /// max-sliced: POT's sliced_wasserstein_distance / max_sliced_wasserstein_distance. The
  /// projected costs scale with the common mass of a and b (as Sinkhorn's loss does).
  double loss = 0;
  /// (L) W_p^p on each direction (POT's projected_emds).
  std::vector<double> projected;
  /// (d, L) the directions used, one per column (POT's layout): unit Gaussian directions
  /// drawn from the seed, or the given ones.
  std::vector<T> projections;
  /// (n, d), (m, d): gradients of `loss` in the points, exact wherever no two projected
  /// points tie; zero where the loss is zero. Empty unless asked for.
  std::vector<T> grad_x, grad_y;
  /// (n), (m): gradients of `loss` in the weights, from the 1-D dual potentials (defined up to
  /// a constant shared by both sides; chosen so that <a, f> = <b, g> on each direction).
  std::vector<T> grad_a, grad_b;
};

/// Sliced Wasserstein distance between the weighted clouds (x, a) and (y, b) [bonneel2015]:
/// each direction projects both clouds onto a line, where optimal transport is the monotone
/// coupling of the sorted points (exact, O((n + m) log(n + m)) per direction). Directions are
/// processed in parallel and in blocks, so memory is O((n + m) (d + block)), and the sums are
/// taken in a fixed order (the same bits for any thread count).
///
/// @param x (n, d), y (m, d) finite points, n, m >= 1, the same d >= 1.
/// @param a (n), b (m) non-negative finite weights of equal total mass (relative 1e-5); empty
///        means uniform (1/n, 1/m).
/// @param projections (d, L) directions, one per column (any finite vectors: they are used as
///        given, like POT's), or empty to draw options.n_projections unit directions.
/// @param gradients whether to fill grad_x, grad_y, grad_a, grad_b.
/// @throws InvalidInput naming `x`, `y`, `a`, `b`, `projections`, `n_projections`, `p` or
///         `num_threads`.
template <class T>
SlicedResult<T> sliced_wasserstein(MatrixView<const T> x, MatrixView<const T> y,
                                   std::span<const T> a, std::span<const T> b,
                                   const SlicedOptions& options = {},
                                   MatrixView<const T> projections = {}, bool gradients = false);

/// The L unit directions in R^d that sliced_wasserstein draws from `seed` ((d, L), one per
/// column): normalised standard Gaussian vectors from a counter-based generator, so they do
/// not depend on the platform's standard library.
template <class T>
std::vector<T> random_directions(std::int64_t d, std::int64_t count, std::int64_t seed);

}  // namespace birkhoff::transport
