#include "birkhoff/graph/align/multilevel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/generate.hpp"

namespace birkhoff::align {
namespace {

graph::AttributedGraph dense(std::int64_t n, const std::vector<double>& a, const float* x,
                             std::int64_t d) {
  return graph::from_adjacency({a.data(), n, n}, MatrixView<const float>{x, n, d});
}

std::vector<Candidate> one_run(std::int64_t max_iter = 200) {
  QpAlignOptions o;
  o.max_iter = max_iter;
  return {Candidate{Preset::None, o}};
}

MultilevelOptions multilevel(std::int64_t coarse_nodes) {
  MultilevelOptions m;
  m.method = Method::Multilevel;
  m.coarse_nodes = coarse_nodes;
  return m;
}

double overlap(const std::vector<std::int64_t>& perm, const std::vector<std::int64_t>& truth) {
  std::int64_t hit = 0;
  for (std::size_t i = 0; i < perm.size(); ++i) hit += perm[i] == truth[i];
  return static_cast<double>(hit) / static_cast<double>(perm.size());
}

TEST(MatchingObjective, EqualsQpAlignsObjectiveAtThePermutationMatrix) {
  const auto inst = correlated_erdos_renyi(40, 4, 0.8, 0.6, 0.2, 5);
  const auto g1 = dense(40, inst.a, inst.x1.data(), 4);
  const auto g2 = dense(40, inst.b, inst.x2.data(), 4);
  std::vector<std::int64_t> perm = inst.perm;
  std::swap(perm[2], perm[7]);
  QpAlignOptions o;
  o.lambda_edge = 0.3;
  o.lambda_feature = 0.7;
  std::vector<double> pi(40 * 40, 0.0), gradient(pi.size());
  for (std::int64_t i = 0; i < 40; ++i) pi[i * 40 + perm[i]] = 1.0;
  const double reference = objective_and_gradient(g1, g2, o, pi, gradient);
  EXPECT_NEAR(matching_objective(g1, g2, perm, 0.3, 0.7), reference, 1e-9 * reference);
  perm[0] = perm[1];
  EXPECT_THROW(matching_objective(g1, g2, perm, 0.3, 0.7), InvalidInput);
}

TEST(Multilevel, RecoversAPlantedPairAndRefinementNeverRaisesTheObjective) {
  const auto inst = correlated_erdos_renyi(400, 8, 0.9, 0.6, 0.04, 11);
  const auto g1 = dense(400, inst.a, inst.x1.data(), 8);
  const auto g2 = dense(400, inst.b, inst.x2.data(), 8);
  const Selection s = multilevel_select(g1, g2, one_run(), multilevel(80));
  const Alignment& r = s.alignment;
  EXPECT_EQ(r.method, Method::Multilevel);
  EXPECT_EQ(r.coarse_nodes, 80);
  std::vector<std::int64_t> sorted = r.perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t j = 0; j < 400; ++j) ASSERT_EQ(sorted[j], j) << "perm is not a bijection";
  ASSERT_GE(r.refine_objective.size(), 2u) << "no refinement round was kept";
  for (std::size_t q = 1; q < r.refine_objective.size(); ++q)
    EXPECT_LT(r.refine_objective[q], r.refine_objective[q - 1]);
  EXPECT_NEAR(r.refine_objective.back(),
              matching_objective(g1, g2, r.perm, r.lambda_edge, r.lambda_feature),
              1e-9 * r.refine_objective.back());
  // Dense QPAlign with the same settings reaches 0.63 on this pair (tests/python, test_align.py
  // compares the two on a power-law pair).
  EXPECT_GE(overlap(r.perm, inst.perm), 0.75);
  EXPECT_EQ(r.topk.size(), 400u * 10u);
  for (std::int64_t i = 0; i < 400; ++i) EXPECT_EQ(r.topk[i * 10], r.perm[i]);
}

TEST(Multilevel, KeepsSeedsAndHandlesUnequalSizesBothWays) {
  const auto inst = correlated_erdos_renyi(300, 8, 0.9, 0.6, 0.05, 4);
  // G2 restricted to the partners of G1's first 250 nodes, relabelled 0..249 in G2's order.
  const std::int64_t m = 250;
  std::vector<std::int64_t> keep;
  for (std::int64_t i = 0; i < m; ++i) keep.push_back(inst.perm[i]);
  std::sort(keep.begin(), keep.end());
  std::vector<std::int64_t> label(300, -1);
  for (std::int64_t q = 0; q < m; ++q) label[keep[q]] = q;
  std::vector<double> b(static_cast<std::size_t>(m * m));
  std::vector<float> x2(static_cast<std::size_t>(m * 8));
  for (std::int64_t p = 0; p < m; ++p) {
    for (std::int64_t q = 0; q < m; ++q) b[p * m + q] = inst.b[keep[p] * 300 + keep[q]];
    for (std::int64_t c = 0; c < 8; ++c) x2[p * 8 + c] = inst.x2[keep[p] * 8 + c];
  }
  const auto g1 = dense(300, inst.a, inst.x1.data(), 8);
  const auto g2 = dense(m, b, x2.data(), 8);
  const std::vector<std::int64_t> seeds = {3, label[inst.perm[3]], 10, label[inst.perm[10]]};
  auto runs = one_run();
  runs[0].options.seeds = MatrixView<const std::int64_t>(seeds.data(), 2, 2);
  const Alignment big_small = multilevel_select(g1, g2, runs, multilevel(60)).alignment;
  ASSERT_EQ(big_small.perm.size(), 300u);
  EXPECT_EQ(big_small.perm[3], seeds[1]);
  EXPECT_EQ(big_small.perm[10], seeds[3]);
  EXPECT_EQ(std::count(big_small.perm.begin(), big_small.perm.end(), -1), 50);
  std::int64_t hit = 0;
  for (std::int64_t i = 0; i < m; ++i) hit += big_small.perm[i] == label[inst.perm[i]];
  EXPECT_GE(hit, 60);  // dense QPAlign: 100 of 250; chance: about 1

  const std::vector<std::int64_t> swapped = {seeds[1], 3, seeds[3], 10};
  runs[0].options.seeds = MatrixView<const std::int64_t>(swapped.data(), 2, 2);
  const Alignment small_big = multilevel_select(g2, g1, runs, multilevel(60)).alignment;
  ASSERT_EQ(small_big.perm.size(), static_cast<std::size_t>(m));
  EXPECT_EQ(small_big.perm[seeds[1]], 3);
  std::vector<char> used(300, 0);
  for (const std::int64_t j : small_big.perm) {
    ASSERT_TRUE(j >= 0 && !used[j]);
    used[j] = 1;
  }
}

TEST(Multilevel, ChoosesByTheInputAndRefusesWhatItCannotCoarsen) {
  const auto inst = correlated_erdos_renyi(30, 2, 0.9, 0.6, 0.2, 4);
  const auto g1 = dense(30, inst.a, inst.x1.data(), 2);
  const auto bare = dense(30, inst.a, nullptr, 0);
  MultilevelOptions o;
  EXPECT_EQ(choose_method(g1, g1, o), Method::Dense);
  o.dense_max_nodes = 20;
  EXPECT_EQ(choose_method(g1, g1, o), Method::Multilevel);
  EXPECT_EQ(choose_method(bare, bare, o), Method::Dense);
  EXPECT_THROW(multilevel_select(bare, bare, one_run(), multilevel(10)), InvalidInput);
  auto runs = one_run();
  runs[0].options.return_soft = true;
  EXPECT_THROW(multilevel_select(g1, g1, runs, multilevel(10)), InvalidInput);
  EXPECT_THROW(multilevel_select(g1, g1, one_run(), multilevel(0)), InvalidInput);
}

}  // namespace
}  // namespace birkhoff::align
