// Free-support barycenters: symmetric clouds meet in the middle, one cloud is its own
// barycenter up to the blur, the errors. Fixed-support ones: one measure is its own debiased
// barycenter, mirrored measures give a mirrored one, the errors.
#include "birkhoff/transport/barycenter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::transport {
namespace {

using Vec = std::vector<double>;

Vec grid(double shift) {  // a 6 x 6 grid of spacing 0.2, moved by (shift, 0)
  Vec v;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) v.insert(v.end(), {0.2 * i + shift, 0.2 * j});
  return v;
}

TEST(Barycenter, TranslatedCopiesMeetAtTheWeightedShift) {
  // Between a grid and its translate by t, the barycenter with weights (1 - w, w) is the grid
  // translated by w t (translations commute with the entropic plans).
  const Vec y0 = grid(0), y1 = grid(2);
  const MatrixView<const double> clouds[] = {{y0.data(), 36, 2}, {y1.data(), 36, 2}};
  const double weights[] = {3, 1};
  BarycenterOptions o;
  o.tol = 1e-12;
  o.max_iter = 300;
  o.marginal_tol = 1e-10;
  const auto r = barycenter<double>(clouds, {}, weights, {y0.data(), 36, 2}, {}, 0.01, o);
  ASSERT_TRUE(r.converged);
  const auto shifted = barycenter<double>(clouds, {}, weights, {y1.data(), 36, 2}, {}, 0.01, o);
  double mean_x = 0, mean_y = 0;
  for (int i = 0; i < 36; ++i) mean_x += r.points[2 * i] / 36, mean_y += r.points[2 * i + 1] / 36;
  EXPECT_NEAR(mean_x, 0.5 + 0.25 * 2, 1e-6);
  EXPECT_NEAR(mean_y, 0.5, 1e-6);
  EXPECT_NEAR(r.loss, shifted.loss, 1e-6);
}

TEST(Barycenter, OneCloudIsItsOwnBarycenterUpToTheBlur) {
  const Vec y = grid(0);
  const MatrixView<const double> clouds[] = {{y.data(), 36, 2}};
  const auto r = barycenter<double>(clouds, {}, {}, {y.data(), 36, 2}, {}, 1e-4);
  for (std::size_t e = 0; e < y.size(); ++e) EXPECT_NEAR(r.points[e], y[e], 1e-3);
}

TEST(Barycenter, BadInputsNameTheArgument) {
  const Vec y = grid(0), z(9, 0.0);
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const MatrixView<const double> clouds[] = {{y.data(), 36, 2}, {z.data(), 3, 3}};
  const MatrixView<const double> init{y.data(), 36, 2};
  EXPECT_EQ(message([&] {
              barycenter<double>({clouds, 1}, {}, {}, init, {}, 0.0);
            }).rfind("epsilon:", 0),
            0u);
  EXPECT_EQ(
      message([&] { barycenter<double>(clouds, {}, {}, init, {}, 0.1); }).rfind("clouds[1]:", 0),
      0u);
  const double negative[] = {-1.0};
  EXPECT_EQ(message([&] {
              barycenter<double>({clouds, 1}, {}, negative, init, {}, 0.1);
            }).rfind("weights:", 0),
            0u);
  EXPECT_EQ(message([&] { barycenter<double>({}, {}, {}, init, {}, 0.1); }).rfind("clouds:", 0),
            0u);
}

