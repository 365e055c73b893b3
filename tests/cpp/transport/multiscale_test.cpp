// The converge schedule and the multiscale backend: converged by default, the same answer as
// the dense backend, and a truncation bound that bounds.
#include "transport/multiscale.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/blocks.hpp"
#include "transport/fixtures.hpp"
#include "transport/state.hpp"

namespace birkhoff::transport {
namespace {

using testing::Settings;

// Points in [0, 1]^d, uniform or in a few tight clusters; the target shifted by 0.2.
std::vector<double> cloud(std::int64_t n, std::int64_t d, bool clustered, double shift,
                          unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> z(0, 0.03);
  std::vector<double> centres(static_cast<std::size_t>(5 * d));
  for (double& c : centres) c = u(rng);
  std::vector<double> p(static_cast<std::size_t>(n * d));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < d; ++k)
      p[static_cast<std::size_t>(i * d + k)] =
          shift +
          (clustered ? centres[static_cast<std::size_t>((i % 5) * d + k)] + z(rng) : u(rng));
  return p;
}

std::vector<double> random_weights(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.2, 1.0);
  std::vector<double> w(static_cast<std::size_t>(n));
  double s = 0;
  for (double& v : w) s += (v = u(rng));
  for (double& v : w) v /= s;
  return w;
}

double max_diff_up_to_constant(std::span<const double> u, std::span<const double> v) {
  double shift = 0;
  for (std::size_t i = 0; i < u.size(); ++i) shift += u[i] - v[i];
  shift /= static_cast<double>(u.size());
  double e = 0;
  for (std::size_t i = 0; i < u.size(); ++i) e = std::max(e, std::abs(u[i] - v[i] - shift));
  return e;
}

struct Case {
  std::int64_t d;
  bool clustered, uniform;
  double blur;  // relative to the diameter
};

class MultiscaleBackend : public ::testing::TestWithParam<Case> {};

TEST_P(MultiscaleBackend, ConvergesToTheDenseBackendsAnswerWithinItsBound) {
  const Case c = GetParam();
  const std::int64_t n = 900, m = 800;
  const auto x = cloud(n, c.d, c.clustered, 0.0, 1);
  const auto y = cloud(m, c.d, c.clustered, 0.2, 2);
  const auto a = random_weights(n, 3), b = random_weights(m, 4);
  auto p = testing::make_problem(x, n, y, m, c.d);
  if (!c.uniform) {
    p.a = a;
    p.b = b;
  }
  const double diameter = p.geometry.diameter();
  p.epsilon = (c.blur * diameter) * (c.blur * diameter);
  SinkhornOptions o;
  o.marginal_tol = 1e-7;
  o.block_size = 16;
  o.backend = Backend::Dense;
  const auto dense = sinkhorn(p, o);
  o.backend = Backend::Multiscale;
  const auto multi = sinkhorn(p, o);
  ASSERT_TRUE(dense.converged()) << dense.report().marginal_error;
  ASSERT_TRUE(multi.converged()) << multi.report().marginal_error;
  EXPECT_EQ(multi.report().backend, "multiscale");
  EXPECT_LE(multi.report().kept_fraction, 1.0);
  const double bound = multi.report().truncation_bound;
  // Both are converged to 1e-7 in the marginals: on spread-out points the potentials agree to
  // that times epsilon, plus the truncation bound. (Between clusters far apart in units of
  // epsilon the potentials are barely determined: there only the values are compared.)
  if (!c.clustered) {
    const double tol = bound + 1e-5 * p.epsilon + 1e-12;
    EXPECT_LE(max_diff_up_to_constant(multi.f(), dense.f()), tol);
    EXPECT_LE(max_diff_up_to_constant(multi.g(), dense.g()), tol);
  }
  EXPECT_NEAR(multi.loss(), dense.loss(), 1e-5 * std::abs(dense.loss()) + bound);
  EXPECT_NEAR(multi.report().transport_cost, dense.report().transport_cost,
              1e-4 * std::abs(dense.report().transport_cost));
}

INSTANTIATE_TEST_SUITE_P(Settings, MultiscaleBackend,
                         ::testing::Values(Case{1, false, true, 0.05}, Case{1, true, false, 0.01},
                                           Case{2, false, false, 0.3}, Case{2, true, true, 0.02},
                                           Case{3, false, true, 0.05}, Case{3, true, false, 0.01},
                                           Case{3, false, false, 0.005}),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           const Case& c = param_info.param;
                           std::string name = "d";
                           name += std::to_string(c.d);
                           name += c.clustered ? "Clustered" : "Uniform";
                           name += c.uniform ? "UniformWeights" : "RandomWeights";
                           name += "Blur";
                           name += std::to_string(static_cast<int>(c.blur * 1000));
                           return name;
                         });

