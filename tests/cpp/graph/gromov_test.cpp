#include "birkhoff/graph/gromov.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::graph {
namespace {

// A connected random graph: a path through all nodes plus `extra` random edges.
std::vector<std::int64_t> random_edges(std::int64_t n, int extra, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::int64_t> src, dst;
  for (std::int64_t i = 0; i + 1 < n; ++i) src.push_back(i), dst.push_back(i + 1);
  std::uniform_int_distribution<std::int64_t> node(0, n - 1);
  for (int e = 0; e < extra; ++e) {
    const auto u = node(rng), v = node(rng);
    if (u != v) src.push_back(u), dst.push_back(v);
  }
  std::vector<std::int64_t> flat = src;
  flat.insert(flat.end(), dst.begin(), dst.end());
  return flat;
}

AttributedGraph build(const std::vector<std::int64_t>& flat, std::int64_t n,
                      const std::vector<float>* x = nullptr, const std::string& suffix = "") {
  const auto e = static_cast<std::int64_t>(flat.size() / 2);
  BuildOptions o;
  o.suffix = suffix;
  MatrixView<const float> features;
  if (x) features = {x->data(), n, static_cast<std::int64_t>(x->size()) / n};
  return from_edge_index({flat.data(), 2, e}, n, {}, features, o);
}

std::vector<std::int64_t> relabel(const std::vector<std::int64_t>& flat,
                                  const std::vector<std::int64_t>& perm) {
  std::vector<std::int64_t> out(flat.size());
  for (std::size_t k = 0; k < flat.size(); ++k) out[k] = perm[static_cast<std::size_t>(flat[k])];
  return out;
}

// The textbook iteration on dense matrices (POT's entropic_gromov_wasserstein, square loss):
// T <- sinkhorn(a, b, alpha 2 (constC - 2 C1 T C2) + (1 - alpha) M, epsilon), the Sinkhorn
// solve in the scaling domain to a tight tolerance. Returns the GW (or FGW) loss at the end.
double dense_reference(const std::vector<double>& c1, const std::vector<double>& c2,
                       const std::vector<double>& feat, double alpha, std::int64_t n,
                       std::int64_t m, double eps, int outer, std::vector<double>* plan) {
  const std::vector<double> a(n, 1.0 / n), b(m, 1.0 / m);
  std::vector<double> t(n * m), u(n), v(m), lin(n * m), cost(n * m), k(n * m);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) t[i * m + j] = a[i] * b[j];
  std::vector<double> r(n, 0), s(m, 0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t q = 0; q < n; ++q) r[i] += c1[i * n + q] * c1[i * n + q] * a[q];
  for (std::int64_t j = 0; j < m; ++j)
    for (std::int64_t q = 0; q < m; ++q) s[j] += c2[j * m + q] * c2[j * m + q] * b[q];
  auto linearise = [&] {
    std::vector<double> z(n * m, 0);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t q = 0; q < n; ++q)
        for (std::int64_t j = 0; j < m; ++j) z[i * m + j] += c1[i * n + q] * t[q * m + j];
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        double p = 0;
        for (std::int64_t q = 0; q < m; ++q) p += z[i * m + q] * c2[q * m + j];
        lin[i * m + j] = r[i] + s[j] - 2 * p;
      }
  };
  for (int it = 0; it < outer; ++it) {
    linearise();
    for (std::int64_t e = 0; e < n * m; ++e) {
      cost[e] = alpha * 2 * lin[e] + (feat.empty() ? 0.0 : (1 - alpha) * feat[e]);
    }
    const double shift = *std::min_element(cost.begin(), cost.end());
    for (std::int64_t e = 0; e < n * m; ++e) k[e] = std::exp(-(cost[e] - shift) / eps);
    std::fill(v.begin(), v.end(), 1.0);
    for (int sweep = 0; sweep < 20000; ++sweep) {
      for (std::int64_t i = 0; i < n; ++i) {
        double kv = 0;
        for (std::int64_t j = 0; j < m; ++j) kv += k[i * m + j] * v[j];
        u[i] = a[i] / kv;
      }
      double err = 0;
      for (std::int64_t j = 0; j < m; ++j) {
        double ku = 0;
        for (std::int64_t i = 0; i < n; ++i) ku += k[i * m + j] * u[i];
        err += std::abs(ku * v[j] - b[j]);
        v[j] = b[j] / ku;
      }
      if (err < 1e-13) break;
    }
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) t[i * m + j] = u[i] * k[i * m + j] * v[j];
  }
  linearise();
  double gw = 0, f = 0;
  for (std::int64_t e = 0; e < n * m; ++e) {
    gw += lin[e] * t[e];
    if (!feat.empty()) f += feat[e] * t[e];
  }
  *plan = t;
  return feat.empty() ? gw : alpha * gw + (1 - alpha) * f;
}

