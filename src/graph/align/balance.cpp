// QPAlign's Birkhoff projection, the public balance(): a transport::sinkhorn_knopp call.
#include "birkhoff/graph/align/balance.hpp"

#include "birkhoff/core/error.hpp"
#include "graph/align/operator.hpp"

namespace birkhoff::align {

BalanceReport balance(MatrixView<double> matrix, std::int64_t max_sweeps, double tol,
                      int num_threads, std::int64_t anderson) {
  const std::int64_t m = matrix.rows;
  require(matrix.cols == m, "matrix", "must be square");
  require(anderson >= 0, "anderson", "must be >= 0");
  transport::SinkhornKnoppOptions options;
  options.max_sweeps = max_sweeps;
  options.tol = tol;
  options.anderson_memory = anderson;
  options.num_threads = detail::threads_for(m, num_threads);
  const BalanceReport report = transport::sinkhorn_knopp({matrix, {}}, options);
  require(report.finite, "matrix", "holds NaN or inf");
  return report;
}

}  // namespace birkhoff::align
