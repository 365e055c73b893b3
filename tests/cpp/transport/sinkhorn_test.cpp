#include "birkhoff/transport/sinkhorn.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "birkhoff/transport/reference.hpp"
#include "transport/fixtures.hpp"

namespace birkhoff::transport {
namespace {

using testing::as_double;
using testing::Instance;
using testing::Settings;
using testing::to_vector;

struct Config {
  const char* name;
  Update update;
  bool extrapolation;
  int iterations;  // 0 = epsilon scaling
  Cost cost;
  bool zeros;
};

class StreamingSolver : public ::testing::TestWithParam<Config> {};

TEST_P(StreamingSolver, MatchesTheDenseTwinStepByStep) {
  const Config c = GetParam();
  for (std::int64_t d : {1, 3, 10}) {
    Instance<double> inst(41, 29, d, static_cast<unsigned>(d) * 7 + 1, false, c.zeros);
    inst.cost = c.cost;
    Settings o;
    o.blur = 0.3;
    o.iterations = c.iterations;
    o.schedule = Schedule::GeomLoss;  // the dense twin runs GeomLoss's schedule
    o.update = c.update;
    o.last_extrapolation = c.extrapolation;
    const auto got = sinkhorn(inst.problem(o.blur), o);
    const auto want = reference::sinkhorn_dense(inst.problem(o.blur), o);
    for (std::size_t i = 0; i < want.f.size(); ++i) ASSERT_NEAR(got.f()[i], want.f[i], 1e-9) << i;
    for (std::size_t j = 0; j < want.g.size(); ++j) ASSERT_NEAR(got.g()[j], want.g[j], 1e-9) << j;
    EXPECT_NEAR(got.epsilon(), want.epsilon, 1e-15);
    // Float32 end to end stays close to the float64 twin.
    Instance<float> inst_f(41, 29, d, static_cast<unsigned>(d) * 7 + 1, false, c.zeros);
    inst_f.cost = c.cost;
    const auto got_f = sinkhorn(inst_f.problem(o.blur), o);
    for (std::size_t i = 0; i < want.f.size(); ++i)
      ASSERT_NEAR(got_f.f()[i], want.f[i], 2e-4 * (1 + std::abs(want.f[i])));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, StreamingSolver,
    ::testing::Values(
        Config{"SymmetricFixed", Update::Symmetric, true, 7, Cost::sqeuclidean(), false},
        Config{"SymmetricNoExtrapolation", Update::Symmetric, false, 7, Cost::sqeuclidean(), true},
        Config{"SymmetricScaling", Update::Symmetric, true, 0, Cost::sqeuclidean(0.5), false},
        Config{"AlternatingFixed", Update::Alternating, false, 9, Cost::sqeuclidean(), true},
        Config{"AlternatingHalf", Update::Alternating, false, 9, Cost::sqeuclidean(0.5), false}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(StreamingSolver, DivergenceAndUnbalancedMatchTheDenseTwin) {
  const std::optional<double> none;
  const std::pair<std::optional<double>, std::optional<double>> reaches[] = {
      {none, none}, {1.0, 1.0}, {1.0, none}, {none, 2.0}, {0.7, 1.5}};
  for (const auto& [ra, rb] : reaches) {
    Instance<double> inst(30, 25, 3, 11);
    inst.reach_a = ra;
    inst.reach_b = rb;
    Settings o;
    o.blur = 0.4;
    o.iterations = 6;
    const auto want = reference::sinkhorn_dense(inst.problem(o.blur), o);
    const auto got = sinkhorn(inst.problem(o.blur), o);
    for (std::size_t i = 0; i < want.f.size(); ++i) ASSERT_NEAR(got.f()[i], want.f[i], 1e-9);
    if (ra.has_value() == rb.has_value()) {
      const auto wd = reference::sinkhorn_dense(inst.problem(o.blur), o, true);
      const auto gd = sinkhorn_divergence(inst.problem(o.blur), o);
      for (std::size_t i = 0; i < wd.f_aa.size(); ++i) ASSERT_NEAR(gd.f_aa()[i], wd.f_aa[i], 1e-9);
      for (std::size_t j = 0; j < wd.g_bb.size(); ++j) ASSERT_NEAR(gd.g_bb()[j], wd.g_bb[j], 1e-9);
    }
  }
}

TEST(StreamingSolver, ConvergedValueEqualsTheExactDualObjective) {
  // At convergence the value formula of the result equals the dense dual objective, for
  // balanced, unbalanced and semi-unbalanced problems (catches FlashSinkhorn §1.4 / §13.14).
  const std::optional<double> none;
  const std::pair<std::optional<double>, std::optional<double>> reaches[] = {
      {none, none}, {1.0, 1.0}, {1.0, none}, {none, 2.0}};
  for (const auto& [ra, rb] : reaches) {
    Instance<double> inst(30, 25, 2, 5);
    inst.reach_a = ra;
    inst.reach_b = rb;
    Settings o;
    o.blur = 0.7;
    o.iterations = 20000;
    o.tol = 1e-14;
    const auto got = sinkhorn(inst.problem(o.blur), o);
    const auto want = reference::sinkhorn_dense(inst.problem(o.blur), o);
    EXPECT_NEAR(got.loss(), want.loss, 1e-9);
    if (!ra && !rb) {
      EXPECT_TRUE(got.converged());
      EXPECT_LT(got.report().marginal_error, 1e-9);
    }
  }
}

TEST(StreamingSolver, TransportCostEqualsTheDensePlanCost) {
  Instance<double> inst(33, 21, 4, 3);
  Settings o;
  o.blur = 0.5;
  const auto r = sinkhorn(inst.problem(o.blur), o);
  const auto& plan = r;
  const auto p = plan.dense_plan();
  const auto c = reference::cost_matrix({inst.x.data(), inst.n, inst.d},
                                        {inst.y.data(), inst.m, inst.d}, inst.cost);
  double cost = 0;
  for (std::size_t k = 0; k < p.size(); ++k) cost += p[k] * c[k];
  EXPECT_NEAR(r.report().transport_cost, cost, 1e-10 * (1 + cost));
}

TEST(StreamingSolver, ResultsDoNotDependOnThreadCount) {
  Instance<float> inst(3000, 2500, 5, 9);  // large enough for two threads
  Settings o;
  o.blur = 0.1;
  o.num_threads = 1;
  const auto one = sinkhorn(inst.problem(o.blur), o);
  o.num_threads = 2;
  const auto two = sinkhorn(inst.problem(o.blur), o);
  EXPECT_EQ(to_vector(one.f()), to_vector(two.f()));
  EXPECT_EQ(to_vector(one.g()), to_vector(two.g()));
  EXPECT_EQ(one.loss(), two.loss());
}

TEST(StreamingSolver, ZeroWeightsGiveFiniteValuesAndZeroGradientRows) {
  Instance<float> inst(50, 40, 3, 4, false, true);
  const auto r = sinkhorn(inst.problem());
  for (float v : r.f()) EXPECT_TRUE(std::isfinite(v));
  for (float v : r.g()) EXPECT_TRUE(std::isfinite(v));
  EXPECT_TRUE(std::isfinite(r.loss()));
  const auto grad = r.gradients();
  for (std::int64_t i = 0; i < inst.n; ++i)
    if (inst.a[static_cast<std::size_t>(i)] == 0) {
      for (std::int64_t k = 0; k < inst.d; ++k)
        EXPECT_EQ(grad.x[static_cast<std::size_t>(i * inst.d + k)], 0.0f);
    }
}

TEST(StreamingSolver, EarlyStoppingStopsAndReportsItsErrors) {
  Instance<double> inst(60, 50, 3, 2);
  Settings o;
  o.blur = 0.5;
  o.iterations = 5000;
  o.tol = 1e-8;
  o.check_every = 5;
  const auto r = sinkhorn(inst.problem(o.blur), o);
  EXPECT_TRUE(r.report().stopped_early);
  EXPECT_LT(r.report().iterations, 5000);
  EXPECT_EQ((r.report().iterations - 2) % 5, 0);  // plus the initial step and the extrapolation
  ASSERT_FALSE(r.report().errors.empty());
  EXPECT_LE(r.report().errors.back(), 1e-8);
  EXPECT_TRUE(r.converged());
}

TEST(EpsilonSchedule, FollowsGeomLossLengthsAndTruncation) {
  Settings o;
  o.blur = 0.05;
  o.scaling = 0.5;
  // D = 61.2 at blur .05, scaling .5: 13 entries (FlashSinkhorn note §3.7).
  const double eps = o.blur * o.blur;
  EXPECT_EQ(epsilon_schedule(o, eps, 61.2).size(), 13u);
  EXPECT_EQ(epsilon_schedule(o, eps, 13.4).size(), 11u);
  o.scaling = 0.9;
  EXPECT_EQ(epsilon_schedule(o, eps, 61.2).size(), 70u);
  // An exact power ratio: D = 1.6, blur .05, s = .5 -> ratio 32 = 2^5 -> 5 + 2 entries.
  o.scaling = 0.5;
  const auto e = epsilon_schedule(o, eps, 1.6);
  ASSERT_EQ(e.size(), 7u);
  EXPECT_DOUBLE_EQ(e.front(), 1.6 * 1.6);
  EXPECT_DOUBLE_EQ(e.back(), 0.05 * 0.05);
  o.iterations = 4;
  EXPECT_EQ(epsilon_schedule(o, eps, 1.6), std::vector<double>(4, eps));
}

TEST(StreamingSolver, WarmStartFromConvergedPotentialsStopsAtOnce) {
  Instance<double> inst(300, 250, 2, 11);
  SinkhornOptions o;
  o.marginal_tol = 1e-6;
  const auto cold = sinkhorn(inst.problem(0.1), o);
  ASSERT_TRUE(cold.converged());
  o.init_f = to_vector(cold.f());
  o.init_g = to_vector(cold.g());
  const auto warm = sinkhorn(inst.problem(0.1), o);
  EXPECT_TRUE(warm.converged());
  EXPECT_LE(warm.report().iterations, 3) << "cold: " << cold.report().iterations;
  EXPECT_NEAR(warm.loss(), cold.loss(), 1e-6 * std::abs(cold.loss()));
  o.init_g.pop_back();
  EXPECT_THROW(sinkhorn(inst.problem(0.1), o), birkhoff::InvalidInput);
}

}  // namespace
}  // namespace birkhoff::transport
