// PRIVATE (coarsen): the merge loop's adjacency lists: their entries, the per-node record, and
// the sorted-list primitives the loop uses on them.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "birkhoff/kernels/reduce.hpp"
#include "graph/coarsen/node_ids.hpp"

namespace birkhoff::coarsen::detail {

/// NOPE's list entry: a neighbour and <x_i, x_j>, kept next to it because the feature of an id
/// never changes, so the value stays right while both ends live.
struct IdDot {
  Id id;
  float dot;
};
inline Id id_of(Id e) { return e; }
inline Id id_of(const IdDot& e) { return e.id; }

/// Floats from one entry's dot to the next one's.
constexpr std::int64_t kDotStride = sizeof(IdDot) / sizeof(float);

/// sum_t e[t].dot^2 over n entries in NumPy's pairwise float32 order (NOPE's interference).
inline float sum_dot_squares(const IdDot* e, std::int64_t n) {
  return n == 0 ? 0.0f : kernels::sum_squares_pairwise(&e->dot, n, kDotStride);
}

/// What a merge reads of each node it touches, in one 32-byte record within one cache line:
/// the adjacency list (ascending ids; it may hold dead ids until it is compacted), the live
/// degree (ids fit in 31 bits, so degrees do) and the size (the number of original nodes).
template <class Entry>
struct alignas(32) NodeRecord {
  std::vector<Entry> list;
  std::int32_t deg = 0;
  float size = 0.0f;
};
static_assert(sizeof(NodeRecord<Id>) == 32 && sizeof(NodeRecord<IdDot>) == 32);

/// Calls f(i, j) for every id common to the sorted lists a and b (no repeats inside a list),
/// in ascending id order: a linear merge, or binary searches of the shorter list's ids in the
/// longer one when that is cheaper.
template <class A, class B, class F>
void for_common(const A* a, std::size_t na, const B* b, std::size_t nb, const F& f) {
  if (na == 0 || nb == 0) return;
  const bool swap = na > nb;
  const std::size_t ns = swap ? nb : na;
  const std::size_t nl = swap ? na : nb;
  if (ns * static_cast<std::size_t>(std::bit_width(nl)) < ns + nl) {
    std::size_t lo = 0;
    for (std::size_t s = 0; s < ns; ++s) {
      const Id key = swap ? id_of(b[s]) : id_of(a[s]);
      std::size_t first = lo, count = nl - lo;
      while (count > 0) {
        const std::size_t step = count / 2;
        const Id probe = swap ? id_of(a[first + step]) : id_of(b[first + step]);
        if (probe < key) {
          first += step + 1;
          count -= step + 1;
        } else {
          count = step;
        }
      }
      lo = first;
      if (first < nl && (swap ? id_of(a[first]) : id_of(b[first])) == key) {
        if (swap) {
          f(first, s);
        } else {
          f(s, first);
        }
      }
    }
    return;
  }
  std::size_t i = 0, j = 0;
  while (i < na && j < nb) {
    const Id x = id_of(a[i]);
    const Id y = id_of(b[j]);
    if (x < y) {
      ++i;
    } else if (y < x) {
      ++j;
    } else {
      f(i, j);
      ++i;
      ++j;
    }
  }
}

/// Removes id from the sorted list (it must be there).
template <class Entry>
void erase_id(std::vector<Entry>& list, Id id) {
  const auto at = std::lower_bound(list.begin(), list.end(), id,
                                   [](const Entry& e, Id key) { return id_of(e) < key; });
  list.erase(at);
}

/// The position in the sorted list of its first entry above id.
template <class Entry>
std::uint32_t first_above(const std::vector<Entry>& list, Id id) {
  return static_cast<std::uint32_t>(
      std::upper_bound(list.begin(), list.end(), id,
                       [](Id key, const Entry& e) { return key < id_of(e); }) -
      list.begin());
}

}  // namespace birkhoff::coarsen::detail
