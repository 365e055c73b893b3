#pragma once

#include <cstdint>
#include <functional>

#include "birkhoff/core/view.hpp"

namespace birkhoff::transport {

/// Writes row i (m float64 entries) of a kernel matrix into `row`. Called once per row, from
/// several threads at once (rows are disjoint), during the first sweep of sinkhorn_knopp(); it
/// must not throw.
using KernelRowFill = std::function<void(std::int64_t i, double* row)>;

/// Dense-matrix geometry: a square kernel K, K_ij = exp(-C_ij / epsilon) > 0 for a cost C that
/// only the caller knows, stored by the caller and scaled in place. The point-cloud geometry
/// (PointCloud) streams its kernel instead; this one is for costs that are not distances
/// between points, such as the alignment's projection onto the Birkhoff polytope.
struct KernelMatrix {
  /// (m, m) row-major float64, any row stride >= m. Entries below the floor (and -inf) are
  /// raised to the floor before the first sweep.
  MatrixView<double> kernel;
  /// Optional: writes each row of `kernel` inside the first sweep, fused with it (one pass over
  /// memory instead of two). Empty: the kernel holds its values on entry.
  KernelRowFill fill;
};

/// Settings of sinkhorn_knopp().
struct SinkhornKnoppOptions {
  /// Maximum number of sweeps (>= 1); each sweep scales the rows and measures the columns.
  std::int64_t max_sweeps = 1000;
  /// Stop once every column sum is within tol / (1 + tol) of 1 (>= 0; 0 = run max_sweeps).
  double tol = 1e-9;
  /// Anderson acceleration of the log column scalings: the window of past sweeps (>= 0;
  /// 0 = plain Sinkhorn-Knopp). See Anderson.
  std::int64_t anderson_memory = 0;
  /// OpenMP threads (>= 0; 0 = default). The result depends on the thread count (the column
  /// sums add one partial sum per thread), never on the scheduling.
  int num_threads = 0;
  /// Entries are at least this (finite, >= 0), so that no row or column locks at zero.
  double floor = 1e-100;
};

/// Report of sinkhorn_knopp().
struct SinkhornKnoppReport {
  /// Sweeps run (1 when a kernel entry was NaN or inf).
  std::int64_t sweeps = 0;
  /// max_i |sum_j P_ij - 1| of the result P (its columns sum to 1 up to rounding); NaN when
  /// not finite.
  double row_error = 0;
  /// False when an entry of the kernel (given, or written by fill) was NaN or +-inf, or a row
  /// sum of the result overflowed: the matrix is then unspecified. Not an exception, so that a
  /// caller that generates the kernel (QPAlign's gradient step) can retry with other values.
  bool finite = true;
};

/// Sinkhorn-Knopp matrix scaling [sinkhorn1967] of the kernel of `geometry`, in place, to the
/// doubly-stochastic P = diag(u) K diag(v): entropic OT with uniform marginals a = b = 1 (the KL
/// projection onto the Birkhoff polytope [cuturi2013]).
///
/// The column scalings v = e^g are the iterate: one fused pass per sweep computes the row sums
/// s = K v, u = 1 / s (rows exact) and the column sums c = K^T u; the columns are then within
/// delta = max_j |v_j c_j - 1|. The scaling stops once delta <= tol / (1 + tol), or after
/// max_sweeps sweeps, and writes P = diag(u) K diag(1 / c): columns sum to 1 up to rounding, and
/// rows within delta / (1 - delta) <= tol of 1 when it stopped on tol. The next v is 1 / c
/// (plain) or, with anderson_memory > 0, the Anderson extrapolation [walker2011anderson] of
/// g <- -log c, restarted whenever it increases delta (so a matrix without total support falls
/// back to plain sweeps). Odd sweeps visit the rows backwards (cache reuse).
///
/// Memory O(m (threads + anderson_memory)) beside the caller's kernel; a sweep costs O(m^2).
/// @throws birkhoff::InvalidInput naming `kernel` (not square, row stride below its columns,
///         null data), `max_sweeps` (< 1), `tol` (negative or NaN), `anderson_memory` (< 0),
///         `num_threads` (< 0) or `floor` (negative or not finite). A NaN or inf entry is
///         reported (SinkhornKnoppReport::finite), not thrown.
SinkhornKnoppReport sinkhorn_knopp(const KernelMatrix& geometry,
                                   const SinkhornKnoppOptions& options = {});

}  // namespace birkhoff::transport
