// Block-local float32 logits of the multiscale backend's float64 solves: each pass is within
// its rounding floor of the float64 pass (far below what float32 with global coordinates
// leaves), and a solve that iterates in them finishes with the float64 answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/block_order.hpp"
#include "transport/block_sparse.hpp"
#include "transport/blocks.hpp"
#include "transport/fixtures.hpp"
#include "transport/state.hpp"

namespace birkhoff::transport {
namespace {

// The largest |a_i - b_i| / eps.
double worst(const std::vector<double>& a, const std::vector<double>& b, double eps) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]) / eps);
  return e;
}

struct Setting {
  std::int64_t d;
  double blur;
};

TEST(BlockLocal, PassesStayWithinTheirRoundingFloorFarBelowGlobalFloat32) {
  // Potentials near a solution (60 iterations after annealing); the soft c-transform of the x
  // rows in block-local float32, in float64 and in float32 with the clouds' own coordinates.
  for (const Setting s : {Setting{3, 0.01}, Setting{2, 0.001}}) {
    const std::int64_t n = 3000, m = 2800, d = s.d;
    const auto x = testing::uniform_points(n, d, 0.0, 1), y = testing::uniform_points(m, d, 0.2, 2);
    const double eps = s.blur * s.blur;
    auto p = testing::make_problem(x, n, y, m, d, s.blur);
    SinkhornOptions o;
    o.backend = Backend::Multiscale;
    o.max_iter = 60;
    const auto sol = sinkhorn(p, o);
    const testing::BlockOrdered o32(p.geometry, 32);
    const auto& xside = o32.x;
    const auto f = o32.of_x(sol.f()), g = o32.of_y(sol.g());
    const auto fh = detail::shifted<double>(f, xside.sqnorm);
    const auto gh = detail::shifted<double>(g, o32.y.sqnorm);
    detail::BlockSparsePasses<double> exact(xside, o32.y, o32.bx, o32.by, 1.0, 1e-5, 2);
    detail::BlockSparsePasses<double> local(xside, o32.y, o32.bx, o32.by, 1.0, 1e-5, 2);
    local.set_local_float32(true);
    detail::LseOut<double> scratch;
    std::vector<double> want, got;
    detail::softmin<double>(exact, detail::Axis::X, detail::Axis::Y, fh, gh, eps, scratch, want);
    detail::softmin<double>(local, detail::Axis::X, detail::Axis::Y, fh, gh, eps, scratch, got);
    ASSERT_TRUE(local.approximate());  // the lists keep under a quarter of the pairs
    const double floor = local.rounding_floor();
    EXPECT_GT(floor, 0.0);
    EXPECT_LE(worst(got, want, eps), floor) << "d " << d;
    // float32 with the clouds' coordinates, its potentials rounded: the same pass.
    const PointCloud<float> narrow = o32.geometry.cast<float>();
    const auto wa32 = detail::make_weights(std::span<const float>(), n);
    const auto wb32 = detail::make_weights(std::span<const float>(), m);
    const auto x32 = detail::x_side(narrow, wa32), y32 = detail::y_side(narrow, wb32);
    const auto fh32 = detail::shifted<float>(std::vector<float>(f.begin(), f.end()), x32.sqnorm);
    const auto gh32 = detail::shifted<float>(std::vector<float>(g.begin(), g.end()), y32.sqnorm);
    detail::DensePasses<float> global(x32, y32, 2.0, 2);
    detail::LseOut<float> scratch32;
    std::vector<float> plain;
    detail::softmin<float>(global, detail::Axis::X, detail::Axis::Y, fh32, gh32, eps, scratch32,
                           plain);
    // Compare the standard potentials: the two frames fold different row terms.
    std::vector<double> plain_f(plain.size()), local_f(got.size()), want_f(want.size());
    for (std::int64_t i = 0; i < n; ++i) {
      const auto si = static_cast<std::size_t>(i);
      plain_f[si] = static_cast<double>(plain[si]) + static_cast<double>(x32.sqnorm[si]);
      local_f[si] = got[si] + xside.sqnorm[si];
      want_f[si] = want[si] + xside.sqnorm[si];
    }
    EXPECT_LT(5 * worst(local_f, want_f, eps), worst(plain_f, want_f, eps)) << "d " << d;
  }
}

