// PRIVATE (align): the check of node pairs (seeds, truth).
#pragma once

#include <cstdint>

#include "birkhoff/core/view.hpp"

namespace birkhoff::align::detail {

/// Checks that `pairs` is empty or a (k, 2) list of [node of G1 in [0, n1), node of G2 in
/// [0, n2)] with no node repeated on either side (a matching); throws InvalidInput naming `name`.
void check_pairs(MatrixView<const std::int64_t> pairs, const char* name, std::int64_t n1,
                 std::int64_t n2);

}  // namespace birkhoff::align::detail