TEST(MultiscaleBound, BoundsTheErrorOfEveryTruncatedUpdate) {
  // Random clouds and potentials near a solution: the truncated soft c-transform differs from
  // the exact one by at most the certified bound, for every point.
  for (unsigned seed = 0; seed < 12; ++seed) {
    const std::int64_t d = 1 + seed % 3, n = 500 + 37 * seed, m = 450 + 29 * seed;
    const auto x = cloud(n, d, seed % 2 == 1, 0.0, seed);
    const auto y = cloud(m, d, seed % 2 == 1, 0.1, seed + 100);
    auto p = testing::make_problem(x, n, y, m, d);
    p.epsilon = std::pow(0.02 + 0.01 * (seed % 4), 2);
    SinkhornOptions o;
    o.backend = Backend::Dense;
    o.max_iter = 5 + static_cast<int>(seed);  // not converged: any potentials must do
    const auto s = sinkhorn(p, o);
    const auto& st = s.state();
    const auto bx = detail::make_blocks(p.geometry.x(), std::span<const double>(), 16);
    const auto by = detail::make_blocks(p.geometry.y(), std::span<const double>(), 16);
    const auto xs = detail::gather_rows(p.geometry.x().data, d, bx.order);
    const auto ys = detail::gather_rows(p.geometry.y().data, d, by.order);
    const PointCloud<double> sorted({xs.data(), n, d}, {ys.data(), m, d});
    const auto wa = detail::make_weights(std::span<const double>(), n);
    const auto wb = detail::make_weights(std::span<const double>(), m);
    const auto xside = detail::x_side(sorted, wa), yside = detail::y_side(sorted, wb);
    const auto f = detail::gather_rows(st.f.data(), 1, bx.order);
    const auto g = detail::gather_rows(st.g.data(), 1, by.order);
    const auto fh = detail::shifted<double>(f, xside.sqnorm);
    const auto gh = detail::shifted<double>(g, yside.sqnorm);
    detail::BlockSparsePasses<double> sparse(xside, yside, bx, by, 1.0, 1e-6, 1);
    detail::DensePasses<double> dense(xside, yside, 2.0, 1);
    detail::LseOut<double> scratch;
    std::vector<double> truncated, exact;
    detail::softmin<double>(sparse, detail::Axis::X, detail::Axis::Y, fh, gh, p.epsilon, scratch,
                            truncated);
    detail::softmin<double>(dense, detail::Axis::X, detail::Axis::Y, fh, gh, p.epsilon, scratch,
                            exact);
    const double bound = sparse.certify(detail::Axis::X, truncated, gh, p.epsilon);
    double worst = 0;
    for (std::size_t i = 0; i < exact.size(); ++i)
      worst = std::max(worst, std::abs(exact[i] - truncated[i]));
    EXPECT_LE(worst, bound + 1e-13) << "seed " << seed;
    EXPECT_LT(sparse.kept_fraction(), 1.0) << "seed " << seed;
  }
}

TEST(Converge, TheDefaultRunConvergesToTheTolerance) {
  testing::Instance<double> inst(400, 300, 3, 5);
  const auto r = sinkhorn(inst.problem(0.05));
  EXPECT_TRUE(r.converged());
  EXPECT_LE(r.report().marginal_error, 1e-3);
  EXPECT_EQ(r.report().schedule, "converge");
  ASSERT_EQ(r.report().levels.size(), 2u);
  EXPECT_EQ(r.report().levels.back().name, "final");
  for (const auto acceleration : {Acceleration::None, Acceleration::Anderson}) {
    SinkhornOptions o;
    o.acceleration = acceleration;
    const auto other = sinkhorn(inst.problem(0.05), o);
    EXPECT_TRUE(other.converged());
    EXPECT_NEAR(other.loss(), r.loss(), 1e-3 * std::abs(r.loss()));
  }
}

TEST(Converge, ABudgetThatRunsOutIsReported) {
  testing::Instance<double> inst(300, 300, 2, 6);
  SinkhornOptions o;
  o.max_iter = 2;
  const auto r = sinkhorn(inst.problem(0.02), o);
  EXPECT_FALSE(r.converged());
  EXPECT_TRUE(r.report().budget_exhausted);
}

TEST(Converge, Float32BelowItsPrecisionIsSolvedInFloat64) {
  // blur = diameter / 100: inside float32's range, but its rounding floor (about 1e-7 times
  // diameter^2 / epsilon) is above the default tolerance's margin.
  testing::Instance<float> inst(300, 250, 3, 7);
  const double diameter = inst.problem().geometry.diameter();
  const auto r = sinkhorn(inst.problem(diameter / 100));
  EXPECT_EQ(r.report().working_dtype.rfind("float64", 0), 0u) << r.report().working_dtype;
  EXPECT_TRUE(r.converged());
}