TEST(BlockLocal, Float64SolvesIterateInBlockLocalFloat32AndFinishInFloat64) {
  // The default float64 multiscale solve runs its final iterations on block-local float32
  // logits, then float64 iterations to a tight tolerance: the dense backend's answer.
  const std::int64_t n = 2500, m = 2300, d = 3;
  const auto x = testing::uniform_points(n, d, 0.0, 3), y = testing::uniform_points(m, d, 0.2, 4);
  const auto p = testing::make_problem(x, n, y, m, d, 0.02);
  SinkhornOptions o;
  o.marginal_tol = 1e-6;
  o.backend = Backend::Multiscale;
  const auto ms = sinkhorn(p, o);
  o.backend = Backend::Dense;
  const auto dense = sinkhorn(p, o);
  ASSERT_TRUE(ms.converged());
  ASSERT_TRUE(dense.converged());
  const auto& levels = ms.report().levels;
  ASSERT_GE(levels.size(), 2u);
  EXPECT_EQ(levels[levels.size() - 2].name, "final, block-local float32");
  EXPECT_GT(levels[levels.size() - 2].iterations, 10);
  EXPECT_EQ(levels.back().name, "final");
  EXPECT_GE(levels.back().iterations, 1);
  EXPECT_EQ(ms.report().working_dtype, "float64");
  EXPECT_LE(ms.report().marginal_error, 1e-6);
  EXPECT_NEAR(ms.loss(), dense.loss(), 1e-7 * std::abs(dense.loss()));
  EXPECT_NEAR(ms.report().transport_cost, dense.report().transport_cost,
              1e-6 * std::abs(dense.report().transport_cost));
}

TEST(BlockLocal, Float32FarBelowItsFloorKeepsTheFloat64TransportCost) {
  // float32 points at blur 0.001 of the diameter: below what float32 logits resolve, so the
  // float64 problem of the same numbers is solved, on block-local float32 passes first. A
  // translated copy keeps Sinkhorn fast at this blur (two samples need ~10^4 iterations).
  const std::int64_t n = 1500, m = 1500, d = 2;
  const auto x = testing::uniform_points(n, d, 0.0, 5);
  std::vector<double> y(x);
  for (double& v : y) v += 0.1;
  const std::vector<float> xf(x.begin(), x.end()), yf(y.begin(), y.end());
  const double blur = 0.001 * std::sqrt(2.0) * 1.1;  // 0.001 of the diameter
  OtProblem<float> p32;
  p32.geometry = PointCloud<float>({xf.data(), n, d}, {yf.data(), m, d});
  p32.epsilon = blur * blur;
  std::vector<double> xw(xf.begin(), xf.end()), yw(yf.begin(), yf.end());
  const auto p64 = testing::make_problem(xw, n, yw, m, d, blur);
  SinkhornOptions o;
  o.backend = Backend::Multiscale;
  o.block_size = 16;
  o.marginal_tol = 1e-5;  // two solves to 1e-4 may leave costs 1e-4 apart
  const auto r32 = sinkhorn(p32, o);
  o.backend = Backend::Dense;
  const auto r64 = sinkhorn(p64, o);
  ASSERT_TRUE(r32.converged());
  ASSERT_TRUE(r64.converged());
  EXPECT_EQ(r32.report().working_dtype.rfind("float64 (epsilon ", 0), 0u)
      << r32.report().working_dtype;
  const auto& levels = r32.report().levels;
  EXPECT_TRUE(std::any_of(levels.begin(), levels.end(), [](const LevelReport& l) {
    return l.name == "final, block-local float32" && l.iterations > 0;
  }));
  EXPECT_NEAR(r32.report().transport_cost, r64.report().transport_cost,
              1e-4 * std::abs(r64.report().transport_cost));
}

}  // namespace
}  // namespace birkhoff::transport
