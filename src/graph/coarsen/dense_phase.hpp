// PRIVATE (coarsen): the bitset adjacency of the merge loop's dense phase.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "graph/coarsen/node_ids.hpp"

namespace birkhoff::coarsen::detail {

/// Late in a run the coarse graph is dense (hundreds of neighbours per super-node) and list
/// scans dominate. Then every live node gets a slot, assigned in ascending id order, and a row
/// of bits over the slots holding its live neighbours; a new node takes the next slot, so slot
/// order stays id order, and |N(m) ∩ N(n)| is a popcount of two ANDed rows. When the slots run
/// out the rows are rebuilt for the live nodes: each build has room for L / 8 more merges (L
/// live nodes), after which L has shrunk by an eighth, so a rebuild costs about what those
/// merges spend in popcounts while the rows stay near L bits.
class BitsetRows {
 public:
  /// Words per row for `live` nodes: live + max(live / 8, 512) slots, in whole 512-bit blocks.
  static std::int64_t words_for(std::int64_t live) {
    const std::int64_t slots = live + std::max<std::int64_t>(live / 8, 512);
    return (slots + 511) / 512 * 8;
  }

  bool active() const { return active_; }
  /// Whether every slot is taken (the next merge needs a rebuild).
  bool full() const { return next_slot_ >= slot_cap_; }
  /// Words of a row's buffer (the size of a scratch row).
  std::int64_t row_words() const { return words_; }
  /// Words that hold the slots taken so far: the part of a row an operation must read.
  std::int64_t used_words() const { return (static_cast<std::int64_t>(next_slot_) + 63) / 64; }

  std::uint64_t* row(Id id) {
    return bits_.data() + static_cast<std::int64_t>(row_of_[id]) * words_;
  }

  /// Frees the rows (before a rebuild, so that old and new are not held at once).
  void release() { std::vector<std::uint64_t>().swap(bits_); }

  /// Gives the live ids (ascending) slots 0, 1, ... and rows of `words` words; id_space bounds
  /// every id. fill(id, set) must call set(q) for each live neighbour q of id.
  template <class Fill>
  void build(std::span<const Id> ids, std::int64_t words, std::int64_t id_space, const Fill& fill) {
    bits_.assign(static_cast<std::size_t>(static_cast<std::int64_t>(ids.size()) * words), 0);
    words_ = words;
    slot_cap_ = static_cast<std::uint32_t>(words * 64);
    if (!active_) {
      slot_.assign(static_cast<std::size_t>(id_space), 0);
      row_of_.assign(static_cast<std::size_t>(id_space), 0);
    }
    std::uint32_t s = 0;
    for (const Id id : ids) {
      slot_[id] = s;
      row_of_[id] = s;
      ++s;
    }
    for (const Id id : ids) {
      std::uint64_t* r = row(id);
      fill(id, [this, r](Id q) { r[slot_[q] / 64] |= std::uint64_t{1} << (slot_[q] % 64); });
    }
    next_slot_ = s;
    active_ = true;
  }

  /// After merging u and v into n, whose live neighbours are `neighbours` (u and v dead): n
  /// takes u's row and the next slot.
  void merge(Id u, Id v, Id n, std::span<const Id> neighbours) {
    const std::uint32_t su = slot_[u], sv = slot_[v], sn = next_slot_++;
    slot_[n] = sn;
    row_of_[n] = row_of_[u];
    std::uint64_t* rn = row(n);
    const std::uint64_t* rv = row(v);
    const std::int64_t words = used_words();
    for (std::int64_t w = 0; w < words; ++w) rn[w] |= rv[w];
    const auto clear = [](std::uint64_t* r, std::uint32_t b) {
      r[b / 64] &= ~(std::uint64_t{1} << (b % 64));
    };
    clear(rn, su);
    clear(rn, sv);
    for (const Id m : neighbours) {
      std::uint64_t* rm = row(m);
      clear(rm, su);
      clear(rm, sv);
      rm[sn / 64] |= std::uint64_t{1} << (sn % 64);
    }
  }

 private:
  bool active_ = false;
  std::int64_t words_ = 0;
  std::uint32_t next_slot_ = 0, slot_cap_ = 0;
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint32_t> slot_, row_of_;
};

}  // namespace birkhoff::coarsen::detail
