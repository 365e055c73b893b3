// PRIVATE (align): the alignment problem in the solver's internal node order, and the checks of
// its inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "birkhoff/core/view.hpp"
#include "birkhoff/graph/align/qpalign_options.hpp"
#include "birkhoff/graph/graph.hpp"
#include "graph/align/operator.hpp"

namespace birkhoff::align::detail {

/// Throws InvalidInput naming the first option of `o` out of its range.
void check_options(const QpAlignOptions& o);

/// The problem in the solver's internal order: free real nodes first, then padding, then seeds
/// (G2's seeds in the same order as their G1 partners, so the seed block of Pi is the identity).
struct Problem {
  std::int64_t n1 = 0, n2 = 0, size = 0, free = 0;
  std::vector<std::int64_t> pos1, pos2;  // original -> internal
  std::vector<std::int64_t> orig2;       // internal -> original G2 node, -1 for padding
  std::optional<Operator> a, b;
  MatrixView<const float> x1, x2;  // the features in original order (borrowed), or empty
  std::vector<double> dist;        // N x N feature distances (empty without features)
  double lambda_edge = 0, lambda_feature = 0, gamma = 0;
  int threads = 1;
};

/// Checks the graphs and options and assembles the problem: node order, operators, feature
/// distances (padding at the mean distance of the real pairs) and the objective's weights.
Problem make_problem(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                     const QpAlignOptions& o);

/// The rows of the features in internal order (zero rows for padding), float64: (N, d).
std::vector<double> internal_features(MatrixView<const float> x,
                                      const std::vector<std::int64_t>& pos, std::int64_t size);

}  // namespace birkhoff::align::detail
