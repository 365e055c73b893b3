#include "birkhoff/graph/align/presets.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/generate.hpp"

namespace birkhoff::align {
namespace {

graph::AttributedGraph dense(std::int64_t n, const std::vector<double>& a,
                             const std::vector<float>& x, std::int64_t d) {
  return graph::from_adjacency({a.data(), n, n}, MatrixView<const float>{x.data(), n, d});
}

// The likelihood by its definition on dense matrices: squared residuals of A against B relabelled
// and of x1 against x2 relabelled, each over its count of entries.
double likelihood_by_definition(const PlantedInstance& inst, const std::vector<std::int64_t>& p) {
  const std::int64_t n = inst.n, d = inst.d;
  double e = 0, f = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double r = inst.a[i * n + j] - inst.b[p[i] * n + p[j]];
      e += r * r;
    }
    for (std::int64_t c = 0; c < d; ++c) {
      const double r = double(inst.x1[i * d + c]) - double(inst.x2[p[i] * d + c]);
      f += r * r;
    }
  }
  const double cells = double(n) * double(n), entries = double(n) * double(d);
  return -0.5 * cells * std::log(e / cells) - 0.5 * entries * std::log(f / entries);
}

TEST(MatchingLikelihood, EqualsItsDefinitionAndPrefersThePlantedMatching) {
  const auto inst = correlated_wigner(60, 8, 0.8, 0.8, 3);
  const auto g1 = dense(60, inst.a, inst.x1, 8), g2 = dense(60, inst.b, inst.x2, 8);
  std::vector<std::int64_t> other = inst.perm;
  std::swap(other[0], other[1]);
  std::swap(other[5], other[9]);
  const double planted = matching_likelihood(g1, g2, inst.perm);
  EXPECT_NEAR(planted, likelihood_by_definition(inst, inst.perm), 1e-8 * std::abs(planted));
  EXPECT_NEAR(matching_likelihood(g1, g2, other), likelihood_by_definition(inst, other),
              1e-8 * std::abs(planted));
  EXPECT_GT(planted, matching_likelihood(g1, g2, other));
}

TEST(MatchingLikelihood, RejectsABadPerm) {
  const auto inst = correlated_wigner(10, 2, 0.8, 0.8, 3);
  const auto g = dense(10, inst.a, inst.x1, 2);
  std::vector<std::int64_t> perm(10, 0);
  perm[3] = 10;
  EXPECT_THROW(matching_likelihood(g, g, perm), InvalidInput);
  perm.pop_back();
  EXPECT_THROW(matching_likelihood(g, g, perm), InvalidInput);
}

TEST(PresetCandidates, GivenOptionsWinAndRepeatsAreDropped) {
  QpAlignOptions base;
  base.max_iter = 7;
  const auto all = preset_candidates(base, "auto");
  ASSERT_EQ(all.size(), kPresets.size());
  for (std::size_t k = 0; k < all.size(); ++k) {
    EXPECT_EQ(all[k].preset, kPresets[k].preset);
    EXPECT_EQ(all[k].options.max_iter, kPresets[k].max_iter);
    EXPECT_EQ(all[k].options.step, kPresets[k].step);
  }
  const auto kept = preset_candidates(base, "douban", {"max_iter"});
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].options.max_iter, 7);
  EXPECT_EQ(kept[0].options.lambda_edge, 0.2);
  // Every preset field given: the three candidates are one.
  std::set<std::string, std::less<>> every(kPresetFields.begin(), kPresetFields.end());
  EXPECT_EQ(preset_candidates(base, "auto", every).size(), 1u);
  EXPECT_EQ(preset_candidates(base, "none").front().preset, Preset::None);
  EXPECT_THROW(preset_candidates(base, "cora"), InvalidInput);
}

TEST(QpAlignSelect, KeepsTheMostLikelyRunAndReportsEveryCandidate) {
  const auto inst = correlated_wigner(80, 8, 0.9, 0.9, 11);
  const auto g1 = dense(80, inst.a, inst.x1, 8), g2 = dense(80, inst.b, inst.x2, 8);
  QpAlignOptions base;
  base.max_iter = 30;
  base.tol = 0;
  base.patience = 0;  // no run converges: every candidate runs
  std::vector<Candidate> candidates = preset_candidates(base, "auto", {"max_iter"});
  // A candidate that cannot recover anything: no edge or feature weight moves Pi from its start.
  Candidate bad{Preset::None, base};
  bad.options.lambda_edge = 0;
  bad.options.lambda_feature = 0;
  bad.options.gamma = 0;
  bad.options.init = Init::Random;
  candidates.insert(candidates.begin(), bad);
  const Selection s = qpalign_select(g1, g2, candidates);
  ASSERT_EQ(s.likelihoods.size(), candidates.size());
  const auto best = std::max_element(s.likelihoods.begin(), s.likelihoods.end());
  EXPECT_EQ(s.alignment.likelihood, *best);
  EXPECT_EQ(s.chosen, static_cast<std::size_t>(best - s.likelihoods.begin()));
  EXPECT_EQ(s.alignment.preset, s.presets[best - s.likelihoods.begin()]);
  EXPECT_NE(best, s.likelihoods.begin());
  EXPECT_EQ(s.alignment.perm, inst.perm);
  EXPECT_DOUBLE_EQ(s.alignment.likelihood, matching_likelihood(g1, g2, s.alignment.perm));
}

TEST(QpAlignSelect, AConvergedRunEndsTheSearch) {
  const auto inst = correlated_wigner(80, 8, 0.9, 0.9, 11);
  const auto g1 = dense(80, inst.a, inst.x1, 8), g2 = dense(80, inst.b, inst.x2, 8);
  const auto candidates = preset_candidates(QpAlignOptions{}, "auto");
  const Selection s = qpalign_select(g1, g2, candidates);
  ASSERT_TRUE(s.alignment.converged);
  EXPECT_EQ(s.presets, std::vector<Preset>{Preset::Gaussian});
  EXPECT_EQ(s.alignment.perm, inst.perm);
}

TEST(StopHint, OnlyWhenTheBudgetRanOut) {
  Alignment r;
  r.iterations = 12;
  r.stopped_by = StopReason::MaxIter;
  EXPECT_NE(stop_hint(r).find("max_iter after 12"), std::string::npos);
  r.stopped_by = StopReason::Patience;
  EXPECT_EQ(stop_hint(r), "");
}

}  // namespace
}  // namespace birkhoff::align