TEST(Converge, Float32FarAboveTheCostsKeepsItsDigitsInFloat64) {
  // blur 10^2 and 10^3 times the diameter: float32 potentials would be wrong by about
  // epsilon 2^-24, more than the loss (or the divergence) itself at 10^3.
  testing::Instance<float> f32(300, 250, 3, 11, true, false, 0.3);
  testing::Instance<double> f64(300, 250, 3, 11, true, false, 0.3);
  const double diameter = f64.problem().geometry.diameter();
  for (double scale : {100.0, 1000.0}) {
    const double blur = scale * diameter;
    const auto r32 = sinkhorn(f32.problem(blur));
    const auto r64 = sinkhorn(f64.problem(blur));
    EXPECT_EQ(r32.report().working_dtype.rfind("float64", 0), 0u) << r32.report().working_dtype;
    EXPECT_TRUE(r32.converged());
    EXPECT_NEAR(r32.loss(), r64.loss(), 1e-3 * std::abs(r64.loss())) << blur;
    const auto d32 = sinkhorn_divergence(f32.problem(blur));
    const auto d64 = sinkhorn_divergence(f64.problem(blur));
    EXPECT_NEAR(d32.loss(), d64.loss(), 1e-3 * std::abs(d64.loss())) << blur;
    EXPECT_EQ(d32.xy().report().working_dtype.rfind("float64", 0), 0u);
  }
  // At a blur of the data's scale float32 keeps its own arithmetic.
  EXPECT_EQ(sinkhorn(f32.problem(diameter)).report().working_dtype, "float32");
  // Where not even float64 resolves the loss (and where float32's epsilon overflows), an
  // error names epsilon instead of a wrong value or a NaN.
  for (double blur : {1e7 * diameter, 1e23}) {
    EXPECT_THROW(sinkhorn(f64.problem(blur)), InvalidInput) << blur;
    EXPECT_THROW(sinkhorn(f32.problem(blur)), InvalidInput) << blur;
    EXPECT_THROW(sinkhorn_divergence(f32.problem(blur)), InvalidInput) << blur;
  }
}

TEST(Converge, UnbalancedProblemsConvergeOnBothBackends) {
  const std::int64_t n = 600, m = 500, d = 2;
  const auto x = cloud(n, d, false, 0.0, 8), y = cloud(m, d, false, 0.2, 9);
  auto p = testing::make_problem(x, n, y, m, d, 0.03);
  p.marginals = Unbalanced{0.5, 0.5};
  SinkhornOptions o;
  o.block_size = 16;
  o.backend = Backend::Dense;
  const auto dense = sinkhorn(p, o);
  o.backend = Backend::Multiscale;
  const auto multi = sinkhorn(p, o);
  EXPECT_TRUE(dense.converged());
  EXPECT_TRUE(multi.converged());
  EXPECT_NEAR(multi.loss(), dense.loss(), 2e-3 * std::abs(dense.loss()));
}

TEST(Converge, TheMultiscaleBackendRefusesTheDivergenceByName) {
  testing::Instance<double> inst(100, 100, 2, 10);
  SinkhornOptions o;
  o.backend = Backend::Multiscale;
  try {
    sinkhorn_divergence(inst.problem(), o);
    ADD_FAILURE() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()).rfind("backend:", 0), 0u) << e.what();
  }
}

TEST(ZeroWeights, ChangeNoValueWhereverThePointsLie) {
  // Points of zero weight, some far away, on either side: the same loss and cost (they moved
  // the epsilon schedule before; now the schedule reads only the points with weight).
  const std::int64_t n = 300, m = 250, d = 2;
  const auto x = cloud(n, d, false, 0.0, 11), y = cloud(m, d, false, 0.2, 12);
  auto x2 = x, y2 = y;
  for (int k = 0; k < 7; ++k) {
    x2.push_back(40.0 + k);
    x2.push_back(-30.0);
    y2.push_back(0.5);
    y2.push_back(0.5 + 0.1 * k);
  }
  std::vector<double> a(static_cast<std::size_t>(n), 1.0 / n),
      b(static_cast<std::size_t>(m), 1.0 / m);
  auto a2 = a, b2 = b;
  a2.resize(static_cast<std::size_t>(n + 7), 0.0);
  b2.resize(static_cast<std::size_t>(m + 7), 0.0);
  for (const auto backend : {Backend::Dense, Backend::Multiscale}) {
    SinkhornOptions o;
    o.backend = backend;
    o.block_size = 16;
    o.marginal_tol = 1e-8;
    auto p = testing::make_problem(x, n, y, m, d, 0.05);
    p.a = a;
    p.b = b;
    auto q = testing::make_problem(x2, n + 7, y2, m + 7, d, 0.05);
    q.a = a2;
    q.b = b2;
    const auto r = sinkhorn(p, o), s = sinkhorn(q, o);
    EXPECT_NEAR(s.loss(), r.loss(), 1e-7 * std::abs(r.loss()));
    EXPECT_NEAR(s.report().transport_cost, r.report().transport_cost,
                1e-7 * std::abs(r.report().transport_cost));
  }
}

}  // namespace
}  // namespace birkhoff::transport
