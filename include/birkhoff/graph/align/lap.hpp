#pragma once

#include <cstdint>
#include <vector>

#include "birkhoff/core/view.hpp"

namespace birkhoff::align {

/// Exact linear assignment [jonker1987] (shortest augmenting paths with dual potentials;
/// O(n^2 m) worst case) on a dense (n, m) float64 cost, n <= m: returns, for each row, its
/// column (n int64), minimising the total cost. `maximize` flips the sign.
/// @throws birkhoff::InvalidInput naming `cost` when n > m or it holds NaN/inf.
std::vector<std::int64_t> linear_assignment(MatrixView<const double> cost, bool maximize = false);

/// A sparse (n_rows, n_cols) weight matrix in CSR form: row i may take column cols[k] with
/// weight weights[k] for k in [indptr[i], indptr[i + 1]); columns of a row distinct.
struct SparseWeights {
  std::int64_t n_rows = 0, n_cols = 0;
  std::vector<std::int64_t> indptr;  ///< (n_rows + 1)
  std::vector<std::int32_t> cols;    ///< (nnz) in [0, n_cols)
  std::vector<double> weights;       ///< (nnz) finite
};

/// Maximum-weight assignment on a sparse candidate graph by the auction algorithm with
/// epsilon-scaling [bertsekas1988]: each row takes at most one of its candidate columns and each
/// column at most one row. The matching has maximum cardinality: the rows left out (-1) are
/// those a maximum-cardinality matching (Hopcroft-Karp) leaves out, and the rows it covers are
/// assigned with a total weight within n_rows * tolerance * (max - min weight) of the best
/// assignment of those rows (the optimum whenever every row can be covered). Time O(nnz) per
/// bidding round; epsilon-scaling (about log5(1 / tolerance) phases) when the covered rows take
/// every column, else one phase at the final epsilon; memory O(n_rows + n_cols).
/// @throws birkhoff::InvalidInput naming `weights` for a malformed CSR, a column out of range or
///         NaN/inf, `tolerance` outside (0, 1).
std::vector<std::int64_t> sparse_assignment(const SparseWeights& w, double tolerance = 1e-7);

}  // namespace birkhoff::align