TEST(FixedBarycenter, OneMeasureIsItsOwnDebiasedBarycenter) {
  // S_eps(q, a) >= 0 with equality at q = a only, so the debiased barycenter of one measure on
  // its own support is the measure; the entropic one is blurred and spreads mass outwards.
  const Vec y = grid(0);
  Vec a(36);
  for (int i = 0; i < 36; ++i) a[static_cast<std::size_t>(i)] = (1.0 + i % 5) / 106.0;
  const MatrixView<const double> clouds[] = {{y.data(), 36, 2}};
  const std::span<const double> weights[] = {a};
  FixedBarycenterOptions o;
  o.tol = 1e-10;
  const auto r =
      fixed_support_barycenter<double>({y.data(), 36, 2}, clouds, weights, {}, 0.01, Cost(), o);
  ASSERT_TRUE(r.converged);
  double mass = 0;
  for (int i = 0; i < 36; ++i) {
    EXPECT_NEAR(r.weights[static_cast<std::size_t>(i)], a[static_cast<std::size_t>(i)], 1e-6);
    mass += r.weights[static_cast<std::size_t>(i)];
  }
  EXPECT_NEAR(mass, 1.0, 1e-8);
  EXPECT_NEAR(r.loss, 0.0, 1e-8);
  o.debias = false;
  const auto plain =
      fixed_support_barycenter<double>({y.data(), 36, 2}, clouds, weights, {}, 0.01, Cost(), o);
  double gap = 0;
  for (int i = 0; i < 36; ++i)
    gap += std::abs(plain.weights[static_cast<std::size_t>(i)] - a[static_cast<std::size_t>(i)]);
  EXPECT_GT(gap, 1e-3);
}

TEST(FixedBarycenter, MirrorMeasuresGiveAMirrorBarycenterBetweenThem) {
  // Two clusters mirrored about x = 0.5 with equal weights: the barycenter on a symmetric line
  // is symmetric, and under the squared cost it puts its mass in the middle.
  Vec line, left, right;
  for (int i = 0; i <= 40; ++i) line.insert(line.end(), {i / 40.0, 0.0});
  for (int i = 0; i < 5; ++i) {
    left.insert(left.end(), {0.05 + 0.01 * i, 0.0});
    right.insert(right.end(), {0.95 - 0.01 * i, 0.0});
  }
  const MatrixView<const double> clouds[] = {{left.data(), 5, 2}, {right.data(), 5, 2}};
  for (const Cost& cost : {Cost(), Cost::named("euclidean", std::nullopt, 1.0)}) {
    FixedBarycenterOptions o;
    o.tol = 1e-9;
    o.max_iter = 20000;
    const double eps = cost->exponent() == 1 ? 0.02 : 0.002;
    const auto r =
        fixed_support_barycenter<double>({line.data(), 41, 2}, clouds, {}, {}, eps, cost, o);
    ASSERT_TRUE(r.converged) << r.marginal_error;
    double middle = 0;
    for (int i = 0; i <= 40; ++i) {
      EXPECT_NEAR(r.weights[static_cast<std::size_t>(i)],
                  r.weights[static_cast<std::size_t>(40 - i)], 1e-6);
      if (std::abs(i / 40.0 - 0.5) <= 0.2) middle += r.weights[static_cast<std::size_t>(i)];
    }
    if (cost->exponent() == 2) {  // W1's barycenters are not unique
      EXPECT_GT(middle, 0.9);
    }
    EXPECT_NEAR(r.losses[0], r.losses[1], 1e-6);
  }
}

TEST(FixedBarycenter, BadInputsNameTheArgument) {
  const Vec y = grid(0), z(9, 0.0);
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const MatrixView<const double> clouds[] = {{y.data(), 36, 2}, {z.data(), 3, 3}};
  const MatrixView<const double> support{y.data(), 36, 2}, flat{z.data(), 3, 3};
  auto call = [&](MatrixView<const double> s, std::span<const MatrixView<const double>> c,
                  double eps, FixedBarycenterOptions o = {}) {
    return message([&] { fixed_support_barycenter<double>(s, c, {}, {}, eps, Cost(), o); });
  };
  EXPECT_EQ(call(support, {clouds, 1}, 0.0).rfind("epsilon:", 0), 0u);
  EXPECT_EQ(call(support, clouds, 0.1).rfind("clouds[1]:", 0), 0u);
  EXPECT_EQ(call(flat, {clouds, 1}, 0.1).rfind("support:", 0), 0u);
  EXPECT_EQ(call(support, {}, 0.1).rfind("clouds:", 0), 0u);
  FixedBarycenterOptions o;
  o.max_iter = 0;
  EXPECT_EQ(call(support, {clouds, 1}, 0.1, o).rfind("max_iter:", 0), 0u);
  Vec nan = y;
  nan[3] = std::nan("");
  EXPECT_EQ(call({nan.data(), 36, 2}, {clouds, 1}, 0.1).rfind("support:", 0), 0u);
}

}  // namespace
}  // namespace birkhoff::transport