GraphGromovOptions tight(int outer) {
  GraphGromovOptions o;
  o.max_iter = outer;
  o.tol = 0;
  o.marginal_tol = 1e-13;
  o.inner_max_iter = 20000;
  return o;
}

TEST(GraphGromov, MatchesTheDenseIterationOnBothStructures) {
  const std::int64_t n = 14, m = 11;
  const auto e1 = random_edges(n, 12, 1), e2 = random_edges(m, 9, 2);
  const auto g1 = build(e1, n), g2 = build(e2, m, nullptr, "2");
  for (const Structure s : {Structure::Adjacency, Structure::ShortestPath}) {
    const double eps = s == Structure::Adjacency ? 0.02 : 0.2;
    const auto c1 = structure_matrix(g1, s), c2 = structure_matrix(g2, s);
    std::vector<double> ref_plan;
    const double ref = dense_reference(c1, c2, {}, 1.0, n, m, eps, 6, &ref_plan);
    auto o = tight(6);
    o.structure = s;
    const auto r = graph_gromov_wasserstein(g1, g2, {}, {}, eps, o);
    EXPECT_EQ(r.iterations, 6);
    EXPECT_NEAR(r.loss, ref, 1e-9 * std::abs(ref)) << static_cast<int>(s);
    double diff = 0;
    for (std::size_t q = 0; q < ref_plan.size(); ++q) diff += std::abs(r.plan[q] - ref_plan[q]);
    EXPECT_LT(diff, 1e-8);
    EXPECT_LT(r.marginal_error, 1e-10);
    EXPECT_DOUBLE_EQ(r.gw_loss, r.loss);
  }
}

TEST(GraphGromov, FusedMatchesTheDenseIteration) {
  const std::int64_t n = 12, m = 10, d = 3;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> x1(n * d), x2(m * d);
  for (auto& v : x1) v = normal(rng);
  for (auto& v : x2) v = normal(rng);
  const auto e1 = random_edges(n, 8, 3), e2 = random_edges(m, 8, 4);
  const auto g1 = build(e1, n, &x1), g2 = build(e2, m, &x2, "2");
  std::vector<double> feat(n * m, 0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t c = 0; c < d; ++c) {
        const double diff = double(x1[i * d + c]) - double(x2[j * d + c]);
        feat[i * m + j] += diff * diff;
      }
  std::vector<double> ref_plan;
  const double ref = dense_reference(structure_matrix(g1, Structure::Adjacency),
                                     structure_matrix(g2, Structure::Adjacency), feat, 0.3, n, m,
                                     0.05, 5, &ref_plan);
  auto o = tight(5);
  o.alpha = 0.3;
  const auto r = graph_gromov_wasserstein(g1, g2, {}, {}, 0.05, o);
  EXPECT_NEAR(r.loss, ref, 1e-9 * std::abs(ref));
  EXPECT_NEAR(r.loss, 0.3 * r.gw_loss + 0.7 * r.feature_loss, 1e-12 * r.loss);
}

TEST(GraphGromov, RelabelledGraphsGivePermutedPlans) {
  const std::int64_t n = 30;
  const auto e1 = random_edges(n, 40, 7), e2 = random_edges(n, 35, 8);
  std::vector<std::int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(9));
  const auto g1 = build(e1, n), g2 = build(e2, n, nullptr, "2");
  const auto g1p = build(relabel(e1, perm), n), g2p = build(relabel(e2, perm), n, nullptr, "2");
  const auto o = tight(8);
  const auto r = graph_gromov_wasserstein(g1, g2, {}, {}, 0.02, o);
  const auto rp = graph_gromov_wasserstein(g1p, g2p, {}, {}, 0.02, o);
  EXPECT_NEAR(r.loss, rp.loss, 1e-10 * r.loss);
  // The plan is far from the product plan (1/n^2 everywhere), so the check has teeth.
  EXPECT_GT(*std::max_element(r.plan.begin(), r.plan.end()), 5.0 / (n * n));
  double diff = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      diff += std::abs(r.plan[i * n + j] - rp.plan[perm[i] * n + perm[j]]);
  EXPECT_LT(diff, 1e-9);
}

