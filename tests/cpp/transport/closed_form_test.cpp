// Values known in closed form (issue 2's list): they hold at any epsilon, so they test the
// whole pipeline (schedule, kernel, debiasing, gradients) without a peer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/fixtures.hpp"

namespace birkhoff::transport {
namespace {

using testing::Instance;
using testing::Settings;
using testing::to_vector;

TEST(ClosedForm, DivergenceBetweenACloudAndItsTranslateIsTheSquaredShift) {
  for (Cost cost : {Cost::sqeuclidean(), Cost::sqeuclidean(0.5)})
    for (double blur : {0.05, 0.3, 1.0}) {
      Instance<double> inst(40, 40, 3, 17);
      const double t[3] = {0.3, -0.2, 0.5};
      for (std::int64_t i = 0; i < inst.n; ++i)
        for (std::int64_t k = 0; k < 3; ++k)
          inst.y[static_cast<std::size_t>(i * 3 + k)] =
              inst.x[static_cast<std::size_t>(i * 3 + k)] + t[k];
      inst.b = inst.a;
      inst.cost = cost;
      Settings o;
      o.blur = blur;
      o.scaling = 0.7;
      o.marginal_tol = 1e-7;  // the identity holds at the fixed point
      const auto r = sinkhorn_divergence(inst.problem(o.blur), o);
      const double cs = cost == Cost::sqeuclidean(0.5) ? 0.5 : 1.0;
      const double t2 = t[0] * t[0] + t[1] * t[1] + t[2] * t[2];
      EXPECT_NEAR(r.loss(), cs * t2, 1e-6) << "blur " << blur;
      // The gradient identity holds at the fixed point: check it on a converged solve.
      Settings converged;
      converged.blur = std::max(blur, 1.0);
      converged.iterations = 20000;
      converged.tol = 1e-12;
      const auto grad = sinkhorn_divergence(inst.problem(converged.blur), converged).gradients();
      for (std::int64_t i = 0; i < inst.n; ++i)
        for (std::int64_t k = 0; k < 3; ++k)
          ASSERT_NEAR(grad.x[static_cast<std::size_t>(i * 3 + k)],
                      -2 * cs * inst.a[static_cast<std::size_t>(i)] * t[k], 1e-8);
    }
}

TEST(ClosedForm, DivergenceOfACloudWithItselfIsZero) {
  Instance<float> inst(60, 60, 4, 23);
  inst.y = inst.x;
  inst.b = inst.a;
  const auto r = sinkhorn_divergence(inst.problem());
  EXPECT_NEAR(r.loss(), 0.0, 1e-5);
}

TEST(ClosedForm, TwoPointPlanHasTheLogisticDiagonal) {
  // x = {0, 1}, y = {2, 3}, weights 1/2, cost |x - y|^2: the plan is [[p, 1/2 - p], [1/2 - p, p]]
  // with p^2 / (1/2 - p)^2 = exp((C01 + C10 - C00 - C11) / eps) = exp(2 / eps), so
  // p = (1/2) / (1 + exp(-1 / eps)).
  const std::vector<double> x = {0, 1}, y = {2, 3};
  for (double eps : {0.25, 1.0, 4.0}) {
    const auto p = testing::make_problem(x, 2, y, 2, 1, std::sqrt(eps));
    Settings o;
    o.iterations = 2000;
    const auto r = sinkhorn(p, o);
    const auto plan = r.dense_plan();
    EXPECT_NEAR(plan[0], 0.5 / (1 + std::exp(-1.0 / eps)), 1e-9) << eps;
    EXPECT_NEAR(plan[3], plan[0], 1e-9);
  }
}

TEST(ClosedForm, TwoDiracMassesCostTheirSquaredDistanceAtAnyEpsilon) {
  const std::vector<double> x = {1, 2, 3}, y = {-1, 0.5, 2};
  for (double blur : {0.01, 0.5, 3.0}) {
    const auto p = testing::make_problem(x, 1, y, 1, 3, blur);
    const auto r = sinkhorn(p);
    EXPECT_NEAR(r.loss(), 4 + 2.25 + 1, 1e-9);
    EXPECT_NEAR(r.report().transport_cost, 4 + 2.25 + 1, 1e-9);
  }
}

TEST(ClosedForm, OneDimensionalValueTendsToTheSortedMatchingCost) {
  Instance<double> inst(50, 50, 1, 31, true);
  std::vector<double> xs = inst.x, ys = inst.y;
  std::sort(xs.begin(), xs.end());
  std::sort(ys.begin(), ys.end());
  double exact = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) exact += (xs[i] - ys[i]) * (xs[i] - ys[i]) / 50.0;
  // GeomLoss's schedule needs a slow annealing (scaling close to 1) to converge at small blur.
  double previous_gap = 1e9;
  for (double blur : {0.3, 0.1, 0.01}) {
    Settings o;
    o.blur = blur;
    o.scaling = 0.99;
    const auto r = sinkhorn_divergence(inst.problem(o.blur), o);
    const double gap = std::abs(r.loss() - exact);
    EXPECT_LT(gap, previous_gap) << blur;
    previous_gap = gap;
  }
  EXPECT_LT(previous_gap, 1e-3 * exact);
}

TEST(ClosedForm, TranslatingBothCloudsChangesNothing) {
  const std::optional<double> none;
  for (auto reach : {none, std::optional<double>(1.0)}) {
    for (Update u : {Update::Symmetric, Update::Alternating}) {
      Instance<double> inst(30, 20, 2, 8);
      inst.reach_a = reach;
      inst.reach_b = reach;
      Settings o;
      o.blur = 0.5;
      o.iterations = 20;
      o.update = u;
      const auto r0 = sinkhorn(inst.problem(o.blur), o);
      for (auto& v : inst.x) v += 25.0;
      for (auto& v : inst.y) v += 25.0;
      const auto r1 = sinkhorn(inst.problem(o.blur), o);
      EXPECT_NEAR(r0.loss(), r1.loss(), 1e-9);
      for (std::size_t i = 0; i < r0.f().size(); ++i) ASSERT_NEAR(r0.f()[i], r1.f()[i], 1e-8);
    }
  }
}

}  // namespace
}  // namespace birkhoff::transport
