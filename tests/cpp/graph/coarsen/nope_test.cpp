#include "birkhoff/graph/coarsen/nope.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "graph/coarsen/fixtures.hpp"

namespace birkhoff::coarsen {
namespace {

using graph::AttributedGraph;
using testing::opts;
using testing::Random;
using testing::random_graph;
using testing::Toy;
using testing::toy;

TEST(Nope, ToyCaseMatchesTheReference) {
  const Toy t = toy();
  const auto r = nope(t.g, opts(Method::Nope, 0.5));
  EXPECT_EQ(r.merges, (std::vector<std::int64_t>{4, 0, 1, 5, 2, 4}));
  ASSERT_EQ(r.keys.size(), 2u);
  EXPECT_NEAR(r.keys[0], 0.999999995, 1e-15);
  EXPECT_NEAR(r.keys[1], 0.6666666644444444, 1e-15);
  EXPECT_EQ(cut(r, t.g).roots, (std::vector<std::int64_t>{3, 5}));
  EXPECT_TRUE(r.reached_target);

  const auto r4 = nope(t.g, opts(Method::Nope, 0.25));
  EXPECT_EQ(r4.merges, (std::vector<std::int64_t>{4, 0, 1, 5, 2, 4, 6, 3, 5}));
  EXPECT_NEAR(r4.keys[2], 0.16666666749176345, 1e-15);
}

TEST(NopeStar, ToyCaseMatchesTheReference) {
  const Toy t = toy();
  const auto r = nope(t.g, opts(Method::NopeStar, 0.5));
  EXPECT_EQ(r.merges, (std::vector<std::int64_t>{4, 0, 1, 5, 2, 3}));
  EXPECT_EQ(r.keys, (std::vector<double>{0.0, 0.0}));
  const auto c = cut(r, t.g);
  EXPECT_EQ(c.roots, (std::vector<std::int64_t>{4, 5}));
  EXPECT_EQ(c.assignment, (std::vector<std::int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(c.sizes, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(c.features, (std::vector<float>{1, 0, 0, 1}));
  EXPECT_EQ(c.edge_index, (std::vector<std::int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(c.edge_weight, (std::vector<std::int64_t>{2, 2}));  // 0-2 and 1-2

  const auto r4 = nope(t.g, opts(Method::NopeStar, 0.25));
  EXPECT_EQ(r4.merges, (std::vector<std::int64_t>{4, 0, 1, 5, 2, 3, 6, 4, 5}));
  EXPECT_EQ(r4.keys[2], 0.0);
}

TEST(Nope, RejectsRatioOutsideUnitIntervalNamingRatio) {
  const Toy t = toy();
  for (const double bad : {0.0, -0.5, 1.5, std::nan("")}) {
    try {
      nope(t.g, opts(Method::Nope, bad));
      FAIL() << "expected InvalidInput for ratio " << bad;
    } catch (const InvalidInput& err) {
      EXPECT_EQ(std::string(err.what()).rfind("ratio:", 0), 0u) << err.what();
    }
  }
  NopeOptions o;
  o.n_coarse = 0;
  EXPECT_THROW(nope(t.g, o), InvalidInput);
  o.n_coarse = 5;
  EXPECT_THROW(nope(t.g, o), InvalidInput);
}

TEST(Nope, DisconnectedGraphStopsAtOneSuperNodePerComponent) {
  // Two triangles, one isolated node: 3 components.
  std::vector<float> x(7);
  std::iota(x.begin(), x.end(), 0.0f);
  const std::vector<std::int64_t> e = {0, 1, 0, 3, 4, 3, 1, 2, 2, 4, 5, 5};
  const auto g = graph::from_edge_index({e.data(), 2, 6}, {x.data(), 7, 1});
  for (const Method v : {Method::Nope, Method::NopeStar}) {
    const auto r = nope(g, opts(v, 0.1));
    EXPECT_FALSE(r.reached_target);
    EXPECT_EQ(r.target, 1);
    EXPECT_EQ(r.num_merges(), 4);
    const auto c = cut(r, g);
    EXPECT_EQ(c.num_super_nodes(), 3);
    EXPECT_EQ(c.num_coarse_edges(), 0);
    EXPECT_EQ(c.sizes[c.assignment[6]], 1);  // the isolated node stays a singleton
    EXPECT_EQ(c.roots[0], 6);
  }
}

TEST(Nope, SingleNodeAndEmptyGraphsGiveTheTrivialResult) {
  const std::vector<std::int64_t> none;
  const std::vector<float> one = {3.0f, 4.0f};
  const auto g1 = graph::from_edge_index({none.data(), 2, 0}, {one.data(), 1, 2});
  const auto r1 = nope(g1, opts(Method::Nope, 0.5));
  EXPECT_TRUE(r1.reached_target);
  EXPECT_EQ(cut(r1, g1).roots, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(cut(r1, g1).features, one);
  const auto g0 = graph::from_edge_index({none.data(), 2, 0}, {nullptr, 0, 2});
  const auto r0 = nope(g0, opts(Method::NopeStar, 0.5));
  EXPECT_TRUE(r0.reached_target);
  EXPECT_EQ(cut(r0, g0).num_super_nodes(), 0);
  EXPECT_TRUE(cut(r0, g0).assignment.empty());
}

TEST(Nope, ReportsDroppedSelfLoopsAndMergedDuplicates) {
  const std::vector<float> x = {0, 1, 2};
  const std::vector<std::int64_t> e = {0, 1, 1, 2, 1, 0, 1, 2};
  const auto g = graph::from_edge_index({e.data(), 2, 4}, {x.data(), 3, 1});
  const auto r = nope(g, opts(Method::NopeStar, 1.0));
  EXPECT_EQ(r.self_loops_dropped, 2);  // columns (1, 1) and (2, 2)
  EXPECT_EQ(r.duplicates_merged, 1);   // (1, 0) repeats (0, 1)
  EXPECT_EQ(r.num_merges(), 0);
  EXPECT_EQ(cut(r, g).num_coarse_edges(), 2);
}

TEST(Nope, SelfLoopsChangeNothingButTheirCount) {
  const Toy t = toy();
  // The toy's four edges plus the self-loops (3, 3) and (2, 2).
  const std::vector<std::int64_t> looped = {0, 0, 1, 2, 3, 2, 1, 2, 2, 3, 3, 2};
  const auto g = graph::from_edge_index({looped.data(), 2, 6}, {t.x.data(), 4, 2});
  for (const Method v : {Method::Nope, Method::NopeStar}) {
    const auto with = nope(g, opts(v, 0.25)), without = nope(t.g, opts(v, 0.25));
    EXPECT_EQ(with.merges, without.merges);
    EXPECT_EQ(with.keys, without.keys);
    EXPECT_EQ(with.num_edges, without.num_edges);
    EXPECT_EQ(with.self_loops_dropped, 2);
    EXPECT_EQ(cut(with, g).edge_weight, cut(without, t.g).edge_weight);
  }
}

TEST(Nope, RejectsDirectedOrWeightedGraphs) {
  const Toy t = toy();
  graph::BuildOptions directed;
  directed.directed = true;
  const auto d = graph::from_edge_index({t.e.data(), 2, 4}, 4, {}, {t.x.data(), 4, 2}, directed);
  EXPECT_THROW(nope(d, opts(Method::Nope, 0.5)), InvalidInput);
  const std::vector<double> w(4, 1.0);
  const auto weighted = graph::from_edge_index({t.e.data(), 2, 4}, 4, w, {t.x.data(), 4, 2});
  EXPECT_THROW(nope(weighted, opts(Method::Nope, 0.5)), InvalidInput);
}

TEST(Nope, ProgressCallbackCanCancel) {
  const Toy t = toy();
  NopeOptions o = opts(Method::Nope, 0.25);
  o.progress = [](const ProgressInfo&) { return false; };
  EXPECT_THROW(nope(t.g, o), Cancelled);
}

// ---- properties on random graphs ------------------------------------------------------------

std::int64_t components(const AttributedGraph& g) {
  std::vector<std::int64_t> label(static_cast<std::size_t>(g.num_nodes), -1);
  std::int64_t count = 0;
  for (std::int64_t s = 0; s < g.num_nodes; ++s) {
    if (label[s] >= 0) continue;
    std::vector<std::int64_t> stack = {s};
    label[s] = count;
    while (!stack.empty()) {
      const auto i = stack.back();
      stack.pop_back();
      for (const auto j : g.neighbors(i)) {
        if (label[j] < 0) {
          label[j] = count;
          stack.push_back(j);
        }
      }
    }
    ++count;
  }
  return count;
}

void check_consistent(const AttributedGraph& g, const MergeTree& tree, const CoarseGraph& r) {
  const std::int64_t k = r.num_super_nodes();
  // Assignment is onto [0, K), sizes match, members ascending.
  std::vector<std::int64_t> seen(static_cast<std::size_t>(k), 0);
  for (const auto a : r.assignment) {
    RC_ASSERT(a >= 0 && a < k);
    ++seen[a];
  }
  RC_ASSERT(seen == r.sizes);
  RC_ASSERT(std::all_of(seen.begin(), seen.end(), [](auto s) { return s > 0; }));
  RC_ASSERT(k == r.num_nodes - tree.num_merges());
  if (tree.reached_target) {
    RC_ASSERT(k == tree.target);
  } else {
    RC_ASSERT(k == components(g));
  }
  // Coarse edges: symmetric, sorted, no self-loops; weights count the original cut edges.
  const std::int64_t ec = r.num_coarse_edges();
  std::set<std::pair<std::int64_t, std::int64_t>> es;
  for (std::int64_t t = 0; t < ec; ++t) {
    const auto a = r.edge_index[t], b = r.edge_index[ec + t];
    RC_ASSERT(a != b);
    if (t > 0)
      RC_ASSERT(std::make_pair(r.edge_index[t - 1], r.edge_index[ec + t - 1]) <
                std::make_pair(a, b));
    es.insert({a, b});
  }
  std::int64_t cut_edges = 0;
  for (std::int64_t i = 0; i < g.num_nodes; ++i) {
    for (const auto j : g.neighbors(i)) {
      if (r.assignment[i] != r.assignment[j]) {
        ++cut_edges;
        RC_ASSERT(es.count({r.assignment[i], r.assignment[j]}) == 1u);
      }
    }
  }
  RC_ASSERT(std::accumulate(r.edge_weight.begin(), r.edge_weight.end(), std::int64_t{0}) ==
            cut_edges);
  for (const auto& [a, b] : es) RC_ASSERT(es.count({b, a}) == 1u);
}

RC_GTEST_PROP(NopeProperties, AssignmentIsOntoAndMeetsRatio, ()) {
  const int n = *rc::gen::inRange(1, 40);
  const int d = *rc::gen::inRange(1, 5);
  const auto pairs = *rc::gen::container<std::vector<std::pair<int, int>>>(
      *rc::gen::inRange(0, 100),
      rc::gen::pair(rc::gen::inRange(0, 1000), rc::gen::inRange(0, 1000)));
  const auto values = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 100));
  const auto variant = *rc::gen::element(Method::Nope, Method::NopeStar);
  const double ratio = *rc::gen::element(0.01, 0.1, 0.3, 0.5, 0.9, 1.0);
  const Random rg = random_graph(n, d, pairs, values);
  const auto r = nope(rg.g, opts(variant, ratio));
  RC_ASSERT(r.target == target_for_ratio(n, ratio));
  check_consistent(rg.g, r, cut(r, rg.g));
}

/// The same merges, keys and coarse graph.
void expect_same_run(const AttributedGraph& g, const MergeTree& a, const MergeTree& b) {
  RC_ASSERT(a.merges == b.merges);
  RC_ASSERT(a.keys == b.keys);
  RC_ASSERT(a.reached_target == b.reached_target);
  const CoarseGraph ca = cut(a, g), cb = cut(b, g);
  RC_ASSERT(ca.assignment == cb.assignment);
  RC_ASSERT(ca.features == cb.features);
  RC_ASSERT(ca.edge_index == cb.edge_index);
  RC_ASSERT(ca.edge_weight == cb.edge_weight);
}

RC_GTEST_PROP(NopeProperties, CutEqualsADirectRunAtTheLargerRatio, ()) {
  const int n = *rc::gen::inRange(2, 40);
  const auto pairs = *rc::gen::container<std::vector<std::pair<int, int>>>(
      *rc::gen::inRange(0, 120),
      rc::gen::pair(rc::gen::inRange(0, 1000), rc::gen::inRange(0, 1000)));
  const auto values = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 100));
  const auto variant = *rc::gen::element(Method::Nope, Method::NopeStar);
  const Random rg = random_graph(n, 3, pairs, values);
  const auto fine = nope(rg.g, opts(variant, 0.1));
  for (const double ratio : {0.1, 0.3, 0.5, 1.0}) {
    const auto direct = nope(rg.g, opts(variant, ratio));
    expect_same_run(rg.g, prefix(fine, target_for_ratio(n, ratio)), direct);
  }
}

RC_GTEST_PROP(NopeProperties, ResultDoesNotDependOnTheThreadCount, ()) {
  const int n = *rc::gen::inRange(2, 60);
  const auto pairs = *rc::gen::container<std::vector<std::pair<int, int>>>(
      *rc::gen::inRange(0, 200),
      rc::gen::pair(rc::gen::inRange(0, 1000), rc::gen::inRange(0, 1000)));
  const auto values = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 100));
  const auto variant = *rc::gen::element(Method::Nope, Method::NopeStar);
  const Random rg = random_graph(n, 4, pairs, values);
  NopeOptions a = opts(variant, 0.2), b = a;
  a.num_threads = 1;
  b.num_threads = 2;
  expect_same_run(rg.g, nope(rg.g, a), nope(rg.g, b));
}

// The bitset rows of the dense phase (on from the first merge for graphs this small and dense,
// rebuilt whenever their slots run out) give the same run as the adjacency lists alone.
RC_GTEST_PROP(NopeProperties, BitsetPhaseChangesNothing, ()) {
  const int n = *rc::gen::inRange(2, 700);
  const int d = *rc::gen::inRange(1, 6);
  const auto pairs = *rc::gen::container<std::vector<std::pair<int, int>>>(
      *rc::gen::inRange(0, 3000),
      rc::gen::pair(rc::gen::inRange(0, 100000), rc::gen::inRange(0, 100000)));
  const auto values = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 100));
  const auto variant = *rc::gen::element(Method::Nope, Method::NopeStar);
  const Random rg = random_graph(n, d, pairs, values);
  NopeOptions lists = opts(variant, *rc::gen::element(0.01, 0.2, 0.6)), bits = lists;
  lists.bitset_bytes = 0;
  bits.bitset_bytes = std::int64_t{1} << 30;
  const auto a = nope(rg.g, lists);
  const auto b = nope(rg.g, bits);
  expect_same_run(rg.g, a, b);
  RC_ASSERT(a.heap_pushes == b.heap_pushes);
}