TEST(GraphGromov, AGraphAgainstItselfFromTheIdentityStaysNearTheIdentity) {
  const std::int64_t n = 25;
  const auto e = random_edges(n, 30, 11);
  const auto g = build(e, n), g2 = build(e, n, nullptr, "2");
  std::vector<double> identity(n * n, 0);
  for (std::int64_t i = 0; i < n; ++i) identity[i * n + i] = 1.0 / n;
  GraphGromovOptions o;
  o.structure = Structure::ShortestPath;
  const auto r = graph_gromov_wasserstein(g, g2, {}, {}, 1e-3, o, {identity.data(), n, n});
  EXPECT_TRUE(r.converged);
  for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(r.matching[i], i);
  EXPECT_LT(r.gw_loss, 1e-6);
}

TEST(GraphGromov, ShortestPathsAreHopCountsAndDisconnectedPairsGetTheLongestPlusOne) {
  // Path 0-1-2 and the separate edge 3-4.
  const std::vector<std::int64_t> flat = {0, 1, 3, 1, 2, 4};
  const auto g = build(flat, 5);
  const auto d = structure_matrix(g, Structure::ShortestPath);
  EXPECT_EQ(d[0 * 5 + 2], 2);
  EXPECT_EQ(d[2 * 5 + 0], 2);
  EXPECT_EQ(d[3 * 5 + 4], 1);
  EXPECT_EQ(d[0 * 5 + 4], 3);  // the longest finite distance (2) plus one
  EXPECT_EQ(d[1 * 5 + 1], 0);
}

TEST(GraphGromov, BadInputsAreRefusedNamingTheArgument) {
  const auto e = random_edges(6, 3, 1);
  const auto g1 = build(e, 6), g2 = build(e, 6, nullptr, "2");
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const InvalidInput& err) {
      return std::string(err.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { graph_gromov_wasserstein(g1, g2, {}, {}, 0.0); }).rfind("epsilon:", 0),
            0u);
  const std::vector<double> bad_a = {1, 1, 1, 1, 1, -1};
  EXPECT_EQ(message([&] { graph_gromov_wasserstein(g1, g2, bad_a, {}, 0.1); }).rfind("a:", 0), 0u);
  const std::vector<double> short_b = {1, 1};
  EXPECT_EQ(message([&] { graph_gromov_wasserstein(g1, g2, {}, short_b, 0.1); }).rfind("b:", 0),
            0u);
  const std::vector<double> heavy_b(6, 1.0);
  EXPECT_NE(
      message([&] { graph_gromov_wasserstein(g1, g2, {}, heavy_b, 0.1); }).find("equal masses"),
      std::string::npos);
  std::vector<double> init(6 * 5, 0.1);
  EXPECT_EQ(message([&] {
              graph_gromov_wasserstein(g1, g2, {}, {}, 0.1, {}, {init.data(), 6, 5});
            }).rfind("init:", 0),
            0u);
  BuildOptions directed;
  directed.directed = true;
  const auto gd =
      from_edge_index({e.data(), 2, static_cast<std::int64_t>(e.size() / 2)}, 6, {}, {}, directed);
  EXPECT_NE(message([&] { graph_gromov_wasserstein(gd, g2, {}, {}, 0.1); }).find("directed"),
            std::string::npos);
  GraphGromovOptions o;
  o.alpha = 2;
  EXPECT_EQ(message([&] { graph_gromov_wasserstein(g1, g2, {}, {}, 0.1, o); }).rfind("alpha:", 0),
            0u);
  // An epsilon below the costs' rounding is an error, not a plan that lost its marginals.
  EXPECT_NE(
      message([&] { graph_gromov_wasserstein(g1, g2, {}, {}, 1e-300); }).find("lost the marginals"),
      std::string::npos);
  for (const double eps : {1e-16, 1e-20}) {
    try {
      const auto r = graph_gromov_wasserstein(g1, g2, {}, {}, eps);
      EXPECT_EQ(r.converged, r.marginal_error <= 2e-6) << eps;
    } catch (const InvalidInput& err) {
      EXPECT_EQ(std::string(err.what()).rfind("epsilon:", 0), 0u) << eps;
    }
  }
  // The dense plan's limit is named before anything is allocated.
  const std::vector<std::int64_t> none;
  const auto big1 = from_edge_index({none.data(), 2, 0}, 20000);
  const auto big2 = from_edge_index({none.data(), 2, 0}, 10000);
  const auto limit = message([&] { graph_gromov_wasserstein(big1, big2, {}, {}, 0.1); });
  EXPECT_NE(limit.find("exceeds the limit of 100000000"), std::string::npos) << limit;
}

}  // namespace
}  // namespace birkhoff::graph
