// PRIVATE (coarsen): the merge loop's queue of candidate pairs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "birkhoff/core/memory.hpp"
#include "birkhoff/core/team.hpp"
#include "graph/coarsen/node_ids.hpp"

namespace birkhoff::coarsen::detail {

/// A heap entry (key, lo, hi), ordered as the Python tuple (key, lo, hi). Entries are unique
/// (each pair is pushed once), so the pop order is fully determined by this order.
struct HeapEntry {
  double key;
  Id lo;
  Id hi;
};

/// "a comes after b" for std::push_heap / pop_heap, which then keep the smallest on top.
/// Comparing keys with > makes -0.0 and 0.0 equal, as in Python.
struct After {
  bool operator()(const HeapEntry& a, const HeapEntry& b) const {
    if (a.key != b.key) return a.key > b.key;
    if (a.lo != b.lo) return a.lo > b.lo;
    return a.hi > b.hi;
  }
};

/// A 4-ary min-heap of HeapEntry under the (key, lo, hi) order: the same pops as a binary heap
/// (entries are unique, so the minimum is unique), half the levels, and the four children of a
/// node share one cache line: the storage is line-aligned and the root sits at slot 3, so the
/// children of node i (slots 4i + 4 to 4i + 7) fill line i + 1.
class QuadHeap {
 public:
  QuadHeap() : v_(kPad) {}
  bool empty() const { return v_.size() == kPad; }
  std::size_t size() const { return v_.size() - kPad; }
  const HeapEntry& top() const { return v_[kPad]; }
  HeapEntry* data() { return v_.data() + kPad; }
  void reserve(std::size_t n) { v_.reserve(n + kPad); }
  void resize(std::size_t n) { v_.resize(n + kPad); }

  void push(const HeapEntry& e) {
    std::size_t i = size();
    v_.push_back(e);
    HeapEntry* h = data();
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!after_(h[parent], e)) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }

  HeapEntry pop() {
    const HeapEntry top = data()[0];
    const HeapEntry last = v_.back();
    v_.pop_back();
    if (!empty()) sift_down(0, last);
    return top;
  }

  /// Restores the heap order after the entries were edited in place, one level at a time from
  /// the bottom; the nodes of a level head disjoint subtrees, so for_range(first, last, f),
  /// which calls f(i) for each i in [first, last), may split a level over threads. The result
  /// equals the one-thread bottom-up pass.
  template <class ForRange>
  void rebuild(const ForRange& for_range) {
    const std::size_t n = size();
    HeapEntry* h = data();
    if (n < 2) return;
    const std::size_t parents = (n - 2) / 4 + 1;
    std::vector<std::size_t> level_start{0};
    while (level_start.back() < parents) level_start.push_back(4 * level_start.back() + 1);
    for (std::size_t l = level_start.size() - 1; l-- > 0;) {
      const auto first = static_cast<std::int64_t>(level_start[l]);
      const auto last = static_cast<std::int64_t>(std::min(level_start[l + 1], parents));
      for_range(first, last,
                [this, h](std::int64_t i) { sift_down(static_cast<std::size_t>(i), h[i]); });
    }
  }

 private:
  void sift_down(std::size_t i, const HeapEntry e) {
    const std::size_t n = size();
    HeapEntry* h = data();
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < end; ++c) {
        if (after_(h[best], h[c])) best = c;
      }
      if (!after_(e, h[best])) break;
      h[i] = h[best];
      i = best;
    }
    h[i] = e;
  }

  static constexpr std::size_t kPad = 3;
  static_assert(sizeof(HeapEntry) == 16);
  std::vector<HeapEntry, CacheLineAllocator<HeapEntry>> v_;
  After after_;
};

/// The merge loop's queue of candidate pairs. It pops entries in the (key, lo, hi) order, as
/// one heap holding all of them would, but keeps only the entries below a bound in a heap
/// (`near_`, a few percent of all, small enough for the core's cache) and the rest unsorted in
/// `pool_`: most keys are pushed once and never come near the top. When the heap runs dry, one
/// pass over the pool drops the dead entries and moves those below a new bound into the heap;
/// the bound is taken from a sample so that about a sixteenth of the pool moves. Each entry
/// of the pool is at least the bound and each entry of the heap below it, so the heap's top is
/// the top of all.
class PairQueue {
 public:
  /// A refill moves about 1/near_share of the pool to the heap, at least near_min entries.
  explicit PairQueue(std::size_t near_min = 16384, std::size_t near_share = 16)
      : near_min_(std::max<std::size_t>(near_min, 1)),
        near_share_(std::max<std::size_t>(near_share, 2)) {}

  /// Room for n entries in the pool, and the pool itself: the initial entries are written there.
  std::vector<HeapEntry>& pool(std::size_t n) {
    pool_.reserve(n);
    return pool_;
  }
  std::size_t size() const { return near_.size() + pool_.size(); }

  void push(const HeapEntry& e) {
    if (after_(bound_, e)) {
      near_.push(e);
    } else {
      pool_.push_back(e);
    }
  }

  /// The entry the next pop will see first, if the heap holds one (it may be stale, and a
  /// push may still come before it): for prefetching only.
  const HeapEntry* peek() const { return near_.empty() ? nullptr : &near_.top(); }

  /// Pops entries until one with both ends live (live(id) != 0); false when none is left.
  template <class Live>
  bool pop_live(HeapEntry& top, const Live& live, ThreadTeam& team) {
    for (;;) {
      while (!near_.empty()) {
        top = near_.pop();
        if (live(top.lo) && live(top.hi)) return true;
      }
      if (pool_.empty()) return false;
      refill(live, team);
    }
  }