// n nodes, 5n edges with hubs (endpoint density ~ -log), a hub of the given degree (node 7),
// d real-valued features.
Random power_law_graph(int n, int d, int hub_degree) {
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  auto uniform = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  std::vector<std::pair<int, int>> pairs(5 * static_cast<std::size_t>(n));
  for (auto& [a, b] : pairs) {
    a = static_cast<int>(n * uniform() * uniform());
    b = static_cast<int>(n * uniform() * uniform());
  }
  for (int i = 1; i <= hub_degree; ++i) pairs.emplace_back(7, (3 * i) % n);
  std::vector<int> values(997);
  for (auto& v : values) v = static_cast<int>(100 * uniform());
  Random rg = random_graph(n, d, pairs, values);
  for (std::size_t i = 0; i < rg.x.size(); ++i) rg.x[i] += static_cast<float>(uniform());
  return rg;
}

TEST(Nope, BitsetPhaseChangesNothingOnAPowerLawGraph) {
  // The bitset is built at the first merge, then rebuilt as its slots run out. A hub of degree
  // 1000, so that merges have more new pairs than the parallel threshold.
  const int n = 4000;
  const Random rg = power_law_graph(n, 8, 1000);
  for (const Method v : {Method::Nope, Method::NopeStar}) {
    // Lists alone on one thread; bitset rows on two threads (hubs' merges score their new
    // pairs in parallel).
    NopeOptions lists = opts(v, 0.01), bits = lists;
    lists.bitset_bytes = 0;
    lists.num_threads = 1;
    bits.num_threads = 2;
    const auto a = nope(rg.g, lists);
    const auto b = nope(rg.g, bits);
    EXPECT_GT(a.num_merges(), n / 2);
    EXPECT_EQ(a.merges, b.merges);
    EXPECT_EQ(a.keys, b.keys);
    const auto ca = cut(a, rg.g), cb = cut(b, rg.g);
    EXPECT_EQ(ca.edge_index, cb.edge_index);
    EXPECT_EQ(ca.edge_weight, cb.edge_weight);
  }
}

TEST(Nope, ListPhaseOnTwoThreadsEqualsOneOnALargerGraph) {
  // 20000 nodes: the heap (about 10^5 entries) is compacted on both threads and heapified
  // level by level with levels above the parallel size, and many merges score their pairs
  // from the lists on both threads (NOPE*'s per-thread counts of edges inside N(n)).
  const Random rg = power_law_graph(20000, 4, 3000);
  for (const Method v : {Method::Nope, Method::NopeStar}) {
    NopeOptions one = opts(v, 0.2), two = one;
    one.bitset_bytes = 0;
    two.bitset_bytes = 0;
    one.num_threads = 1;
    two.num_threads = 2;
    const auto a = nope(rg.g, one);
    const auto b = nope(rg.g, two);
    EXPECT_GT(a.num_merges(), 10000);
    EXPECT_EQ(a.merges, b.merges);
    EXPECT_EQ(a.keys, b.keys);
    EXPECT_EQ(a.heap_pushes, b.heap_pushes);
    EXPECT_EQ(cut(a, rg.g, {true, 1}).edge_index, cut(b, rg.g, {true, 2}).edge_index);
  }
}

}  // namespace
}  // namespace birkhoff::coarsen
