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

}  // namespace birkhoff::align
