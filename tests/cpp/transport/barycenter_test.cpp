// Free-support barycenters: symmetric clouds meet in the middle, one cloud is its own
// barycenter up to the blur, the errors.
#include "birkhoff/transport/barycenter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
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

}  // namespace
}  // namespace birkhoff::transport
