// Sinkhorn balancing of QPAlign (balance_block in balance_block.hpp, Anderson-accelerated by
// transport's Anderson): the public balance().
#include <algorithm>
#include <cmath>

#include "birkhoff/core/error.hpp"
#include "graph/align/balance_block.hpp"
#include "graph/align/operator.hpp"

namespace birkhoff::align {

BalanceReport balance(MatrixView<double> matrix, std::int64_t max_sweeps, double tol,
                      int num_threads, std::int64_t anderson) {
  const std::int64_t m = matrix.rows;
  require(matrix.cols == m, "matrix", "must be square");
  require(max_sweeps >= 1, "max_sweeps", "must be >= 1");
  require(anderson >= 0, "anderson", "must be >= 0");
  const int threads = detail::threads_for(m, num_threads);
  const BalanceReport report =
      detail::balance_block(matrix.data, m, matrix.stride, max_sweeps, tol, anderson, threads,
                            [](std::int64_t, double*) {});
  require(report.sweeps >= 0, "matrix", "holds NaN or inf");
  return report;
}

}  // namespace birkhoff::align
