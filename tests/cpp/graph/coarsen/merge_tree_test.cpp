#include "birkhoff/graph/coarsen/merge_tree.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/coarsen/nope.hpp"
#include "graph/coarsen/fixtures.hpp"

namespace birkhoff::coarsen {
namespace {

using testing::opts;
using testing::Toy;
using testing::toy;

TEST(MergeTree, TargetRoundsHalfToEvenLikePython) {
  EXPECT_EQ(target_for_ratio(3325, 0.5), 1662);
  EXPECT_EQ(target_for_ratio(3327, 0.5), 1664);
  EXPECT_EQ(target_for_ratio(19717, 0.5), 9858);
  EXPECT_EQ(target_for_ratio(10, 0.01), 1);
  EXPECT_EQ(target_for_ratio(7, 1.0), 7);
}

TEST(MergeTree, PrefixRejectsAskingForMoreMergesThanTheRunHolds) {
  const Toy t = toy();
  const auto r = nope(t.g, opts(Method::Nope, 0.5));
  EXPECT_THROW(prefix(r, target_for_ratio(4, 0.25)), InvalidInput);
  EXPECT_EQ(prefix(r, target_for_ratio(4, 0.75)).num_merges(), 1);
}

TEST(MergeTree, PrefixOfATreeThatRanOutOfEdgesKeepsAllItsMerges) {
  // Two disjoint edges: two merges at most, whatever the target.
  const std::vector<float> x = {0, 1, 2, 3};
  const std::vector<std::int64_t> e = {0, 2, 1, 3};
  const auto g = graph::from_edge_index({e.data(), 2, 2}, {x.data(), 4, 1});
  const auto r = nope(g, opts(Method::NopeStar, 0.25));
  ASSERT_FALSE(r.reached_target);
  const auto p = prefix(r, 1);
  EXPECT_EQ(p.merges, r.merges);
  EXPECT_FALSE(p.reached_target);
  EXPECT_TRUE(prefix(r, 3).reached_target);
}

}  // namespace
}  // namespace birkhoff::coarsen
