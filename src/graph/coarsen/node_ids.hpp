// PRIVATE (coarsen): the merge loop's node ids and their liveness.
#pragma once

#include <cstdint>

namespace birkhoff::coarsen::detail {

/// A node id of the merge loop: originals are 0..N-1, merge k creates N + k (N < 2^31).
using Id = std::uint32_t;

/// Whether an id is live, from one state byte per id (0 = dead), as the merge loop keeps them.
struct LiveIds {
  const std::uint8_t* state;
  bool operator()(Id id) const { return state[id] != 0; }
};

}  // namespace birkhoff::coarsen::detail
