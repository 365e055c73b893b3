#include "graph/coarsen/queue.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "birkhoff/core/team.hpp"

namespace birkhoff::coarsen::detail {
namespace {

using Tuple = std::tuple<double, Id, Id>;

/// The queue against an ordered set of all entries: every pop_live must return the smallest
/// entry with both ends live, whatever the bound, the refills and the compactions did. Ids die
/// and never come back, as in the merge loop. Returns the first mismatch, or "".
std::string check_against_set(int threads, std::size_t near_min, std::size_t near_share,
                              const std::vector<std::tuple<int, int, int>>& ops) {
  constexpr Id kIds = 64;
  ThreadTeam team(threads);
  PairQueue queue(near_min, near_share);
  std::vector<std::uint8_t> alive(kIds, 1);
  std::set<Tuple> all;
  Id next = 0;  // entries are unique: (lo, hi) walks through all pairs of ids
  const auto push = [&](double key) {
    const Id lo = next % kIds, hi = (next / kIds) % kIds;
    ++next;
    if (all.count({key, lo, hi}) || next > kIds * kIds) return;
    all.insert({key, lo, hi});
    queue.push(HeapEntry{key, lo, hi});
  };
  for (const auto& [op, a, b] : ops) {
    if (op < 5) {
      // Few distinct keys, so that ties are broken by (lo, hi); negative and zero keys too.
      push(static_cast<double>(a % 7) - 2.0 + (b % 2 == 0 ? 0.0 : -0.0));
    } else if (op < 6) {
      alive[static_cast<Id>(a) % kIds] = 0;
    } else if (op < 7) {
      queue.compact(LiveIds{alive.data()}, team);
      for (auto it = all.begin(); it != all.end();) {
        it = alive[std::get<1>(*it)] && alive[std::get<2>(*it)] ? std::next(it) : all.erase(it);
      }
    } else {
      HeapEntry top{};
      const bool found = queue.pop_live(top, LiveIds{alive.data()}, team);
      bool expected = false;
      Tuple want{};
      while (!all.empty()) {
        want = *all.begin();
        all.erase(all.begin());
        if (alive[std::get<1>(want)] && alive[std::get<2>(want)]) {
          expected = true;
          break;
        }
      }
      if (found != expected) return "pop_live returned " + std::to_string(found);
      if (found && Tuple{top.key, top.lo, top.hi} != want) {
        return "popped (" + std::to_string(top.key) + ", " + std::to_string(top.lo) + ", " +
               std::to_string(top.hi) + "), expected (" + std::to_string(std::get<0>(want)) + ", " +
               std::to_string(std::get<1>(want)) + ", " + std::to_string(std::get<2>(want)) + ")";
      }
    }
  }
  return "";
}

RC_GTEST_PROP(PairQueue, PopsAsOneOrderedSetWould, ()) {
  const auto near_min = static_cast<std::size_t>(*rc::gen::inRange(1, 9));
  const auto near_share = static_cast<std::size_t>(*rc::gen::inRange(2, 9));
  const int threads = *rc::gen::inRange(1, 3);
  const auto ops = *rc::gen::container<std::vector<std::tuple<int, int, int>>>(
      rc::gen::tuple(rc::gen::inRange(0, 9), rc::gen::inRange(0, 1000), rc::gen::inRange(0, 1000)));
  RC_ASSERT(check_against_set(threads, near_min, near_share, ops) == "");
}

TEST(PairQueue, LongRunWithRefillsMatchesOrderedSet) {
  // Pushes, then pushes mixed with pops, then pops: the pool holds thousands of entries, is
  // refilled many times, and entries below the bound arrive between refills.
  std::vector<std::tuple<int, int, int>> ops;
  std::uint32_t state = 12345;
  const auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>(state >> 8);
  };
  for (int i = 0; i < 3000; ++i) ops.emplace_back(next() % 5, next() % 1000, next() % 1000);
  for (int i = 0; i < 3000; ++i) ops.emplace_back(next() % 9, next() % 1000, next() % 1000);
  for (int i = 0; i < 6000; ++i) ops.emplace_back(5 + next() % 4, next() % 1000, next() % 1000);
  for (int threads = 1; threads <= 2; ++threads) {
    EXPECT_EQ(check_against_set(threads, 4, 8, ops), "") << threads << " thread(s)";
  }
}

}  // namespace
}  // namespace birkhoff::coarsen::detail
