// Sliced Wasserstein: the 1-D case against the sorted pairing, the potentials' duality, the
// gradients against finite differences, max-sliced, thread independence and the errors.
#include "birkhoff/transport/sliced.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::transport {
namespace {

using Vec = std::vector<double>;

Vec random_points(std::int64_t n, std::int64_t d, unsigned seed, double shift = 0) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  Vec v(static_cast<std::size_t>(n * d));
  for (auto& e : v) e = normal(gen) + shift;
  return v;
}

MatrixView<const double> view(const Vec& v, std::int64_t rows, std::int64_t cols) {
  return {v.data(), rows, cols};
}

SlicedResult<double> run(const Vec& x, const Vec& y, std::int64_t d, const SlicedOptions& o,
                         const Vec& directions = {}, const Vec& a = {}, const Vec& b = {},
                         bool gradients = true) {
  const auto n = static_cast<std::int64_t>(x.size()) / d;
  const auto m = static_cast<std::int64_t>(y.size()) / d;
  MatrixView<const double> dirs;
  if (!directions.empty())
    dirs = view(directions, d, static_cast<std::int64_t>(directions.size()) / d);
  return sliced_wasserstein<double>(view(x, n, d), view(y, m, d), a, b, o, dirs, gradients);
}

TEST(Sliced, OneDimensionIsTheSortedPairing) {
  Vec x = random_points(40, 1, 1), y = random_points(40, 1, 2, 0.5);
  for (double p : {1.0, 1.5, 2.0, 3.0}) {
    SlicedOptions o;
    o.p = p;
    const auto r = run(x, y, 1, o, {1.0, -1.0});
    Vec xs = x, ys = y;
    std::sort(xs.begin(), xs.end());
    std::sort(ys.begin(), ys.end());
    double w = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) w += std::pow(std::abs(xs[i] - ys[i]), p) / 40;
    EXPECT_NEAR(r.projected[0], w, 1e-12 * w) << p;
    EXPECT_NEAR(r.projected[1], w, 1e-12 * w) << p;
    EXPECT_NEAR(r.loss, std::pow(w, 1 / p), 1e-12) << p;
  }
}

TEST(Sliced, RandomDirectionsAreUnitAndFollowTheSeed) {
  const auto u = random_directions<double>(5, 7, 3), v = random_directions<double>(5, 7, 3),
             w = random_directions<double>(5, 7, 4);
  EXPECT_EQ(u, v);
  EXPECT_NE(u, w);
  for (int l = 0; l < 7; ++l) {
    double norm = 0;
    for (int k = 0; k < 5; ++k) norm += u[k * 7 + l] * u[k * 7 + l];
    EXPECT_NEAR(norm, 1, 1e-12);
  }
}

// On one direction the weight gradients are the 1-D dual potentials (times d loss / d W):
// feasible (f_i + g_j <= c_ij), tight in value (<a, f> + <b, g> = W), as the tree promises.
RC_GTEST_PROP(SlicedProperties, PotentialsAreAnOptimalDual, ()) {
  const auto n = *rc::gen::inRange<std::int64_t>(1, 12);
  const auto m = *rc::gen::inRange<std::int64_t>(1, 12);
  const double p = *rc::gen::element(1.0, 1.5, 2.0, 3.0);
  const auto seed = *rc::gen::inRange<unsigned>(0, 1000);
  const Vec x = random_points(n, 2, seed), y = random_points(m, 2, seed + 1, 0.3);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> unif(0, 1);
  Vec a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(m));
  for (auto& e : a) e = *rc::gen::element(0.0, 1.0) + unif(gen);  // some weights near 0
  for (auto& e : b) e = unif(gen) + 0.1;
  double sa = 0, sb = 0;
  for (double e : a) sa += e;
  for (double e : b) sb += e;
  for (auto& e : a) e /= sa;
  for (auto& e : b) e /= sb;
  SlicedOptions o;
  o.p = p;
  const Vec dir = {0.6, -0.8};
  const auto r = run(x, y, 2, o, dir, a, b);
  const double w = r.projected[0];
  RC_PRE(w > 1e-9);
  const double factor = r.loss / (p * w);
  double value = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double f = r.grad_a[i] / factor;
    value += a[i] * f;
    const double si = 0.6 * x[2 * i] - 0.8 * x[2 * i + 1];
    for (std::int64_t j = 0; j < m; ++j) {
      const double g = r.grad_b[j] / factor;
      const double tj = 0.6 * y[2 * j] - 0.8 * y[2 * j + 1];
      RC_ASSERT(f + g <= std::pow(std::abs(si - tj), p) + 1e-9 * (1 + w));
    }
  }
  for (std::int64_t j = 0; j < m; ++j) value += b[j] * r.grad_b[j] / factor;
  RC_ASSERT(std::abs(value - w) <= 1e-9 * (1 + w));
}

