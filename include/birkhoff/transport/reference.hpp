#pragma once

#include <vector>

#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport::reference {

/// Dense float64 twin of sinkhorn() and sinkhorn_divergence(): forms the n x m cost matrix and
/// runs the same schedule with plain log-sum-exp loops. For tests on small problems only
/// (memory O(n m)). Returns standard potentials f, g (and the self potentials when debias).
struct DenseResult {
  std::vector<double> f, g, f_aa, g_bb;
  double epsilon = 0;
  double loss = 0;  ///< OT value, or the divergence when debias
};

DenseResult sinkhorn_dense(const OtProblem<double>& problem, const SinkhornOptions& options,
                           bool debias = false);

/// (n * m) row-major matrix C_ij = c(x_i, y_j) of any ground cost (dense formula).
std::vector<double> cost_matrix(MatrixView<const double> x, MatrixView<const double> y,
                                const Cost& cost);

/// The cost matrix of a prepared geometry, the label term included (dense formula).
std::vector<double> cost_matrix(const PointCloud<double>& geometry);

}  // namespace birkhoff::transport::reference
