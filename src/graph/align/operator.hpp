// PRIVATE (align): an adjacency matrix in the solver's internal node order, stored as CSR (with
// its transpose when directed) or dense, and the two products QPAlign needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "birkhoff/graph/graph.hpp"

namespace birkhoff::align::detail {

/// Threads for an N x N pass: one below 256 x 256 (a parallel region per balancing sweep costs
/// more than the work there, badly so on a loaded machine), else `requested` resolved.
int threads_for(std::int64_t n, int requested);

class Operator {
 public:
  /// The N x N adjacency matrix of `g` with node v at internal index position[v] (rows and
  /// columns that no node maps to stay empty): CSR with rows sorted by internal column, or
  /// dense from density 1/16 on.
  Operator(const graph::AttributedGraph& g, std::int64_t size,
           const std::vector<std::int64_t>& position, int num_threads);

  /// out = alpha * op(M) P + beta * out, with op(M) = M or M^T; P, out are N x N row-major.
  void left(bool transpose, double alpha, const double* p, double beta, double* out) const;
  /// out = alpha * P op(M) + beta * out.
  void right(bool transpose, double alpha, const double* p, double beta, double* out) const;
  /// Row form of left() for a sparse matrix: out_row += alpha * (op(M) P)[i, :], or with
  /// `assign` out_row = alpha * (op(M) P)[i, :] (the same values as adding onto zeros).
  void left_row(bool transpose, double alpha, const double* p, std::int64_t i, double* out_row,
                bool assign = false) const;
  /// Row form of right() for a sparse matrix on `count` consecutive rows (row stride N):
  /// out_rows += alpha * p_rows op(M), by gathering along the columns of op(M) (no scattered
  /// writes; four rows, interleaved in a thread-local tile, share each index load).
  void right_rows(bool transpose, double alpha, const double* p_rows, std::int64_t count,
                  double* out_rows) const;
  /// Weighted out-degrees (row sums), N.
  std::vector<double> row_sums() const;
  bool dense() const { return dense_; }
  std::int64_t nnz() const { return nnz_; }

 private:
  struct Csr {
    std::vector<std::int64_t> indptr;
    std::vector<std::int32_t> indices;
    std::vector<double> values;
  };
  const Csr& csr(bool transpose) const { return transpose && directed_ ? csr_t_ : csr_; }

  std::int64_t n_ = 0;
  std::int64_t nnz_ = 0;
  bool dense_ = false;
  bool directed_ = false;
  int threads_ = 0;
  std::vector<double> matrix_;  // dense, N x N
  Csr csr_, csr_t_;
};

}  // namespace birkhoff::align::detail
