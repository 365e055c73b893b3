#include "birkhoff/graph/coarsen/coarse_graph.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/coarsen/nope.hpp"
#include "graph/coarsen/fixtures.hpp"

namespace birkhoff::coarsen {
namespace {

using testing::opts;
using testing::Random;
using testing::random_graph;
using testing::Toy;
using testing::toy;

TEST(CoarseGraph, LiftAndPoolUseTheAssignment) {
  const Toy t = toy();
  const auto r = cut(nope(t.g, opts(Method::NopeStar, 0.5)), t.g);
  const std::vector<float> coarse = {10, 20};
  std::vector<float> fine(4);
  lift(r, {coarse.data(), 2, 1}, {fine.data(), 4, 1});
  EXPECT_EQ(fine, (std::vector<float>{10, 10, 20, 20}));
  const std::vector<float> values = {1, 3, 5, 9};
  std::vector<float> pooled(2);
  pool(r, {values.data(), 4, 1}, {pooled.data(), 2, 1});
  EXPECT_EQ(pooled, (std::vector<float>{2, 7}));
  pool(r, {values.data(), 4, 1}, {pooled.data(), 2, 1}, false);
  EXPECT_EQ(pooled, (std::vector<float>{4, 14}));
  EXPECT_THROW(lift(r, {coarse.data(), 1, 1}, {fine.data(), 4, 1}), InvalidInput);
}

TEST(CoarseGraph, ContractBuildsTheCoarseGraphOfAnyAssignment) {
  // Path 0-1-2-3 with super-nodes {0, 3} and {1, 2}: the super-nodes are joined by the fine
  // edges 0-1 and 2-3, and {1, 2} holds the edge 1-2 inside.
  const std::vector<float> x = {0, 2, 4, 6};
  const std::vector<std::int64_t> e = {0, 1, 2, 1, 2, 3};
  const auto g = graph::from_edge_index({e.data(), 2, 3}, {x.data(), 4, 1});
  const auto c = contract(g, {0, 1, 1, 0}, 2);
  EXPECT_EQ(c.sizes, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(c.members, (std::vector<std::int64_t>{0, 3, 1, 2}));
  EXPECT_EQ(c.features, (std::vector<float>{3, 3}));
  EXPECT_EQ(c.edge_index, (std::vector<std::int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(c.edge_weight, (std::vector<std::int64_t>{2, 2}));
  EXPECT_TRUE(c.roots.empty());
  EXPECT_THROW(contract(g, {0, 1, 1}, 2), InvalidInput);
  EXPECT_THROW(contract(g, {0, 1, 2, 0}, 2), InvalidInput);
  EXPECT_THROW(contract(g, {0, 0, 0, 0}, 2), InvalidInput);  // super-node 1 is empty
}

RC_GTEST_PROP(CoarseGraphProperties, CutEqualsTheContractionOfItsAssignment, ()) {
  const int n = *rc::gen::inRange(1, 40);
  const auto pairs = *rc::gen::container<std::vector<std::pair<int, int>>>(
      *rc::gen::inRange(0, 100),
      rc::gen::pair(rc::gen::inRange(0, 1000), rc::gen::inRange(0, 1000)));
  const auto values = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 100));
  const Random rg = random_graph(n, 2, pairs, values);
  const auto c = cut(nope(rg.g, opts(Method::NopeStar, 0.3)), rg.g);
  const auto d = contract(rg.g, c.assignment, c.num_super_nodes());
  RC_ASSERT(d.members == c.members);
  RC_ASSERT(d.features == c.features);
  RC_ASSERT(d.edge_index == c.edge_index);
  RC_ASSERT(d.edge_weight == c.edge_weight);
}

}  // namespace
}  // namespace birkhoff::coarsen
