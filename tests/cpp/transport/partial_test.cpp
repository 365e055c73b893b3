// Partial OT (the Partial marginal policy) against an independent dense solve, its optimality
// conditions, the balanced limit, finite-difference gradients and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/hvp.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/fixtures.hpp"

namespace birkhoff::transport {
namespace {

using testing::Instance;
using testing::max_abs;
using testing::max_abs_diff;
using testing::on_both_backends;
using testing::Settings;

// Dense twin, written independently of the solver: Dykstra's algorithm on the three KL
// projections (rows scaled by min(1, a_i / rowsum), columns by min(1, b_j / colsum), all by
// mass / total) from K = a b exp(-C / eps), as in [benamou2015] §5.2 with our reference a x b.
// (Plain cyclic projections without the correction factors q stop at a different plan.)
std::vector<double> dense_partial_plan(const Instance<double>& inst, double eps, double mass) {
  const auto n = static_cast<std::size_t>(inst.n), m = static_cast<std::size_t>(inst.m);
  const auto d = static_cast<std::size_t>(inst.d);
  auto weight = [](const std::vector<double>& w, std::size_t k, std::size_t i) {
    return w.empty() ? 1.0 / static_cast<double>(k) : w[i];
  };
  std::vector<double> p(n * m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      double c = 0;
      for (std::size_t k = 0; k < d; ++k) {
        const double diff = inst.x[i * d + k] - inst.y[j * d + k];
        c += diff * diff;
      }
      p[i * m + j] = weight(inst.a, n, i) * weight(inst.b, m, j) * std::exp(-c / eps);
    }
  std::vector<std::vector<double>> q(3, std::vector<double>(n * m, 1.0));
  // One Dykstra step: p <- project(p * q_k), q_k <- q_k * (p before) / (p after).
  auto step = [&](int k, auto scale_of) {
    const std::vector<double> before = p;
    for (std::size_t e = 0; e < p.size(); ++e) p[e] *= q[k][e];
    scale_of(p);
    for (std::size_t e = 0; e < p.size(); ++e) q[k][e] *= before[e] / p[e];
  };
  for (int it = 0; it < 100000; ++it) {
    const std::vector<double> start = p;
    step(0, [&](std::vector<double>& v) {
      for (std::size_t i = 0; i < n; ++i) {
        double s = 0;
        for (std::size_t j = 0; j < m; ++j) s += v[i * m + j];
        const double f = std::min(1.0, weight(inst.a, n, i) / s);
        for (std::size_t j = 0; j < m; ++j) v[i * m + j] *= f;
      }
    });
    step(1, [&](std::vector<double>& v) {
      for (std::size_t j = 0; j < m; ++j) {
        double s = 0;
        for (std::size_t i = 0; i < n; ++i) s += v[i * m + j];
        const double f = std::min(1.0, weight(inst.b, m, j) / s);
        for (std::size_t i = 0; i < n; ++i) v[i * m + j] *= f;
      }
    });
    step(2, [&](std::vector<double>& v) {
      const double total = std::accumulate(v.begin(), v.end(), 0.0);
      for (auto& e : v) e *= mass / total;
    });
    double change = 0;
    for (std::size_t e = 0; e < p.size(); ++e) change = std::max(change, std::abs(p[e] - start[e]));
    if (change < 1e-16) break;
  }
  return p;
}

Settings tight(double blur) {
  Settings o;
  o.blur = blur;
  o.marginal_tol = 1e-10;
  o.max_iter = 100000;
  return o;
}

template <class T>
OtProblem<T> partial_problem(const Instance<T>& inst, double blur, double mass) {
  auto p = inst.problem(blur);
  p.marginals = Partial{mass};
  return p;
}

TEST(Partial, MatchesTheDenseProjectionsForUniformAndRandomWeights) {
  for (bool uniform : {true, false})
    for (double mass : {0.3, 0.7}) {
      Instance<double> inst(23, 17, 2, 5, uniform, false, 1.0);
      const auto o = tight(0.5);
      const auto r = sinkhorn(partial_problem(inst, o.blur, mass), o);
      ASSERT_TRUE(r.converged()) << r.report().marginal_error;
      const auto plan = r.dense_plan();
      const auto ref = dense_partial_plan(inst, o.blur * o.blur, mass);
      double err = 0, scale = 0;
      ASSERT_TRUE(std::all_of(ref.begin(), ref.end(), [](double v) { return std::isfinite(v); }));
      for (std::size_t k = 0; k < ref.size(); ++k) {
        err = std::max(err, std::abs(plan[k] - ref[k]));
        scale = std::max(scale, ref[k]);
      }
      EXPECT_LT(err, 1e-7 * scale) << "uniform " << uniform << " mass " << mass;
      double cost = 0;
      for (std::size_t i = 0; i < 23; ++i)
        for (std::size_t j = 0; j < 17; ++j) {
          const double dx = inst.x[2 * i] - inst.y[2 * j],
                       dy = inst.x[2 * i + 1] - inst.y[2 * j + 1];
          cost += ref[i * 17 + j] * (dx * dx + dy * dy);
        }
      EXPECT_NEAR(r.report().transport_cost, cost, 1e-7 * cost);
    }
}

TEST(Partial, PlanSatisfiesTheConstraintsAndMovesOnlyTheMass) {
  for (double mass : {0.05, 0.5, 0.95}) {
    Instance<double> inst(40, 30, 3, 11, false, true, 2.0);
    const auto o = tight(0.3);
    const auto r = sinkhorn(partial_problem(inst, o.blur, mass), o);
    ASSERT_TRUE(r.converged());
    const auto rows = r.row_marginal(), cols = r.col_marginal();
    const double total = std::accumulate(rows.begin(), rows.end(), 0.0);
    EXPECT_NEAR(total, mass, 1e-8);
    EXPECT_NEAR(std::accumulate(cols.begin(), cols.end(), 0.0), mass, 1e-8);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_LE(rows[i], inst.a[i] * (1 + 1e-8) + 1e-15) << i;
      // A saturated row is one whose multiplier is active: f_i < lambda.
      if (r.f()[i] < r.multiplier() - 1e-6) {
        EXPECT_NEAR(rows[i], inst.a[i], 1e-8) << i;
      }
    }
    for (std::size_t j = 0; j < cols.size(); ++j) {
      EXPECT_LE(cols[j], inst.b[j] * (1 + 1e-8) + 1e-15) << j;
      EXPECT_LE(r.g()[j], 1e-12);
      if (r.g()[j] < -1e-6) {
        EXPECT_NEAR(cols[j], inst.b[j], 1e-8) << j;
      }
    }
  }
}

TEST(Partial, FullMassOfEqualMeasuresIsBalancedOt) {
  for (bool uniform : {true, false}) {
    Instance<double> inst(30, 25, 2, 3, uniform);
    const auto o = tight(0.2);
    const auto partial = sinkhorn(partial_problem(inst, o.blur, 1.0), o);
    const auto balanced = sinkhorn(inst.problem(o.blur), o);
    ASSERT_TRUE(partial.converged() && balanced.converged());
    const auto p = partial.dense_plan(), q = balanced.dense_plan();
    for (std::size_t k = 0; k < p.size(); ++k) EXPECT_NEAR(p[k], q[k], 1e-8);
    EXPECT_NEAR(partial.loss(), balanced.loss(), 1e-7);
    EXPECT_NEAR(partial.report().transport_cost, balanced.report().transport_cost, 1e-7);
  }
}

TEST(Partial, Float32AgreesWithFloat64) {
  Instance<double> wide(50, 40, 3, 7, false, false, 1.0);
  Instance<float> narrow(50, 40, 3, 7, false, false, 1.0);
  Settings o;
  o.blur = 0.3;
  o.marginal_tol = 1e-4;
  const auto r64 = sinkhorn(partial_problem(wide, o.blur, 0.4), o);
  const auto r32 = sinkhorn(partial_problem(narrow, o.blur, 0.4), o);
  ASSERT_TRUE(r32.converged()) << r32.report().marginal_error;
  EXPECT_NEAR(r32.loss(), r64.loss(), 1e-3 * std::abs(r64.loss()));
  const auto p64 = r64.row_marginal();
  const auto p32 = r32.row_marginal();
  for (std::size_t i = 0; i < p64.size(); ++i) EXPECT_NEAR(p32[i], p64[i], 1e-3 * 0.4);
}

TEST(Partial, GeomLossScheduleRunsAlternatingIterations) {
  Instance<double> inst(20, 20, 2, 9);
  Settings o;
  o.blur = 0.5;
  o.iterations = 2000;
  const auto fixed = sinkhorn(partial_problem(inst, o.blur, 0.5), o);
  const auto conv = sinkhorn(partial_problem(inst, o.blur, 0.5), tight(0.5));
  EXPECT_EQ(fixed.report().iterations, 2000);
  EXPECT_NEAR(fixed.loss(), conv.loss(), 1e-9);
}

TEST(Partial, GradientsMatchFiniteDifferences) {
  Instance<double> inst(12, 10, 3, 19, false, false, 1.0);
  const double mass = 0.6;
  const auto o = tight(0.8);
  auto loss = [&](const Instance<double>& i) {
    return sinkhorn(partial_problem(i, o.blur, mass), o).loss();
  };
  const auto grad = sinkhorn(partial_problem(inst, o.blur, mass), o).gradients();
  const double h = 1e-5;
  for (std::size_t idx : {0ul, 4ul, 13ul}) {
    const double keep = inst.x[idx];
    inst.x[idx] = keep + h;
    const double up = loss(inst);
    inst.x[idx] = keep - h;
    const double down = loss(inst);
    inst.x[idx] = keep;
    EXPECT_NEAR(grad.x[idx], (up - down) / (2 * h), 1e-6) << "x[" << idx << "]";
  }
  for (std::size_t idx : {1ul, 7ul}) {
    const double keep = inst.y[idx];
    inst.y[idx] = keep + h;
    const double up = loss(inst);
    inst.y[idx] = keep - h;
    const double down = loss(inst);
    inst.y[idx] = keep;
    EXPECT_NEAR(grad.y[idx], (up - down) / (2 * h), 1e-6) << "y[" << idx << "]";
  }
  // Weights: the mass stays fixed (it is below both totals), so a lone weight may move.
  for (std::size_t idx : {2ul, 9ul}) {
    const double keep = inst.a[idx];
    inst.a[idx] = keep + h;
    const double up = loss(inst);
    inst.a[idx] = keep - h;
    const double down = loss(inst);
    inst.a[idx] = keep;
    EXPECT_NEAR(grad.a[idx], (up - down) / (2 * h), 1e-5) << "a[" << idx << "]";
    const double keep_b = inst.b[idx];
    inst.b[idx] = keep_b + h;
    const double up_b = loss(inst);
    inst.b[idx] = keep_b - h;
    const double down_b = loss(inst);
    inst.b[idx] = keep_b;
    EXPECT_NEAR(grad.b[idx], (up_b - down_b) / (2 * h), 1e-5) << "b[" << idx << "]";
  }
}

TEST(Partial, TheMultiscaleBackendMatchesTheDenseOneOnEveryQuantity) {
  // Normal clouds in the plane at blur 0.05, about a hundredth of their extent: the multiscale
  // plan keeps a small fraction of the pairs, and partial OT on it is the dense backend's.
  const Instance<double> inst(1500, 1300, 2, 31);
  const double mass = 0.4;
  const auto p = partial_problem(inst, 0.05, mass);
  SinkhornOptions o;
  o.marginal_tol = 1e-7;
  o.block_size = 16;
  const auto [dense, multi] =
      on_both_backends(o, [&](const SinkhornOptions& s) { return sinkhorn(p, s); });
  ASSERT_TRUE(dense.converged());
  ASSERT_TRUE(multi.converged());
  ASSERT_EQ(multi.report().backend, "multiscale");
  EXPECT_LT(multi.report().kept_fraction, 0.5);
  EXPECT_LE(multi.report().truncation_bound, p.epsilon * o.marginal_tol);
  EXPECT_NEAR(multi.loss(), dense.loss(), 1e-6 * std::abs(dense.loss()));
  EXPECT_NEAR(multi.report().transport_cost, dense.report().transport_cost,
              1e-6 * dense.report().transport_cost);
  EXPECT_NEAR(multi.multiplier(), dense.multiplier(), 1e-6 * std::abs(dense.multiplier()));
  // The plan moves the mass, within the caps, where the dense plan moves it.
  const auto rm = multi.row_marginal(), cm = multi.col_marginal();
  EXPECT_NEAR(std::accumulate(rm.begin(), rm.end(), 0.0), mass, 1e-6 * mass);
  EXPECT_LE(max_abs_diff(rm, dense.row_marginal()), 1e-5 * max_abs(inst.a));
  EXPECT_LE(max_abs_diff(cm, dense.col_marginal()), 1e-5 * max_abs(inst.b));
  EXPECT_LE(max_abs_diff(multi.barycentric_map(), dense.barycentric_map()), 1e-4);
  const auto gd = dense.gradients(), gm = multi.gradients();
  EXPECT_LE(max_abs_diff(gm.x, gd.x), 1e-4 * max_abs(gd.x));
  EXPECT_LE(max_abs_diff(gm.y, gd.y), 1e-4 * max_abs(gd.y));
  EXPECT_LE(max_abs_diff(gm.a, gd.a), 1e-4 * max_abs(gd.a));
  EXPECT_LE(max_abs_diff(gm.b, gd.b), 1e-4 * max_abs(gd.b));
}

TEST(Partial, MultiscaleFollowsTheLevelWhereTheMassHasTwoEqualDestinations) {
  // A tight cloud half of which may go to either of two equally far clusters, at a blur a
  // tenth of the clusters' width: a half step can move the level by many epsilons, so the
  // kept pairs must follow it within the step (they did not: the plan grew to 1e22 mass).
  // Which cluster takes how much is the iteration's slowest mode, so the test bounds the
  // plan after a budget rather than asking for convergence.
  std::mt19937 rng(7);
  std::normal_distribution<double> z(0, 0.01);
  const std::int64_t n = 500, m = 500;
  std::vector<double> x(2 * n), y(2 * m);
  for (auto& v : x) v = z(rng);
  for (std::int64_t j = 0; j < m; ++j) {
    y[static_cast<std::size_t>(2 * j)] = z(rng) + (j < m / 2 ? 1.0 : -1.0);
    y[static_cast<std::size_t>(2 * j + 1)] = z(rng);
  }
  auto p = testing::make_problem(x, n, y, m, 2, 0.001);
  p.marginals = Partial{0.5};
  SinkhornOptions o;
  o.max_iter = 2000;
  const auto [dense, multi] =
      on_both_backends(o, [&](const SinkhornOptions& s) { return sinkhorn(p, s); });
  ASSERT_TRUE(dense.converged());
  EXPECT_LT(multi.report().marginal_error, 1e-2);
  const auto rm = multi.row_marginal();
  EXPECT_NEAR(std::accumulate(rm.begin(), rm.end(), 0.0), 0.5, 1e-2 * 0.5);
  EXPECT_NEAR(multi.report().transport_cost, dense.report().transport_cost,
              1e-2 * dense.report().transport_cost);
}

template <class F>
void expect_invalid(F f, const std::string& argument) {
  try {
    f();
    ADD_FAILURE() << "no exception for " << argument;
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()).rfind(argument + ":", 0), 0u) << e.what();
  }
}

TEST(Partial, BadMassAndUnsupportedUsesAreErrorsNamingTheArgument) {
  Instance<double> inst(10, 8, 2, 1);
  // |a| = |b| = 1 here; with b halved the bound is min(|a|, |b|) = 0.5.
  for (double bad : {0.0, -0.1, 1.01, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()})
    expect_invalid([&] { sinkhorn(partial_problem(inst, 0.3, bad)); }, "mass");
  Instance<double> half = inst;
  for (auto& v : half.b) v *= 0.5;
  expect_invalid([&] { sinkhorn(partial_problem(half, 0.3, 0.6)); }, "mass");
  EXPECT_NO_THROW(sinkhorn(partial_problem(half, 0.3, 0.5)));
  expect_invalid([&] { sinkhorn_divergence(partial_problem(inst, 0.3, 0.5)); }, "mass");
  const auto r = sinkhorn(partial_problem(inst, 0.3, 0.5));
  std::vector<double> v(static_cast<std::size_t>(inst.n * inst.d), 1.0);
  expect_invalid([&] { hvp(r, MatrixView<const double>(v.data(), inst.n, inst.d)); }, "mass");
}

}  // namespace
}  // namespace birkhoff::transport
