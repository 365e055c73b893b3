// PRIVATE (align): Sinkhorn balancing of a square block, optionally Anderson-accelerated, with
// the first sweep fused into the pass that writes the matrix (QPAlign's step + clamp).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "birkhoff/graph/align/balance.hpp"
#include "birkhoff/kernels/scaling.hpp"
#include "birkhoff/transport/anderson.hpp"

namespace birkhoff::align::detail {

/// Entries of a balanced matrix are at least this: no row or column locks at zero, no NaN
/// (docs/align.md, the balancing row of the deviations table).
inline constexpr double kFloor = 1e-100;

/// Sinkhorn-Knopp scaling of the m x m block at `block` (row stride `stride`) to doubly
/// stochastic, in place. `fill(i, row)` writes row i (m entries; entries below kFloor are
/// raised to kFloor afterwards, a NaN or inf stops the balancing); fill runs once per row, in
/// parallel, fused with the first sweep.
///
/// Column potentials g (v = e^g) are the iterate: one fused pass per sweep computes the row
/// sums s = M v, u = 1 / s (rows exact) and the column sums c = M^T u; the columns are then
/// within delta = max_j |v_j c_j - 1|. The balancing stops once delta <= tol / (1 + tol), or
/// after max_sweeps passes, and returns diag(u) M diag(1 / c): columns sum to 1 up to rounding
/// and rows within delta / (1 - delta) <= tol of 1. The next v is 1 / c (plain Sinkhorn) or,
/// with memory > 0, the Anderson extrapolation of g <- -log c.
///
/// Returns sweeps = -1 when fill reported a non-finite value (the block is then unspecified).
template <class Fill>
BalanceReport balance_block(double* block, std::int64_t m, std::int64_t stride,
                            std::int64_t max_sweeps, double tol, std::int64_t memory, int threads,
                            Fill fill) {
  std::vector<double> u(static_cast<std::size_t>(m)), v(u.size());
  // Column partial sums per thread, two sets used by alternate sweeps: a thread that starts
  // sweep s + 1 writes one set while the others may still be reading the sums of sweep s.
  std::vector<double> partial(2 * static_cast<std::size_t>(threads) * u.size());
  const double stop_at = tol / (1.0 + tol);
  BalanceReport report;
  bool finite = true;
#pragma omp parallel num_threads(threads)
  {
    const int id = omp_get_thread_num();
    const int team = omp_get_num_threads();
    // Every thread runs the column update itself, on the same data in the same order, so all
    // hold identical v (and Anderson windows) and a sweep needs one barrier only.
    std::vector<double> mine(static_cast<std::size_t>(m), 1.0), c(mine.size());
    std::vector<double> g(mine.size(), 0.0), t(mine.size());
    transport::Anderson anderson(m, memory);
    double previous = std::numeric_limits<double>::infinity();
    for (std::int64_t sweep = 0; sweep < max_sweeps; ++sweep) {
      double* const sums = partial.data() + (sweep % 2) * team * m;
      double* const acc = sums + static_cast<std::int64_t>(id) * m;
      std::fill(acc, acc + m, 0.0);
      bool ok = true;
      // Rows [lo, hi) of this thread, four at a time; odd sweeps run backwards, starting
      // with the rows that the previous sweep left in this core's cache.
      const std::int64_t lo = m * id / team, hi = m * (id + 1) / team;
      const std::int64_t groups = (hi - lo + 3) / 4;
      for (std::int64_t k = 0; k < groups; ++k) {
        const std::int64_t i0 = lo + 4 * (sweep % 2 == 0 ? k : groups - 1 - k);
        const std::int64_t rows = std::min<std::int64_t>(4, hi - i0);
        if (sweep == 0) {
          for (std::int64_t i = i0; i < i0 + rows; ++i) {
            double* row = block + i * stride;
            fill(i, row);
            ok = kernels::floor_row(row, m, kFloor) && ok;
          }
        }
        if (rows == 4) {
          kernels::scale_rows4(block + i0 * stride, stride, mine.data(), acc, m, u.data() + i0);
        } else {
          for (std::int64_t i = i0; i < i0 + rows; ++i) {
            u[i] = kernels::scale_row(block + i * stride, mine.data(), acc, m);
          }
        }
      }
      if (sweep == 0 && !ok) {
#pragma omp atomic write
        finite = false;
      }
#pragma omp barrier
      bool all_finite;
#pragma omp atomic read
      all_finite = finite;
      double worst = 0;
      for (std::int64_t j = 0; j < m; ++j) {
        double cj = 0;
        for (int q = 0; q < team; ++q) cj += sums[q * m + j];
        c[j] = cj;
        worst = std::max(worst, std::abs(mine[j] * cj - 1.0));
        if (memory > 0) t[j] = -std::log(cj);
      }
      if (id == 0) report.sweeps = sweep + 1;
      const bool stop = !all_finite || !(worst > stop_at) || sweep + 1 == max_sweeps;
      if (stop || memory == 0) {
        for (std::int64_t j = 0; j < m; ++j) mine[j] = 1.0 / c[j];
      } else {
        // Safeguard: an extrapolation that increased the error restarts the window, so a
        // hard matrix (no total support of the positive pattern) falls back to plain sweeps.
        if (worst > previous) anderson.reset();
        previous = worst;
        anderson.step(g, t);
        bool sane = true;
        for (std::int64_t j = 0; j < m; ++j) sane = sane && std::abs(g[j]) < 700.0;
        if (!sane) {
          anderson.reset();
          g = t;
        }
        for (std::int64_t j = 0; j < m; ++j) mine[j] = std::exp(g[j]);
      }
      if (stop) break;
    }
    if (id == 0) v = mine;
  }
  if (!finite) {
    report.sweeps = -1;
    return report;
  }
  double row_error = 0;
  bool sums_finite = true;
#pragma omp parallel for schedule(static) num_threads(threads) \
    reduction(max : row_error) reduction(&& : sums_finite)
  for (std::int64_t i = 0; i < m; ++i) {
    const double s = kernels::scale_columns(block + i * stride, u[i], v.data(), m);
    sums_finite = sums_finite && std::isfinite(s);
    row_error = std::max(row_error, std::abs(s - 1.0));
  }
  if (!sums_finite) row_error = std::numeric_limits<double>::quiet_NaN();
  report.row_error = row_error;
  return report;
}

}  // namespace birkhoff::align::detail
