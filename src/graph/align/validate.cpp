// The check of QPAlign's options.
#include <cmath>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "graph/align/problem.hpp"

namespace birkhoff::align::detail {

void check_options(const QpAlignOptions& o) {
  auto finite_nonneg = [](double v, const char* name) {
    require(std::isfinite(v) && v >= 0.0, name, "must be finite and >= 0");
  };
  finite_nonneg(o.lambda_edge, "lambda_edge");
  finite_nonneg(o.lambda_feature, "lambda_feature");
  finite_nonneg(o.gamma, "gamma");
  finite_nonneg(o.sinkhorn_tol, "sinkhorn_tol");
  finite_nonneg(o.tol, "tol");
  require(std::isfinite(o.step) && o.step > 0.0, "step", "must be finite and > 0");
  require(o.max_iter >= 0, "max_iter", "must be >= 0");
  require(o.sinkhorn_sweeps >= 1, "sinkhorn_sweeps", "must be >= 1");
  require(o.top_k >= 0, "top_k", "must be >= 0");
  require(o.patience >= 0, "patience", "must be >= 0");
  require(o.sinkhorn_anderson >= 0, "sinkhorn_anderson", "must be >= 0");
  const bool mle = o.mle_rho >= 0.0 || o.mle_r >= 0.0;
  if (mle) {
    require(o.mle_rho >= 0.0 && o.mle_rho < 1.0, "mle_rho", "must be in [0, 1)");
    require(o.mle_r >= 0.0 && o.mle_r < 1.0, "mle_r", "must be in [0, 1)");
  }
}

}  // namespace birkhoff::align::detail
