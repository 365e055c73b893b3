// PRIVATE (coarsen): the feature rows of the merge loop's nodes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "birkhoff/core/memory.hpp"
#include "birkhoff/core/view.hpp"
#include "graph/coarsen/adjacency.hpp"

namespace birkhoff::coarsen::detail {

/// Asks for the cache lines of a feature row ahead of its use (rows are read in random order):
/// every line the row touches, also when the row does not start on a line.
inline void prefetch_row(const float* row, std::int64_t d) {
  const auto first = reinterpret_cast<std::uintptr_t>(row) & ~std::uintptr_t{63};
  const auto last = reinterpret_cast<std::uintptr_t>(row + d);
  for (std::uintptr_t p = first; p < last; p += 64) {
    __builtin_prefetch(reinterpret_cast<const void*>(p));
  }
}

/// Feature rows: the caller's matrix for original ids, a block pool with a free list for merged
/// ids. Live merged nodes hold at least two originals each, so at most N/2 pool rows are in use.
/// The blocks start on a cache line, so that a row of a multiple of 16 floats takes no more
/// lines than it must.
class FeaturePool {
 public:
  FeaturePool(MatrixView<const float> x, std::int64_t n)
      : x_(x), n_(n), d_(x.cols), slot_of_(static_cast<std::size_t>(n)) {}

  const float* row(Id id) const {
    if (id < n_) return x_.row(id);
    const std::uint32_t s = slot_of_[id - n_];
    return blocks_[s / kBlockRows].data() + static_cast<std::int64_t>(s % kBlockRows) * d_;
  }
  /// A row for the merged id (its values are the caller's to write).
  float* allocate(Id id) {
    std::uint32_t s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
    } else {
      s = next_++;
      if (s / kBlockRows >= blocks_.size()) {
        blocks_.emplace_back(static_cast<std::size_t>(kBlockRows * d_));
      }
    }
    slot_of_[id - n_] = s;
    return blocks_[s / kBlockRows].data() + static_cast<std::int64_t>(s % kBlockRows) * d_;
  }
  /// Asks for the record of where the row of id lies.
  void prefetch_slot(Id id) const {
    if (id >= n_) __builtin_prefetch(&slot_of_[id - n_]);
  }
  /// The row of a dead merged id goes back to the free list.
  void release(Id id) {
    if (id >= n_) free_.push_back(slot_of_[id - n_]);
  }

  /// Moves the rows of the live merged ids (ascending, each alive[id] != 0) to the lowest
  /// slots and frees the blocks above them, so the pool's memory follows the live count.
  void compact(std::span<const Id> live) {
    std::vector<Id> merged;
    for (const Id id : live) {
      if (id >= n_) merged.push_back(id);
    }
    std::sort(merged.begin(), merged.end(),
              [this](Id a, Id b) { return slot_of_[a - n_] < slot_of_[b - n_]; });
    std::uint32_t next = 0;
    for (const Id id : merged) {
      // Slots only move down and are taken in ascending order: no row is overwritten unread.
      const std::uint32_t from = slot_of_[id - n_];
      if (from != next) std::memcpy(slot(next), slot(from), static_cast<std::size_t>(d_) * 4);
      slot_of_[id - n_] = next++;
    }
    blocks_.resize((next + kBlockRows - 1) / kBlockRows);
    blocks_.shrink_to_fit();
    free_.clear();
    free_.shrink_to_fit();
    next_ = next;
  }

 private:
  float* slot(std::uint32_t s) {
    return blocks_[s / kBlockRows].data() + static_cast<std::int64_t>(s % kBlockRows) * d_;
  }

  static constexpr std::uint32_t kBlockRows = 1024;
  MatrixView<const float> x_;
  std::int64_t n_;
  std::int64_t d_;
  std::vector<std::vector<float, CacheLineAllocator<float>>> blocks_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> slot_of_;
  std::uint32_t next_ = 0;
};

}  // namespace birkhoff::coarsen::detail
