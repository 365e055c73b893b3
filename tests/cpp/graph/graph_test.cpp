#include "birkhoff/graph/graph.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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
  EXPECT_EQ(g.num_edges(), 3);
  EXPECT_EQ(g.self_loops_dropped, 1);
  EXPECT_EQ(g.duplicates_merged, 2);
  EXPECT_EQ(g.indptr, (std::vector<std::int64_t>{0, 2, 4, 4, 5, 6}));
  EXPECT_EQ(g.indices, (std::vector<std::int32_t>{1, 4, 0, 3, 1, 0}));
  EXPECT_EQ(g.degree(2), 0);  // isolated after dropping its self-loop
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
  EXPECT_EQ(g0.num_edges(), 0);
  const std::vector<float> x(4, 0.5f);
  const auto g = from_edge_index({none.data(), 2, 0}, {x.data(), 4, 1});
  EXPECT_EQ(g.num_edges(), 0);
  EXPECT_EQ(g.indptr.size(), 5u);
}

}  // namespace
}  // namespace birkhoff::graph
