#pragma once

#include <cstdint>

namespace birkhoff::kernels {

// Row kernels of Sinkhorn-Knopp scaling of a dense float64 matrix M to diag(u) M diag(v)
// (source: [cuturi2013]; the alignment's Birkhoff projection, docs/align.md). Each works on
// one row of m entries (or four rows `stride` elements apart) and is vectorised; the values
// do not depend on the SIMD target except where a return value says otherwise.

/// s = <row, v> (16 partial sums, lane q taking the entries j = q mod 16, added in order),
/// then acc[j] += row[j] / s as (1 / s) * row[j]; returns 1 / s. Sizes m.
double scale_row(const double* row, const double* v, double* acc, std::int64_t m);

/// scale_row on the rows row0 + r * stride, r < 4, with the same values, acc receiving the four
/// rows' terms in the order r = 0..3; u[r] = 1 / s_r (u has size 4).
void scale_rows4(const double* row0, std::int64_t stride, const double* v, double* acc,
                 std::int64_t m, double* u);

/// row[j] = x[j] - alpha * grad[j] (a gradient step). Sizes m.
void step_row(const double* x, const double* grad, double alpha, double* row, std::int64_t m);

/// Raises the entries below `floor` (and -inf) to `floor`; returns false when the row held a
/// NaN or an infinity (NaN entries stay NaN).
bool floor_row(double* row, std::int64_t m, double floor);

/// row[j] *= u * v[j]; returns the sum of the new row (in a target-dependent order: to be
/// compared with a tolerance). Sizes m.
double scale_columns(double* row, double u, const double* v, std::int64_t m);

/// Scalar twins for tests: the same per-entry values, and the same sums except
/// scale_columns' (a sequential sum).
double scale_row_reference(const double* row, const double* v, double* acc, std::int64_t m);
void scale_rows4_reference(const double* row0, std::int64_t stride, const double* v, double* acc,
                           std::int64_t m, double* u);
void step_row_reference(const double* x, const double* grad, double alpha, double* row,
                        std::int64_t m);
bool floor_row_reference(double* row, std::int64_t m, double floor);
double scale_columns_reference(double* row, double u, const double* v, std::int64_t m);

}  // namespace birkhoff::kernels