TEST(Sliced, GradientsMatchFiniteDifferences) {
  const std::int64_t n = 15, m = 11, d = 3;
  const Vec x = random_points(n, d, 5), y = random_points(m, d, 6, 0.4);
  Vec a(n), b(m);
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> unif(0.5, 1.5);
  for (auto& e : a) e = unif(gen);
  for (auto& e : b) e = unif(gen);
  double sa = 0, sb = 0;
  for (double e : a) sa += e;
  for (double e : b) sb += e;
  for (auto& e : a) e /= sa;
  for (auto& e : b) e /= sb;
  for (bool max_sliced : {false, true}) {
    for (double p : {1.0, 2.0, 2.5}) {
      SlicedOptions o;
      o.p = p;
      o.n_projections = 9;
      o.max_sliced = max_sliced;
      const auto r = run(x, y, d, o, {}, a, b);
      const double h = 1e-6;
      auto loss_at = [&](Vec xx, Vec yy) { return run(xx, yy, d, o, {}, a, b, false).loss; };
      for (std::int64_t e = 0; e < n * d; e += 4) {
        Vec xp = x, xm = x;
        xp[e] += h;
        xm[e] -= h;
        EXPECT_NEAR((loss_at(xp, y) - loss_at(xm, y)) / (2 * h), r.grad_x[e], 1e-6)
            << "x " << e << " p " << p << " max " << max_sliced;
      }
      for (std::int64_t e = 0; e < m * d; e += 4) {
        Vec yp = y, ym = y;
        yp[e] += h;
        ym[e] -= h;
        EXPECT_NEAR((loss_at(x, yp) - loss_at(x, ym)) / (2 * h), r.grad_y[e], 1e-6)
            << "y " << e << " p " << p << " max " << max_sliced;
      }
    }
  }
}

TEST(Sliced, MaxSlicedIsTheLargestProjectedCost) {
  const Vec x = random_points(30, 4, 8), y = random_points(25, 4, 9, 0.2);
  SlicedOptions o;
  o.n_projections = 20;
  const auto mean = run(x, y, 4, o);
  o.max_sliced = true;
  const auto top = run(x, y, 4, o);
  EXPECT_EQ(mean.projected, top.projected);
  const double largest = *std::max_element(mean.projected.begin(), mean.projected.end());
  EXPECT_DOUBLE_EQ(top.loss, std::sqrt(largest));
  EXPECT_GT(top.loss, mean.loss);
}

TEST(Sliced, ThreadCountDoesNotChangeTheBits) {
  const Vec x = random_points(500, 3, 10), y = random_points(400, 3, 11, 0.1);
  SlicedOptions o;
  o.n_projections = 37;
  o.num_threads = 1;
  const auto one = run(x, y, 3, o);
  o.num_threads = 3;
  const auto three = run(x, y, 3, o);
  EXPECT_EQ(one.loss, three.loss);
  EXPECT_EQ(one.grad_x, three.grad_x);
  EXPECT_EQ(one.grad_b, three.grad_b);
}

TEST(Sliced, IdenticalCloudsAreAtZeroWithZeroGradient) {
  const Vec x = random_points(20, 2, 12);
  const auto r = run(x, x, 2, SlicedOptions{});
  EXPECT_EQ(r.loss, 0);
  for (double g : r.grad_x) EXPECT_EQ(g, 0);
}

TEST(Sliced, Float32AgreesWithFloat64) {
  const Vec x = random_points(200, 3, 13), y = random_points(150, 3, 14, 0.3);
  const std::vector<float> xf(x.begin(), x.end()), yf(y.begin(), y.end());
  const auto r64 = run(x, y, 3, SlicedOptions{});
  const auto r32 =
      sliced_wasserstein<float>({xf.data(), 200, 3}, {yf.data(), 150, 3}, {}, {}, SlicedOptions{});
  EXPECT_NEAR(r32.loss, r64.loss, 1e-5 * r64.loss);
}

TEST(Sliced, BadInputsNameTheArgument) {
  const Vec x = random_points(5, 2, 15), y = random_points(4, 2, 16);
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SlicedOptions o;
  const Vec three = {1.0, 0.0, 0.5};  // (3, 1): one direction in R^3 for points in R^2
  EXPECT_EQ(message([&] {
              sliced_wasserstein<double>(view(x, 5, 2), view(y, 4, 2), {}, {}, o,
                                         view(three, 3, 1));
            }).rfind("projections:", 0),
            0u);
  o.p = 0.5;
  EXPECT_EQ(message([&] { run(x, y, 2, o); }).rfind("p:", 0), 0u);
  o = {};
  o.n_projections = 0;
  EXPECT_EQ(message([&] { run(x, y, 2, o); }).rfind("n_projections:", 0), 0u);
  o = {};
  EXPECT_EQ(message([&] { run(x, y, 2, o, {}, {1, 1, 1, 1, 1}, {}); }).rfind("b:", 0), 0u);
  EXPECT_EQ(message([&] { run(x, y, 2, o, {}, {1, 1}, {}); }).rfind("a:", 0), 0u);
  Vec bad = x;
  bad[3] = std::nan("");
  EXPECT_EQ(message([&] { run(bad, y, 2, o); }).rfind("x:", 0), 0u);
  o.p = 400;
  const Vec far = random_points(4, 2, 17, 1e3);
  EXPECT_EQ(message([&] { run(x, far, 2, o); }).rfind("p:", 0), 0u);
}

}  // namespace
}  // namespace birkhoff::transport
