// PRIVATE (align): the pieces of QPAlign's driver around the iteration: the initial point and
// the read-outs of the final Pi (rounding, top-k, the soft matrix). Pi is N x N row-major in
// the internal order of the problem (problem.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/align/problem.hpp"

namespace birkhoff::align::detail {

/// Pi0: the free block from options.init (docs/align.md, "What is computed"), balanced to doubly
/// stochastic; the identity on the seed block; zero elsewhere.
std::vector<double> initial_point(const Problem& p, const QpAlignOptions& o);

/// The exact linear assignment maximising the total Pi over the free block, as (n1) original
/// G2 ids per G1 node (-1 for a partner that is padding); seeds keep their partners.
std::vector<std::int64_t> round_to_perm(const Problem& p, const std::vector<double>& pi);

/// The k real G2 nodes with the largest Pi in each G1 node's row, best first (ties by internal
/// column), and their values: ids and scores (n1, k) row-major.
void top_k(const Problem& p, const std::vector<double>& pi, std::int64_t k,
           std::vector<std::int64_t>& ids, std::vector<double>& scores);

/// Pi restricted to the real nodes in original order: (n1, n2) row-major.
std::vector<double> soft_matrix(const Problem& p, const std::vector<double>& pi);

}  // namespace birkhoff::align::detail
