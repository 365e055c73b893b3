#pragma once

#include <cstdint>

#include "birkhoff/core/view.hpp"
#include "birkhoff/transport/kernel_matrix.hpp"

namespace birkhoff::align {

/// Report of balance(): sweeps, row_error (max_i |sum_j M_ij - 1| of the result, whose
/// columns sum to 1) and finite.
using BalanceReport = transport::SinkhornKnoppReport;

/// Sinkhorn-Knopp scaling [sinkhorn1967] of a non-negative square matrix to doubly stochastic
/// (the KL projection onto the Birkhoff polytope; the reference's Balance_K [R]), in place:
/// transport::sinkhorn_knopp on the matrix as a dense kernel, with QPAlign's thread rule (one
/// thread below 256 rows). Entries below 1e-100 (and negatives) are raised to 1e-100. Each
/// sweep scales the rows to sum to 1 and measures the column error delta = max_j |column sum -
/// 1|; the balancing stops once delta <= tol / (1 + tol) or after `max_sweeps` sweeps, then
/// scales the columns: they sum to 1 up to rounding and, when it stopped on tol, every row
/// within tol of 1. `anderson` > 0 extrapolates the column potentials from that many past
/// sweeps (Anderson acceleration [walker2011anderson]; 0 = plain Sinkhorn-Knopp, the reference).
/// @throws birkhoff::InvalidInput naming `matrix` when it is not square or holds NaN/inf,
///         `max_sweeps` when < 1, `tol` when negative, `anderson` when < 0.
BalanceReport balance(MatrixView<double> matrix, std::int64_t max_sweeps, double tol,
                      int num_threads = 0, std::int64_t anderson = 0);

}  // namespace birkhoff::align
