// The check of node pairs (seeds, truth): a matching between the two graphs.
#include "graph/align/pairs.hpp"

#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::align::detail {

void check_pairs(MatrixView<const std::int64_t> pairs, const char* name, std::int64_t n1,
                 std::int64_t n2) {
  if (pairs.empty() && pairs.rows == 0) return;
  require(pairs.cols == 2, name,
          "expected shape (k, 2) [node of G1, node of G2], got (" + std::to_string(pairs.rows) +
              ", " + std::to_string(pairs.cols) + ")");
  // Each node at most once per side: a matching (the metrics and the seed blocks assume it).
  std::vector<std::int64_t> row_of1(static_cast<std::size_t>(n1), -1),
      row_of2(static_cast<std::size_t>(n2), -1);
  for (std::int64_t k = 0; k < pairs.rows; ++k) {
    const std::int64_t i = pairs(k, 0), j = pairs(k, 1);
    require(i >= 0 && i < n1, name,
            "G1 node " + std::to_string(i) + " in row " + std::to_string(k) + " is outside [0, " +
                std::to_string(n1) + ")");
    require(j >= 0 && j < n2, name,
            "G2 node " + std::to_string(j) + " in row " + std::to_string(k) + " is outside [0, " +
                std::to_string(n2) + ")");
    require(row_of1[i] < 0, name,
            "G1 node " + std::to_string(i) + " is repeated (rows " + std::to_string(row_of1[i]) +
                " and " + std::to_string(k) + ")");
    require(row_of2[j] < 0, name,
            "G2 node " + std::to_string(j) + " is repeated (rows " + std::to_string(row_of2[j]) +
                " and " + std::to_string(k) + ")");
    row_of1[i] = k;
    row_of2[j] = k;
  }
}

}  // namespace birkhoff::align::detail
