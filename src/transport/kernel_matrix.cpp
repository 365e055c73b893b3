// Sinkhorn-Knopp scaling of a dense kernel matrix (the dense-matrix geometry), optionally
// Anderson-accelerated, with the first sweep fused into the pass that writes the kernel.
#include "birkhoff/transport/kernel_matrix.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "birkhoff/kernels/scaling.hpp"
#include "birkhoff/transport/anderson.hpp"

namespace birkhoff::transport {
namespace {

void validate(const KernelMatrix& geometry, const SinkhornKnoppOptions& o) {
  const MatrixView<double>& k = geometry.kernel;
  require(k.rows >= 0 && k.cols == k.rows, "kernel",
          "must be square, got " + std::to_string(k.rows) + " x " + std::to_string(k.cols));
  require(k.stride >= k.cols, "kernel", "row stride must be >= its number of columns");
  require(k.rows == 0 || k.data != nullptr, "kernel", "has no data");
  require(o.max_sweeps >= 1, "max_sweeps", "must be >= 1");
  require(o.tol >= 0, "tol", "must be >= 0");
  require(o.anderson_memory >= 0, "anderson_memory", "must be >= 0");
  require(o.num_threads >= 0, "num_threads", "must be >= 0");
  require(std::isfinite(o.floor) && o.floor >= 0, "floor", "must be finite and >= 0");
}

}  // namespace

SinkhornKnoppReport sinkhorn_knopp(const KernelMatrix& geometry,
                                   const SinkhornKnoppOptions& options) {
  validate(geometry, options);
  double* const block = geometry.kernel.data;
  const std::int64_t m = geometry.kernel.rows, stride = geometry.kernel.stride;
  const std::int64_t max_sweeps = options.max_sweeps, memory = options.anderson_memory;
  const double floor = options.floor;
  const KernelRowFill& fill = geometry.fill;
  const int threads = resolve_threads(options.num_threads);
  std::vector<double> u(static_cast<std::size_t>(m)), v(u.size());
  // Column partial sums per thread, two sets used by alternate sweeps: a thread that starts
  // sweep s + 1 writes one set while the others may still be reading the sums of sweep s.
  std::vector<double> partial(2 * static_cast<std::size_t>(threads) * u.size());
  const double stop_at = options.tol / (1.0 + options.tol);
  SinkhornKnoppReport report;
  bool finite = true;
#pragma omp parallel num_threads(threads)
  {
    const int id = omp_get_thread_num();
    const int team = omp_get_num_threads();
    // Every thread runs the column update itself, on the same data in the same order, so all
    // hold identical v (and Anderson windows) and a sweep needs one barrier only.
    std::vector<double> mine(static_cast<std::size_t>(m), 1.0), c(mine.size());
    std::vector<double> g(mine.size(), 0.0), t(mine.size());
    Anderson anderson(m, memory);
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
            if (fill) fill(i, row);
            ok = kernels::floor_row(row, m, floor) && ok;
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
    report.finite = false;
    report.row_error = std::numeric_limits<double>::quiet_NaN();
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
  report.finite = sums_finite;
  report.row_error = sums_finite ? row_error : std::numeric_limits<double>::quiet_NaN();
  return report;
}

}  // namespace birkhoff::transport
