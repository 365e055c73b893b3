// Entropic Gromov-Wasserstein: the low-rank objective against the quartic sum over the dense
// plan, the invariance under rigid motions, restarts and the errors.
#include "birkhoff/transport/gromov.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::transport {
namespace {

using Vec = std::vector<double>;

Vec points(std::int64_t n, std::int64_t d, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  Vec v(static_cast<std::size_t>(n * d));
  for (auto& e : v) e = normal(gen);
  return v;
}

double sq(const Vec& z, std::int64_t d, std::int64_t i, std::int64_t k) {
  double s = 0;
  for (std::int64_t c = 0; c < d; ++c)
    s += (z[i * d + c] - z[k * d + c]) * (z[i * d + c] - z[k * d + c]);
  return s;
}

TEST(Gromov, ObjectiveIsTheQuarticSumOverThePlan) {
  const std::int64_t n = 9, m = 7;
  const Vec x = points(n, 3, 1), y = points(m, 2, 2);
  GromovOptions o;
  o.max_iter = 3;
  o.tol = 0;
  o.marginal_tol = 1e-12;
  const auto r = gromov_wasserstein({x.data(), n, 3}, {y.data(), m, 2}, {}, {}, 0.5, o, {}, {}, {},
                                    false, true);
  // POT's square loss: the marginal terms at a, b, the cross term over the plan.
  double value = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      double alpha = 0, beta = 0, cross = 0;
      for (std::int64_t k = 0; k < n; ++k) alpha += std::pow(sq(x, 3, i, k), 2) / n;
      for (std::int64_t l = 0; l < m; ++l) beta += std::pow(sq(y, 2, j, l), 2) / m;
      for (std::int64_t k = 0; k < n; ++k)
        for (std::int64_t l = 0; l < m; ++l)
          cross += sq(x, 3, i, k) * sq(y, 2, j, l) * r.plan[k * m + l];
      value += r.plan[i * m + j] * (alpha + beta - 2 * cross);
    }
  EXPECT_NEAR(r.loss, value, 1e-10 * std::abs(value));
  EXPECT_EQ(r.iterations, 3);
  EXPECT_LT(r.marginal_error, 1e-11);
}

TEST(Gromov, Float32InnerSolvesKeepTheObjectiveAndThePlan) {
  // The quartic sum over the float32 plan (dense, in float64) is the reported objective, and
  // both are the float64 run's within the inner tolerance.
  const std::int64_t n = 60, m = 50;
  const Vec x = points(n, 3, 11), y = points(m, 2, 12);
  GromovOptions o;
  o.max_iter = 4;
  o.tol = 0;
  o.marginal_tol = 1e-4;
  const auto wide = gromov_wasserstein({x.data(), n, 3}, {y.data(), m, 2}, {}, {}, 10.0, o, {}, {},
                                       {}, false, true);
  o.dtype = InnerDtype::Float32;
  const auto narrow = gromov_wasserstein({x.data(), n, 3}, {y.data(), m, 2}, {}, {}, 10.0, o, {},
                                         {}, {}, false, true);
  EXPECT_EQ(wide.working_dtype, "float64");
  EXPECT_EQ(narrow.working_dtype, "float32");
  EXPECT_LE(narrow.marginal_error, 1e-4);
  EXPECT_NEAR(narrow.loss, wide.loss, 1e-4 * wide.loss);
  double value = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t k = 0; k < n; ++k)
        for (std::int64_t l = 0; l < m; ++l)
          value += std::pow(sq(x, 3, i, k) - sq(y, 2, j, l), 2) * narrow.plan[i * m + j] *
                   narrow.plan[k * m + l];
  // The plan's marginals are a, b to 1e-4, which the marginal terms inherit.
  EXPECT_NEAR(narrow.loss, value, 5e-4 * value);
  for (std::size_t e = 0; e < wide.plan.size(); ++e)
    EXPECT_NEAR(narrow.plan[e], wide.plan[e], 1e-3 / static_cast<double>(n * m));
}

TEST(Gromov, RigidMotionsChangeNothing) {
  const std::int64_t n = 20, m = 15;
  const Vec x = points(n, 2, 3), y = points(m, 2, 4);
  Vec moved(y.size());
  const double c = std::cos(0.7), s = std::sin(0.7);
  for (std::int64_t j = 0; j < m; ++j) {
    moved[2 * j] = c * y[2 * j] - s * y[2 * j + 1] + 5;
    moved[2 * j + 1] = s * y[2 * j] + c * y[2 * j + 1] - 2;
  }
  GromovOptions o;
  o.max_iter = 10;
  o.tol = 0;
  o.marginal_tol = 1e-11;
  const auto r1 = gromov_wasserstein({x.data(), n, 2}, {y.data(), m, 2}, {}, {}, 0.3, o);
  const auto r2 = gromov_wasserstein({x.data(), n, 2}, {moved.data(), m, 2}, {}, {}, 0.3, o);
  EXPECT_NEAR(r1.loss, r2.loss, 1e-8 * r1.loss);
}

TEST(Gromov, RestartsKeepTheLowestObjective) {
  const std::int64_t n = 25;
  const Vec x = points(n, 2, 5), y = points(n, 3, 6);
  GromovOptions o;
  o.n_init = 3;
  o.seed = 3;
  o.max_iter = 5;
  const auto r = gromov_wasserstein({x.data(), n, 2}, {y.data(), n, 3}, {}, {}, 1.0, o);
  ASSERT_EQ(r.losses.size(), 3u);
  for (double l : r.losses) EXPECT_LE(r.loss, l);
  EXPECT_EQ(r.loss, r.losses[static_cast<std::size_t>(r.best_init)]);
}

TEST(Gromov, BadInputsNameTheArgument) {
  const Vec x = points(4, 2, 7), y = points(3, 2, 8);
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const MatrixView<const double> xv{x.data(), 4, 2}, yv{y.data(), 3, 2};
  EXPECT_EQ(message([&] { gromov_wasserstein(xv, yv, {}, {}, 0.0); }).rfind("epsilon:", 0), 0u);
  GromovOptions o;
  o.alpha = 1.5;
  EXPECT_EQ(message([&] { gromov_wasserstein(xv, yv, {}, {}, 1.0, o, xv, yv); }).rfind("alpha:", 0),
            0u);
  EXPECT_EQ(
      message([&] { gromov_wasserstein(xv, yv, {}, {}, 1.0, {}, xv); }).rfind("features_y:", 0),
      0u);
  const Vec t(12, 1.0 / 12);
  EXPECT_EQ(message([&] {
              gromov_wasserstein(xv, yv, {}, {}, 1.0, {}, {}, {}, {t.data(), 3, 4});
            }).rfind("init:", 0),
            0u);
}

}  // namespace
}  // namespace birkhoff::transport
