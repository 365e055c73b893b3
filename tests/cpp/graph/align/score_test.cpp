#include "birkhoff/graph/align/score.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/generate.hpp"
#include "birkhoff/graph/align/qpalign.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::align {
namespace {

TEST(Score, CountsMatchesAndRanksOnAHandMadeCase) {
  // Three G1 nodes, three G2 nodes; truth pairs 0-0, 1-1, 2-2; node 2 is a seed.
  const std::vector<std::int64_t> perm = {0, 2, 2};
  const std::vector<double> soft = {0.9, 0.05, 0.05,  // partner ranked 1st
                                    0.2, 0.3,  0.5,   // partner ranked 2nd
                                    0.0, 0.0,  1.0};  // partner ranked 1st
  const std::vector<std::int64_t> truth = {0, 0, 1, 1, 2, 2}, seeds = {2, 2};
  const auto m = score(perm, MatrixView<const double>{soft.data(), 3, 3}, {truth.data(), 3, 2},
                       {seeds.data(), 1, 2});
  EXPECT_EQ(m.pairs, 3);
  EXPECT_DOUBLE_EQ(m.overlap, 2.0 / 3.0);           // 0 and 2 are matched to their partner
  EXPECT_DOUBLE_EQ(m.overlap_unseeded, 1.0 / 2.0);  // of 0 and 1, only 0
  EXPECT_FALSE(m.exact);
  EXPECT_DOUBLE_EQ(m.hits1, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.hits5, 1.0);
  EXPECT_DOUBLE_EQ(m.mrr, (1.0 + 0.5 + 1.0) / 3.0);
}

TEST(Score, TiesRankFirstFromTheSoftScores) {
  const std::vector<std::int64_t> perm = {1};
  const std::vector<double> soft = {0.5, 0.5};
  const std::vector<std::int64_t> truth = {0, 0};
  const auto m = score(perm, MatrixView<const double>{soft.data(), 1, 2}, {truth.data(), 1, 2});
  EXPECT_DOUBLE_EQ(m.hits1, 1.0);
  EXPECT_DOUBLE_EQ(m.overlap, 0.0);
}

TEST(Score, ReproducesTheMetricsOfQpAlignFromItsSoftMatrix) {
  const auto inst = correlated_wigner(60, 8, 0.6, 0.6, 4);
  std::vector<std::int64_t> truth, seeds = {5, inst.perm[5], 17, inst.perm[17]};
  for (std::int64_t i = 0; i < 60; ++i) {
    truth.push_back(i);
    truth.push_back(inst.perm[i]);
  }
  const auto g1 = graph::from_adjacency({inst.a.data(), 60, 60}, {inst.x1.data(), 60, 8});
  const auto g2 = graph::from_adjacency({inst.b.data(), 60, 60}, {inst.x2.data(), 60, 8});
  QpAlignOptions o;
  o.truth = {truth.data(), 60, 2};
  o.seeds = {seeds.data(), 2, 2};
  o.return_soft = true;
  o.max_iter = 20;
  const auto r = qpalign(g1, g2, o);
  ASSERT_TRUE(r.has_metrics);
  const auto m = score(r.perm, MatrixView<const double>{r.soft.data(), 60, 60}, o.truth, o.seeds);
  EXPECT_EQ(m.pairs, r.metrics.pairs);
  EXPECT_EQ(m.overlap, r.metrics.overlap);
  EXPECT_EQ(m.overlap_unseeded, r.metrics.overlap_unseeded);
  EXPECT_EQ(m.exact, r.metrics.exact);
  EXPECT_EQ(m.hits1, r.metrics.hits1);
  EXPECT_EQ(m.hits5, r.metrics.hits5);
  EXPECT_EQ(m.hits10, r.metrics.hits10);
  EXPECT_EQ(m.mrr, r.metrics.mrr);
  EXPECT_LT(m.overlap_unseeded, m.overlap + 1e-12);  // the two seeds are matched
}

TEST(Score, TopKListsGiveTheSameHitsAndAnMrrAtK) {
  // Distinct scores, so that positions in the sorted list are the ranks.
  const std::int64_t n = 12;
  std::vector<double> soft(n * n);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) soft[i * n + j] = std::sin(1.0 + 7.0 * i + 3.0 * j);
  }
  std::vector<std::int64_t> perm(n), truth, full(n * n), top3(n * 3);
  for (std::int64_t i = 0; i < n; ++i) {
    truth.push_back(i);
    truth.push_back((5 * i) % n);
    std::vector<std::int64_t> order(n);
    for (std::int64_t j = 0; j < n; ++j) order[j] = j;
    std::sort(order.begin(), order.end(),
              [&](std::int64_t a, std::int64_t b) { return soft[i * n + a] > soft[i * n + b]; });
    perm[i] = order[0];
    for (std::int64_t j = 0; j < n; ++j) full[i * n + j] = order[j];
    for (std::int64_t j = 0; j < 3; ++j) top3[i * 3 + j] = order[j];
  }
  const MatrixView<const std::int64_t> t{truth.data(), n, 2};
  const auto from_soft = score(perm, MatrixView<const double>{soft.data(), n, n}, t);
  const auto from_full = score(perm, MatrixView<const std::int64_t>{full.data(), n, n}, t);
  EXPECT_EQ(from_full.overlap, from_soft.overlap);
  EXPECT_DOUBLE_EQ(from_full.hits1, from_soft.hits1);
  EXPECT_DOUBLE_EQ(from_full.hits5, from_soft.hits5);
  EXPECT_DOUBLE_EQ(from_full.hits10, from_soft.hits10);
  EXPECT_DOUBLE_EQ(from_full.mrr, from_soft.mrr);
  const auto from_top3 = score(perm, MatrixView<const std::int64_t>{top3.data(), n, 3}, t);
  EXPECT_DOUBLE_EQ(from_top3.hits1, from_soft.hits1);
  EXPECT_TRUE(std::isnan(from_top3.hits5));
  EXPECT_TRUE(std::isnan(from_top3.hits10));
  EXPECT_LE(from_top3.mrr, from_soft.mrr);
}

TEST(Score, RejectsBadShapesAndPairsNamingThem) {
  const std::vector<std::int64_t> perm = {0, 1};
  const std::vector<double> soft(4, 0.5);
  const std::vector<std::int64_t> truth = {0, 0, 1, 1}, repeated = {0, 0, 1, 0},
                                  out_of_range = {0, 2};
  auto expect_error = [](auto&& call, const std::string& name) {
    try {
      call();
      ADD_FAILURE() << "no error for " << name;
    } catch (const InvalidInput& err) {
      EXPECT_EQ(std::string(err.what()).rfind(name, 0), 0u) << err.what();
    }
  };
  expect_error(
      [&] {
        score(perm, MatrixView<const double>{soft.data(), 1, 4}, {truth.data(), 2, 2});
      },
      "soft:");
  expect_error(
      [&] {
        score(perm, MatrixView<const double>{soft.data(), 2, 2}, {repeated.data(), 2, 2});
      },
      "truth:");
  expect_error(
      [&] {
        score(perm, MatrixView<const double>{soft.data(), 2, 2}, {out_of_range.data(), 1, 2});
      },
      "truth:");
  expect_error(
      [&] {
        score(perm, MatrixView<const std::int64_t>{truth.data(), 1, 4}, {truth.data(), 2, 2});
      },
      "topk:");
}

}  // namespace
}  // namespace birkhoff::align