  /// Drops the entries with a dead end from the pool and the heap.
  template <class Live>
  void compact(const Live& live, ThreadTeam& team) {
    pool_.resize(partition(pool_.data(), pool_.size(), live, nullptr, team));
    near_.resize(partition(near_.data(), near_.size(), live, nullptr, team));
    rebuild_near(team);
  }

 private:
  template <class Live>
  void refill(const Live& live, ThreadTeam& team) {
    const std::size_t size = pool_.size();
    const std::size_t want = std::max(near_min_, size / near_share_);
    if (size <= 2 * want) {
      bound_ = HeapEntry{std::numeric_limits<double>::infinity(), std::numeric_limits<Id>::max(),
                         std::numeric_limits<Id>::max()};
    } else {
      // Distinct, evenly spaced entries: deterministic, and the pool's order has nothing to do
      // with the keys. The rank is at least 1, so at least the sample's smallest moves: the
      // heap is never refilled empty.
      const std::size_t count = std::min(kSample, size);
      sample_.resize(count);
      for (std::size_t i = 0; i < count; ++i) sample_[i] = pool_[i * size / count];
      const std::size_t rank = std::clamp<std::size_t>(count * want / size, 1, count - 1);
      std::nth_element(sample_.begin(), sample_.begin() + static_cast<std::ptrdiff_t>(rank),
                       sample_.end(),
                       [this](const HeapEntry& a, const HeapEntry& b) { return after_(b, a); });
      bound_ = sample_[rank];
    }
    near_.resize(0);
    if (!reserved_) {
      // Room for twice the first refill's share (the largest: the pool shrinks), taken once:
      // buffers that double, each freed, raise glibc's mmap threshold and with it the peak
      // memory.
      reserved_ = true;
      near_.reserve(2 * want);
      below_.resize(static_cast<std::size_t>(team.size()));
      for (auto& b : below_) b.reserve(2 * want / below_.size());
    }
    pool_.resize(partition(pool_.data(), size, live, &below_, team));
    std::size_t count = 0;
    for (const auto& b : below_) count += b.size();
    near_.resize(count);
    HeapEntry* h = near_.data();
    for (const auto& b : below_) h = std::copy(b.begin(), b.end(), h);
    rebuild_near(team);
  }

  /// Packs the entries of [entries, entries + size) with both ends live to the front, keeping
  /// their order, and returns their count; with `below` given, the live entries under the bound
  /// go there instead (one vector per share). Each thread packs a contiguous share in place,
  /// then the shares are moved together.
  template <class Live>
  std::size_t partition(HeapEntry* entries, std::size_t size, const Live& live,
                        std::vector<std::vector<HeapEntry>>* below, ThreadTeam& team) {
    const bool parallel = size >= kParallelPass;
    const auto shares = static_cast<std::size_t>(parallel ? team.size() : 1);
    kept_.assign(shares, 0);
    if (below) {
      if (below->size() < shares) below->resize(shares);
      for (auto& b : *below) b.clear();
    }
    auto pack = [&](int, std::int64_t t) {
      const std::size_t lo = size * static_cast<std::size_t>(t) / shares;
      const std::size_t hi = size * static_cast<std::size_t>(t + 1) / shares;
      std::size_t w = lo;
      if (below) {
        std::vector<HeapEntry>& out = (*below)[static_cast<std::size_t>(t)];
        for (std::size_t r = lo; r < hi; ++r) {
          const HeapEntry e = entries[r];
          if (!(live(e.lo) && live(e.hi))) continue;
          if (after_(bound_, e)) {
            out.push_back(e);
          } else {
            entries[w++] = e;
          }
        }
      } else {
        for (std::size_t r = lo; r < hi; ++r) {
          const HeapEntry e = entries[r];
          entries[w] = e;
          w += (live(e.lo) && live(e.hi)) ? 1 : 0;
        }
      }
      kept_[static_cast<std::size_t>(t)] = w - lo;
    };
    team.for_each(static_cast<std::int64_t>(shares), 1, parallel, pack);
    std::size_t at = kept_[0];
    for (std::size_t t = 1; t < shares; ++t) {
      std::memmove(entries + at, entries + size * t / shares, kept_[t] * sizeof(HeapEntry));
      at += kept_[t];
    }
    return at;
  }

  void rebuild_near(ThreadTeam& team) {
    near_.rebuild([&team](std::int64_t first, std::int64_t last, const auto& f) {
      auto body = [&f, first](int, std::int64_t i) { f(first + i); };
      team.for_each(last - first, kLevelChunk, last - first >= kParallelLevel, body);
    });
  }

  static constexpr std::size_t kSample = 1024;
  // A pass over this many entries runs on all threads, and a heap level this wide is split
  // into chunks of kLevelChunk nodes.
  static constexpr std::size_t kParallelPass = std::size_t{1} << 16;
  static constexpr std::int64_t kParallelLevel = 4096;
  static constexpr std::int64_t kLevelChunk = 1024;
  std::size_t near_min_, near_share_;
  bool reserved_ = false;
  QuadHeap near_;
  std::vector<HeapEntry> pool_;
  // Everything is pushed to the pool until the first pop.
  HeapEntry bound_{-std::numeric_limits<double>::infinity(), 0, 0};
  std::vector<HeapEntry> sample_;
  std::vector<std::vector<HeapEntry>> below_;
  std::vector<std::size_t> kept_;
  After after_;
};

}  // namespace birkhoff::coarsen::detail
