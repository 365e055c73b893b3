#include "birkhoff/graph/graph.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::graph {
namespace {

MatrixView<const std::int64_t> edges(const std::vector<std::int64_t>& flat) {
  return {flat.data(), 2, static_cast<std::int64_t>(flat.size()) / 2};
}

TEST(AttributedGraph, BuildsSymmetricSortedCsr) {
  const std::vector<float> x(5 * 2, 1.0f);
  // Columns 3-1, 0-1, 1-0 (reversed duplicate), 2-2 (self-loop), 1-3 (duplicate), 0-4.
  const std::vector<std::int64_t> e = {3, 0, 1, 2, 1, 0, 1, 1, 0, 2, 3, 4};
  const auto g = from_edge_index(edges(e), {x.data(), 5, 2});
  EXPECT_EQ(g.num_nodes, 5);
  EXPECT_FALSE(g.directed);
  EXPECT_EQ(g.num_entries(), 7);  // three edges both ways, the self-loop once
  EXPECT_EQ(g.self_loops, 1);
  EXPECT_EQ(g.duplicates_merged, 2);
  EXPECT_EQ(g.one_way_pairs, 1);  // {0, 4}; {0, 1} and {1, 3} are given both ways
  EXPECT_EQ(g.two_way_pairs, 2);
  EXPECT_TRUE(g.mixed_orientation());
  EXPECT_EQ(g.indptr, (std::vector<std::int64_t>{0, 2, 4, 5, 6, 7}));
  EXPECT_EQ(g.indices, (std::vector<std::int32_t>{1, 4, 0, 3, 2, 1, 0}));
  EXPECT_TRUE(g.weights.empty());
  EXPECT_EQ(g.degree(2), 1);  // only its self-loop
}

TEST(AttributedGraph, DirectedWeightedEdgesKeepTheirOrientation) {
  // 0->1 (2.0), 1->0 (3.0), 0->1 again (2.0), 2->2 (5.0).
  const std::vector<std::int64_t> e = {0, 1, 0, 2, 1, 0, 1, 2};
  const std::vector<double> w = {2.0, 3.0, 2.0, 5.0};
  BuildOptions directed;
  directed.directed = true;
  const auto g = from_edge_index(edges(e), 3, w, {}, directed);
  EXPECT_TRUE(g.directed);
  EXPECT_EQ(g.indptr, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(g.indices, (std::vector<std::int32_t>{1, 0, 2}));
  EXPECT_EQ(g.weights, (std::vector<double>{2.0, 3.0, 5.0}));
  EXPECT_EQ(g.self_loops, 1);
  EXPECT_EQ(g.duplicates_merged, 1);
  EXPECT_EQ(g.one_way_pairs + g.two_way_pairs, 0);  // orientations are counted undirected only
  EXPECT_EQ(g.dim(), 0);
  // Read as undirected, 0-1 is listed with weights 2 and 3: a conflict.
  try {
    from_edge_index(edges(e), 3, w, {}, BuildOptions{false, 0, "2"});
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& err) {
    EXPECT_EQ(std::string(err.what()).rfind("edge_weight2:", 0), 0u) << err.what();
  }
}

TEST(AttributedGraph, RejectsBadWeightsAndFeaturesNamingThemWithTheSuffix) {
  const std::vector<std::int64_t> e = {0, 1};
  const std::vector<double> nan_weight = {std::nan("")}, two_weights = {1.0, 2.0};
  const std::vector<float> x(4, 0.0f);
  for (const auto& [call, name] : std::vector<std::pair<std::function<void()>, std::string>>{
           {[&] {
              from_edge_index(edges(e), 2, nan_weight, {}, {false, 0, "1"});
            },
            "edge_weight1:"},
           {[&] {
              from_edge_index(edges(e), 2, two_weights, {}, {false, 0, "1"});
            },
            "edge_weight1:"},
           {[&] {
              from_edge_index(edges(e), 2, {}, {x.data(), 4, 1}, {false, 0, "2"});
            },
            "x2:"},
           {[&] { from_edge_index(edges(e), -1, {}, {}, {}); }, "num_nodes:"}}) {
    try {
      call();
      ADD_FAILURE() << "no error for " << name;
    } catch (const InvalidInput& err) {
      EXPECT_EQ(std::string(err.what()).rfind(name, 0), 0u) << err.what();
    }
  }
}

TEST(AttributedGraph, FromAdjacencyKeepsTheNonZeroEntries) {
  const std::vector<double> a = {0, 2, 0,  //
                                 2, 1, 0,  //
                                 0, 0, 0};
  const auto g = from_adjacency({a.data(), 3, 3});
  EXPECT_EQ(g.num_nodes, 3);
  EXPECT_EQ(g.indptr, (std::vector<std::int64_t>{0, 1, 3, 3}));
  EXPECT_EQ(g.indices, (std::vector<std::int32_t>{1, 0, 1}));
  EXPECT_EQ(g.weights, (std::vector<double>{2, 2, 1}));
  EXPECT_EQ(g.self_loops, 1);
  const std::vector<double> asymmetric = {0, 1, 0, 0};
  EXPECT_THROW(from_adjacency({asymmetric.data(), 2, 2}), InvalidInput);
  BuildOptions directed;
  directed.directed = true;
  EXPECT_EQ(from_adjacency({asymmetric.data(), 2, 2}, {}, directed).num_entries(), 1);
  EXPECT_THROW(from_adjacency({a.data(), 3, 2}), InvalidInput);
}

TEST(AttributedGraph, EdgeListAndAdjacencyGiveTheSameGraph) {
  // An undirected weighted triangle with a self-loop, listed once per edge.
  const std::vector<std::int64_t> e = {0, 0, 1, 2, 1, 2, 2, 2};  // 0-1, 0-2, 1-2, 2-2
  const std::vector<double> w = {0.5, 1.5, 2.5, 4.0};
  const std::vector<double> a = {0,   0.5, 1.5,  //
                                 0.5, 0,   2.5,  //
                                 1.5, 2.5, 4.0};
  const auto from_list = from_edge_index(edges(e), 3, w);
  const auto from_dense = from_adjacency({a.data(), 3, 3});
  EXPECT_EQ(from_list.indptr, from_dense.indptr);
  EXPECT_EQ(from_list.indices, from_dense.indices);
  EXPECT_EQ(from_list.weights, from_dense.weights);
  EXPECT_EQ(from_list.self_loops, from_dense.self_loops);
}

TEST(AttributedGraph, RejectsIdsOutOfRangeNamingEdgeIndex) {
  const std::vector<float> x(3, 0.0f);
  for (const std::int64_t bad : {std::int64_t{3}, std::int64_t{-1}}) {
    const std::vector<std::int64_t> e = {0, bad, 1, 2};
    try {
      from_edge_index(edges(e), {x.data(), 3, 1});
      FAIL() << "expected InvalidInput";
    } catch (const InvalidInput& err) {
      EXPECT_NE(std::string(err.what()).find("edge_index"), std::string::npos) << err.what();
      EXPECT_NE(std::string(err.what()).find(std::to_string(bad)), std::string::npos);
    }
  }
}

TEST(AttributedGraph, RejectsWrongEdgeIndexShape) {
  const std::vector<float> x(3, 0.0f);
  const std::vector<std::int64_t> e = {0, 1, 1, 2, 0, 2};
  EXPECT_THROW(from_edge_index({e.data(), 3, 2}, {x.data(), 3, 1}), InvalidInput);
}

TEST(AttributedGraph, RejectsNonFiniteFeaturesNamingX) {
  const std::vector<std::int64_t> e = {0, 1};
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> x = {0.0f, 1.0f, 2.0f, bad};
    try {
      from_edge_index(edges(e), {x.data(), 2, 2});
      FAIL() << "expected InvalidInput";
    } catch (const InvalidInput& err) {
      EXPECT_EQ(std::string(err.what()).rfind("x:", 0), 0u) << err.what();
    }
  }
}

TEST(AttributedGraph, AcceptsEmptyGraphs) {
  const std::vector<std::int64_t> none;
  const auto g0 = from_edge_index({none.data(), 2, 0}, {nullptr, 0, 3});
  EXPECT_EQ(g0.num_nodes, 0);
  EXPECT_EQ(g0.num_entries(), 0);
  const std::vector<float> x(4, 0.5f);
  const auto g = from_edge_index({none.data(), 2, 0}, {x.data(), 4, 1});
  EXPECT_EQ(g.num_entries(), 0);
  EXPECT_EQ(g.indptr.size(), 5u);
}

// The orientation counts against a set of the ordered pairs given.
RC_GTEST_PROP(AttributedGraphProperties, CountsPairsGivenOneWayAndBothWays, ()) {
  const int n = *rc::gen::inRange(1, 30);
  const auto pairs = *rc::gen::container<std::vector<std::pair<int, int>>>(
      rc::gen::pair(rc::gen::inRange(0, n), rc::gen::inRange(0, n)));
  std::vector<std::int64_t> e(2 * pairs.size());
  std::set<std::pair<int, int>> given;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    e[k] = pairs[k].first;
    e[pairs.size() + k] = pairs[k].second;
    if (pairs[k].first != pairs[k].second) given.insert(pairs[k]);
  }
  std::int64_t one_way = 0, two_way = 0;
  for (const auto& [u, v] : given) {
    if (u > v && given.count({v, u})) continue;  // the pair is counted from (v, u)
    (given.count({v, u}) ? two_way : one_way) += 1;
  }
  const auto g = from_edge_index(edges(e), n);
  RC_ASSERT(g.one_way_pairs == one_way);
  RC_ASSERT(g.two_way_pairs == two_way);
  RC_ASSERT(g.mixed_orientation() == (one_way > 0 && two_way > 0));
}

}  // namespace
}  // namespace birkhoff::graph
