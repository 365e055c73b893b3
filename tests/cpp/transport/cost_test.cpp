// The ground costs beside sqeuclidean (euclidean |x - y|^p, cosine 1 - cos(x, y)) end to end:
// the converged solve against a dense log-domain Sinkhorn written here, the dense cost matrix
// against the formulas, the gradients, the divergence and the c-transform against finite
// differences, the barycentric map, float32, and the errors. float64 unless said otherwise.
#include "birkhoff/transport/cost.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/c_transform.hpp"
#include "birkhoff/transport/hvp.hpp"
#include "birkhoff/transport/reference.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/fixtures.hpp"

namespace birkhoff::transport {
namespace {

using testing::Instance;
using testing::max_diff_up_to_constant;
using testing::to_vector;
using Vec = std::vector<double>;

/// A cost of the registry with the formula it stands for, written from the raw points, and an
/// epsilon of about a tenth of its typical value on the test clouds.
struct CostCase {
  std::string label;
  std::string name;
  double p = 0;  // 0: the cost's default
  double scale = 1;
  double epsilon = 0;

  Cost cost() const {
    return Cost::named(name, p == 0 ? std::nullopt : std::optional<double>(p), scale);
  }

  double direct(const double* x, const double* y, std::int64_t d) const {
    double s = 0, xx = 0, yy = 0, xy = 0;
    for (std::int64_t k = 0; k < d; ++k) {
      s += (x[k] - y[k]) * (x[k] - y[k]);
      xx += x[k] * x[k];
      yy += y[k] * y[k];
      xy += x[k] * y[k];
    }
    if (name == "sqeuclidean") return scale * s;
    if (name == "euclidean") return std::pow(std::sqrt(s), p == 0 ? 1.0 : p);
    return 1.0 - xy / (std::sqrt(xx) * std::sqrt(yy));  // cosine
  }
};

std::vector<CostCase> all_costs() {
  return {{"sqeuclidean", "sqeuclidean", 0, 1, 0.5},
          {"euclidean p=1", "euclidean", 1, 1, 0.3},
          {"euclidean p=1.5", "euclidean", 1.5, 1, 0.5},
          {"euclidean p=3", "euclidean", 3, 1, 2.0},
          {"cosine", "cosine", 0, 1, 0.1}};
}

CostCase find_cost(const std::string& label) {
  for (const auto& c : all_costs())
    if (c.label == label) return c;
  ADD_FAILURE() << "no cost case " << label;
  return {};
}

/// C_ij of the raw points by the case's formula.
Vec direct_matrix(const CostCase& c, const Instance<double>& inst) {
  Vec out(static_cast<std::size_t>(inst.n * inst.m));
  for (std::int64_t i = 0; i < inst.n; ++i)
    for (std::int64_t j = 0; j < inst.m; ++j)
      out[static_cast<std::size_t>(i * inst.m + j)] =
          c.direct(inst.x.data() + i * inst.d, inst.y.data() + j * inst.d, inst.d);
  return out;
}

Vec raw_cost_matrix(const Instance<double>& inst) {
  return reference::cost_matrix({inst.x.data(), inst.n, inst.d}, {inst.y.data(), inst.m, inst.d},
                                inst.cost);
}

OtProblem<double> problem_of(const Instance<double>& inst, double epsilon) {
  OtProblem<double> p = inst.problem();
  p.epsilon = epsilon;
  return p;
}

SinkhornOptions converge_options(double marginal_tol) {
  SinkhornOptions o;
  o.schedule = Schedule::Converge;
  o.marginal_tol = marginal_tol;
  return o;
}

/// A dense balanced log-domain Sinkhorn at one fixed epsilon, written here independently of the
/// library: alternating f_i = -eps LSE_j(log b_j + (g_j - C_ij) / eps) and the same for g, until
/// the row marginal's L1 error is below `tol` (the columns are exact after each g update).
struct DenseOt {
  Vec f, g, plan;
  double loss = 0;            // <a, f> + <b, g>
  double transport_cost = 0;  // <P, C>
  double marginal_error = 0;
};

DenseOt dense_ot(const Vec& C, Vec a, Vec b, std::int64_t n, std::int64_t m, double eps,
                 double tol = 1e-14, int max_iter = 200000) {
  if (a.empty()) a.assign(static_cast<std::size_t>(n), 1.0 / static_cast<double>(n));
  if (b.empty()) b.assign(static_cast<std::size_t>(m), 1.0 / static_cast<double>(m));
  DenseOt r;
  r.f.assign(static_cast<std::size_t>(n), 0.0);
  r.g.assign(static_cast<std::size_t>(m), 0.0);
  auto lse_min = [eps](const Vec& z) {
    const double mx = *std::max_element(z.begin(), z.end());
    double s = 0;
    for (double v : z) s += std::exp(v - mx);
    return -eps * (mx + std::log(s));
  };
  auto plan = [&](std::int64_t i, std::int64_t j) {
    const std::size_t k = static_cast<std::size_t>(i * m + j);
    return a[i] * b[j] * std::exp((r.f[i] + r.g[j] - C[k]) / eps);
  };
  Vec zr(static_cast<std::size_t>(m)), zc(static_cast<std::size_t>(n));
  for (int it = 0; it < max_iter; ++it) {
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < m; ++j) zr[j] = std::log(b[j]) + (r.g[j] - C[i * m + j]) / eps;
      r.f[i] = lse_min(zr);
    }
    for (std::int64_t j = 0; j < m; ++j) {
      for (std::int64_t i = 0; i < n; ++i) zc[i] = std::log(a[i]) + (r.f[i] - C[i * m + j]) / eps;
      r.g[j] = lse_min(zc);
    }
    if (it % 10 != 9) continue;
    r.marginal_error = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double row = 0;
      for (std::int64_t j = 0; j < m; ++j) row += plan(i, j);
      r.marginal_error += std::abs(row - a[i]);
    }
    if (r.marginal_error < tol) break;
  }
  for (std::int64_t i = 0; i < n; ++i) r.loss += a[i] * r.f[i];
  for (std::int64_t j = 0; j < m; ++j) r.loss += b[j] * r.g[j];
  r.plan.resize(static_cast<std::size_t>(n * m));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      r.plan[i * m + j] = plan(i, j);
      r.transport_cost += r.plan[i * m + j] * C[i * m + j];
    }
  return r;
}

double plan_cost(const Vec& plan, const Vec& C) {
  double s = 0;
  for (std::size_t k = 0; k < plan.size(); ++k) s += plan[k] * C[k];
  return s;
}

/// OT(a, a) of a symmetric problem by GeomLoss's averaged updates f <- (f + T(f)) / 2, which
/// converge in tens of iterations where the alternating ones crawl (the self plan is nearly
/// diagonal); at the fixed point f = T(f) the value is 2 <a, f>.
double dense_self_ot(const Vec& C, Vec a, std::int64_t n, double eps) {
  if (a.empty()) a.assign(static_cast<std::size_t>(n), 1.0 / static_cast<double>(n));
  Vec f(static_cast<std::size_t>(n), 0.0), t(f.size()), z(f.size());
  for (int it = 0; it < 100000; ++it) {
    double change = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) z[j] = std::log(a[j]) + (f[j] - C[i * n + j]) / eps;
      const double mx = *std::max_element(z.begin(), z.end());
      double s = 0;
      for (double v : z) s += std::exp(v - mx);
      t[i] = -eps * (mx + std::log(s));
      change = std::max(change, std::abs(t[i] - f[i]));
    }
    for (std::int64_t i = 0; i < n; ++i) f[i] = 0.5 * (f[i] + t[i]);
    if (change < 1e-15) break;
  }
  double v = 0;
  for (std::int64_t i = 0; i < n; ++i) v += 2 * a[i] * f[i];
  return v;
}

/// The debiased divergence OT(a, b) - OT(a, a) / 2 - OT(b, b) / 2 from dense cost matrices of
/// the raw points (exact zeros on the self terms' diagonals).
double dense_divergence(const Instance<double>& inst, double eps) {
  const MatrixView<const double> x(inst.x.data(), inst.n, inst.d), y(inst.y.data(), inst.m, inst.d);
  const double xy =
      dense_ot(reference::cost_matrix(x, y, inst.cost), inst.a, inst.b, inst.n, inst.m, eps).loss;
  const double xx = dense_self_ot(reference::cost_matrix(x, x, inst.cost), inst.a, inst.n, eps);
  const double yy = dense_self_ot(reference::cost_matrix(y, y, inst.cost), inst.b, inst.m, eps);
  return xy - 0.5 * xx - 0.5 * yy;
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

TEST(GroundCosts, ConvergedSolveMatchesADenseLogDomainSinkhorn) {
  int k = 0;
  for (const auto& c : all_costs()) {
    SCOPED_TRACE(c.label);
    const std::int64_t d = (k++ % 2 == 0) ? 3 : 5;
    Instance<double> inst(70, 55, d, 100 + static_cast<unsigned>(k));
    inst.cost = c.cost();
    const auto problem = problem_of(inst, c.epsilon);
    const auto sol = sinkhorn(problem, converge_options(1e-9));
    const auto& rep = sol.report();
    EXPECT_TRUE(rep.converged) << "marginal error " << rep.marginal_error;
    EXPECT_LE(rep.marginal_error, 1e-9);
    EXPECT_EQ(rep.schedule, "converge");
    EXPECT_EQ(rep.backend, "dense");
    EXPECT_DOUBLE_EQ(rep.epsilon, c.epsilon);

    const Vec C = raw_cost_matrix(inst);
    const DenseOt want = dense_ot(C, inst.a, inst.b, inst.n, inst.m, c.epsilon);
    ASSERT_LT(want.marginal_error, 1e-12) << "the dense reference did not converge";
    EXPECT_NEAR(rep.loss, want.loss, 1e-6 * std::abs(want.loss));
    // <P, C> of the streamed plan, on the raw points' cost matrix.
    const double cost = plan_cost(sol.dense_plan(), C);
    EXPECT_NEAR(rep.transport_cost, cost, 1e-10 * std::abs(cost));
    EXPECT_NEAR(cost, want.transport_cost, 1e-6 * std::abs(want.transport_cost));
    // The potentials themselves (balanced: up to a constant shift).
    EXPECT_LT(max_diff_up_to_constant(to_vector(sol.f()), want.f), 1e-5 * c.epsilon);
    EXPECT_LT(max_diff_up_to_constant(to_vector(sol.g()), want.g), 1e-5 * c.epsilon);
    // The library's own dense twin, run long at the fixed epsilon, agrees too.
    SinkhornOptions fixed;
    fixed.schedule = Schedule::GeomLoss;
    fixed.iterations = 3000;
    const auto twin = reference::sinkhorn_dense(problem, fixed);
    EXPECT_NEAR(twin.loss, want.loss, 1e-9 * std::abs(want.loss));
  }
}

TEST(GroundCosts, CostMatrixIsTheDirectFormula) {
  for (const auto& c : all_costs()) {
    SCOPED_TRACE(c.label);
    Instance<double> inst(45, 38, 4, 7);
    for (auto& v : inst.y) v *= 3;  // raw y far from unit length: the cosine must normalise
    inst.cost = c.cost();
    const Vec got = raw_cost_matrix(inst);
    const Vec want = direct_matrix(c, inst);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k)
      ASSERT_NEAR(got[k], want[k], 1e-12 * (1 + std::abs(want[k]))) << k;
    // The prepared (centred, normalised) geometry describes the same matrix.
    const auto from_geometry = reference::cost_matrix(inst.problem().geometry);
    for (std::size_t k = 0; k < got.size(); ++k)
      ASSERT_NEAR(from_geometry[k], want[k], 1e-12 * (1 + std::abs(want[k]))) << k;
  }
  // Cosine is invariant under positive rescaling of either point; an unset p means p = 1.
  Instance<double> inst(10, 12, 3, 8);
  inst.cost = Cost::named("cosine");
  const Vec before = raw_cost_matrix(inst);
  for (auto& v : inst.x) v *= 7.5;
  const Vec after = raw_cost_matrix(inst);
  for (std::size_t k = 0; k < before.size(); ++k) EXPECT_NEAR(before[k], after[k], 1e-14);
  EXPECT_TRUE(Cost::named("euclidean") == Cost::named("euclidean", 1));
  EXPECT_FALSE(Cost::named("euclidean", 1.5) == Cost::named("euclidean", 1));
  EXPECT_EQ(Cost::named("euclidean", 3)->exponent(), 3.0);
  EXPECT_EQ(Cost::named("cosine").name(), "cosine");
}

// Central differences of `loss` in the coordinates idx of x (and of y).
template <class Loss>
void check_point_gradients(Instance<double>& inst, const Gradients<double>& grad, Loss loss,
                           double tol) {
  const double h = 1e-5;
  for (std::size_t idx : {0ul, 4ul, 13ul, 50ul}) {
    const double keep = inst.x[idx];
    inst.x[idx] = keep + h;
    const double up = loss(inst);
    inst.x[idx] = keep - h;
    const double down = loss(inst);
    inst.x[idx] = keep;
    const double fd = (up - down) / (2 * h);
    EXPECT_NEAR(grad.x[idx], fd, tol * (1 + std::abs(fd))) << "x[" << idx << "]";
  }
  for (std::size_t idx : {1ul, 7ul, 30ul}) {
    const double keep = inst.y[idx];
    inst.y[idx] = keep + h;
    const double up = loss(inst);
    inst.y[idx] = keep - h;
    const double down = loss(inst);
    inst.y[idx] = keep;
    const double fd = (up - down) / (2 * h);
    EXPECT_NEAR(grad.y[idx], fd, tol * (1 + std::abs(fd))) << "y[" << idx << "]";
  }
}

TEST(GroundCosts, GradientsMatchFiniteDifferences) {
  for (const auto& c : all_costs()) {
    SCOPED_TRACE(c.label);
    Instance<double> inst(40, 36, 3, 23);
    inst.cost = c.cost();
    const auto o = converge_options(1e-12);
    const auto sol = sinkhorn(problem_of(inst, c.epsilon), o);
    ASSERT_TRUE(sol.converged()) << sol.report().marginal_error;
    const auto grad = sol.gradients();
    ASSERT_EQ(grad.x.size(), inst.x.size());
    ASSERT_EQ(grad.y.size(), inst.y.size());
    auto loss = [&](const Instance<double>& s) {
      return sinkhorn(problem_of(s, c.epsilon), o).loss();
    };
    check_point_gradients(inst, grad, loss, 1e-5);
    // Balanced weights: move mass between two points of a (of b), the total kept.
    const double h = 1e-6;
    auto along = [&](Vec& w, std::size_t i, std::size_t j, double t) {
      w[i] += t;
      w[j] -= t;
      const double v = loss(inst);
      w[i] -= t;
      w[j] += t;
      return v;
    };
    const double fd_a = (along(inst.a, 2, 5, h) - along(inst.a, 2, 5, -h)) / (2 * h);
    EXPECT_NEAR(grad.a[2] - grad.a[5], fd_a, 1e-5 * (1 + std::abs(fd_a)));
    const double fd_b = (along(inst.b, 9, 1, h) - along(inst.b, 9, 1, -h)) / (2 * h);
    EXPECT_NEAR(grad.b[9] - grad.b[1], fd_b, 1e-5 * (1 + std::abs(fd_b)));
    if (c.name == "cosine") {
      // The value depends on x_i only through its direction: the gradient is orthogonal to it.
      for (std::int64_t i = 0; i < inst.n; ++i) {
        double dot = 0, norm = 0;
        for (std::int64_t k = 0; k < inst.d; ++k) {
          dot += grad.x[i * inst.d + k] * inst.x[i * inst.d + k];
          norm += grad.x[i * inst.d + k] * grad.x[i * inst.d + k];
        }
        EXPECT_NEAR(dot, 0.0, 1e-10 * (1 + std::sqrt(norm))) << "row " << i;
      }
    }
  }
}

TEST(GroundCosts, DivergenceIsNonNegativeAndItsGradientsMatchFiniteDifferences) {
  for (const std::string label : {"euclidean p=1", "cosine"}) {
    const CostCase c = find_cost(label);
    SCOPED_TRACE(c.label);
    Instance<double> inst(42, 37, 3, 61);
    inst.cost = c.cost();
    const auto o = converge_options(1e-12);
    const auto div = sinkhorn_divergence(problem_of(inst, c.epsilon), o);
    EXPECT_TRUE(div.xy().converged()) << div.xy().report().marginal_error;
    EXPECT_GE(div.loss(), -1e-10);
    EXPECT_GT(div.loss(), 1e-4);  // the clouds differ (y is shifted)
    // The divergence written here, and the library's dense twin at the same fixed epsilon.
    const double want = dense_divergence(inst, c.epsilon);
    EXPECT_NEAR(div.loss(), want, 1e-7 * (1 + std::abs(want)));
    SinkhornOptions fixed;
    fixed.schedule = Schedule::GeomLoss;
    fixed.iterations = 3000;
    const auto twin = reference::sinkhorn_dense(problem_of(inst, c.epsilon), fixed, true);
    EXPECT_NEAR(twin.loss, want, 1e-9 * (1 + std::abs(want)));
    // The streamed gradients against central differences of the streamed value and of the
    // dense divergence.
    const auto grad = div.gradients();
    check_point_gradients(
        inst, grad,
        [&](const Instance<double>& s) {
          return sinkhorn_divergence(problem_of(s, c.epsilon), o).loss();
        },
        1e-5);
    check_point_gradients(
        inst, grad, [&](const Instance<double>& s) { return dense_divergence(s, c.epsilon); },
        1e-5);
    // A cloud against itself: zero.
    Instance<double> same = inst;
    same.y = same.x;
    same.b = same.a;
    same.m = same.n;
    const auto zero = sinkhorn_divergence(problem_of(same, c.epsilon), o);
    EXPECT_NEAR(zero.loss(), 0.0, 1e-9);
  }
}

// The distance-power tile forms |u - v|^2 as |u|^2 + |v|^2 - 2 <u, v>: for a coincident pair
// that is rounding noise of order ulp |u|^2, and (noise)^(p / 2) for p = 1 is about 4e-8 in
// float64 and 1.4e-3 in float32 on these clouds unless the tile counts it as 0. Every self term
// of the divergence pairs each point with itself, so such noise made the p = 1 divergence too
// rough for the finite differences of DivergenceIsNonNegativeAndItsGradientsMatch... (off by
// 5 % at h = 1e-5).
TEST(GroundCosts, CoincidentPointsCostZero) {
  // min_j |x_i - x_j|^p - 0 = 0, attained at j = i; and the plan of a cloud with itself costs
  // what the dense plan costs on the exact matrix.
  for (double p : {1.0, 1.5}) {
    SCOPED_TRACE("p " + std::to_string(p));
    Instance<double> inst(42, 42, 3, 61);
    inst.cost = Cost::named("euclidean", p);
    inst.y = inst.x;
    inst.b = inst.a;
    const Vec g(static_cast<std::size_t>(inst.m), 0.0);
    const auto ct = c_transform<double>(inst.problem().geometry, g);
    for (std::int64_t i = 0; i < inst.n; ++i) {
      EXPECT_NEAR(ct.values[i], 0.0, 1e-13) << "row " << i;
      EXPECT_EQ(ct.argmin[i], i);
    }
    Instance<float> inst32(42, 42, 3, 61);
    inst32.cost = inst.cost;
    inst32.y = inst32.x;
    const std::vector<float> g32(static_cast<std::size_t>(inst32.m), 0.0f);
    const auto ct32 = c_transform<float>(inst32.problem().geometry, g32);
    for (std::int64_t i = 0; i < inst32.n; ++i)
      EXPECT_NEAR(ct32.values[i], 0.0, 1e-6) << "float32 row " << i;
    // A cloud against itself converges slowly (its plan is nearly diagonal): a short run does,
    // its plan is what gets costed.
    SinkhornOptions o = converge_options(1e-9);
    o.max_iter = 100;
    const auto sol = sinkhorn(problem_of(inst, 0.3), o);
    const double cost = plan_cost(sol.dense_plan(), raw_cost_matrix(inst));
    EXPECT_NEAR(sol.report().transport_cost, cost, 1e-12 * cost);
  }
}

TEST(GroundCosts, CTransformMatchesBruteForceAndItsGradientFiniteDifferences) {
  for (const std::string label : {"euclidean p=1", "euclidean p=3", "cosine"}) {
    const CostCase c = find_cost(label);
    SCOPED_TRACE(c.label);
    Instance<double> inst(120, 157, 3, 71);
    inst.cost = c.cost();
    std::mt19937 rng(72);
    std::normal_distribution<double> normal;
    const double g_scale = c.name == "cosine" ? 0.2 : 0.8;
    Vec g(static_cast<std::size_t>(inst.m));
    for (auto& v : g) v = g_scale * normal(rng);
    auto transform = [&](const Instance<double>& s) {
      return c_transform<double>(s.problem().geometry, g, s.a, s.b);
    };
    const auto ct = transform(inst);
    ASSERT_EQ(ct.values.size(), static_cast<std::size_t>(inst.n));
    double value = 0;
    Vec grad_g(inst.b.begin(), inst.b.end());
    Vec gap(static_cast<std::size_t>(inst.n));  // second best minus best
    for (std::int64_t i = 0; i < inst.n; ++i) {
      double best = std::numeric_limits<double>::infinity();
      double second = best;
      std::int64_t arg = -1;
      for (std::int64_t j = 0; j < inst.m; ++j) {
        const double v = c.direct(inst.x.data() + i * inst.d, inst.y.data() + j * inst.d, inst.d) -
                         g[static_cast<std::size_t>(j)];
        if (v < best) {
          second = best;
          best = v;
          arg = j;
        } else if (v < second) {
          second = v;
        }
      }
      gap[static_cast<std::size_t>(i)] = second - best;
      EXPECT_NEAR(ct.values[i], best, 1e-10) << "row " << i;
      EXPECT_EQ(ct.argmin[i], arg) << "row " << i;
      value += inst.a[i] * best;
      grad_g[static_cast<std::size_t>(arg)] -= inst.a[i];
    }
    for (std::int64_t j = 0; j < inst.m; ++j) value += inst.b[j] * g[j];
    EXPECT_NEAR(ct.value, value, 1e-10);
    for (std::int64_t j = 0; j < inst.m; ++j) EXPECT_NEAR(ct.grad_g[j], grad_g[j], 1e-12) << j;
    // grad_x against central differences of the semi-dual value, where the argmin is unique
    // (with a margin: the step must not change it).
    const double h = 1e-6;
    int checked = 0;
    for (std::int64_t i = 0; i < inst.n && checked < 12; i += 7) {
      if (gap[static_cast<std::size_t>(i)] < 1e-3) continue;
      for (std::int64_t k = 0; k < inst.d; ++k) {
        const std::size_t idx = static_cast<std::size_t>(i * inst.d + k);
        Instance<double> moved = inst;
        moved.x[idx] = inst.x[idx] + h;
        const auto up = transform(moved);
        moved.x[idx] = inst.x[idx] - h;
        const auto down = transform(moved);
        ASSERT_EQ(up.argmin[i], ct.argmin[i]);
        ASSERT_EQ(down.argmin[i], ct.argmin[i]);
        const double fd = (up.value - down.value) / (2 * h);
        EXPECT_NEAR(ct.grad_x[idx], fd, 1e-6 * (1 + std::abs(fd))) << "x[" << idx << "]";
      }
      ++checked;
    }
    EXPECT_GE(checked, 8);
  }
}

TEST(GroundCosts, BadNamesParametersAndUnsupportedUsesNameTheArgument) {
  expect_invalid([] { Cost::named("nope"); }, "cost");
  try {
    Cost::named("nope");
  } catch (const InvalidInput& e) {
    // The message lists the known costs.
    for (const auto& name : cost_names())
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
  expect_invalid([] { Cost::named("euclidean", 0.5); }, "p");
  expect_invalid([] { Cost::named("euclidean", 0.0); }, "p");
  expect_invalid([] { Cost::named("cosine", 0.0); }, "p");
  expect_invalid([] { Cost::named("euclidean", -1); }, "p");
  expect_invalid([] { Cost::named("euclidean", std::numeric_limits<double>::infinity()); }, "p");
  expect_invalid([] { Cost::named("euclidean", std::numeric_limits<double>::quiet_NaN()); }, "p");
  expect_invalid([] { Cost::named("euclidean", 2, 3.0); }, "scale");
  expect_invalid([] { Cost::named("cosine", 2); }, "p");
  expect_invalid([] { Cost::named("sqeuclidean", 3); }, "p");
  EXPECT_NO_THROW(Cost::named("euclidean", 1));
  EXPECT_NO_THROW(Cost::named("euclidean", 7.25));

  // Cosine is undefined at the zero vector.
  Instance<double> zero_x(8, 6, 3, 81);
  zero_x.cost = Cost::named("cosine");
  for (std::int64_t k = 0; k < zero_x.d; ++k) zero_x.x[3 * zero_x.d + k] = 0;
  expect_invalid([&] { zero_x.problem(); }, "x");
  Instance<double> zero_y(8, 6, 3, 82);
  zero_y.cost = Cost::named("cosine");
  for (std::int64_t k = 0; k < zero_y.d; ++k) zero_y.y[5 * zero_y.d + k] = 0;
  expect_invalid([&] { zero_y.problem(); }, "y");
  // ... but the zero vector is an ordinary point of the euclidean cost.
  zero_x.cost = Cost::named("euclidean");
  EXPECT_NO_THROW(zero_x.problem());

  // No second-order products for the euclidean cost.
  Instance<double> inst(20, 18, 2, 83);
  inst.cost = Cost::named("euclidean", 1);
  const auto sol = sinkhorn(problem_of(inst, 0.3), converge_options(1e-6));
  const Vec vx(inst.x.size(), 1.0);
  expect_invalid([&] { hvp(sol, MatrixView<const double>(vx.data(), inst.n, inst.d)); }, "cost");
  // The multiscale backend bounds sqeuclidean costs only.
  SinkhornOptions multi = converge_options(1e-6);
  multi.backend = Backend::Multiscale;
  for (const std::string label : {"euclidean p=1", "euclidean p=3", "cosine"}) {
    SCOPED_TRACE(label);
    Instance<double> other(20, 18, 2, 84);
    other.cost = find_cost(label).cost();
    expect_invalid([&] { sinkhorn(problem_of(other, 0.3), multi); }, "backend");
  }
}

TEST(GroundCosts, BarycentricMapAveragesTheRawPoints) {
  for (const std::string label : {"cosine", "euclidean p=1.5"}) {
    const CostCase c = find_cost(label);
    SCOPED_TRACE(c.label);
    Instance<double> inst(50, 43, 3, 91);
    for (auto& v : inst.y) v = 4 * v + 1;  // far from unit length and from the origin
    inst.cost = c.cost();
    const auto sol = sinkhorn(problem_of(inst, c.epsilon), converge_options(1e-9));
    ASSERT_TRUE(sol.converged());
    const auto plan = sol.dense_plan();
    const auto bar = sol.barycentric_map();
    const auto rows = sol.row_marginal();
    ASSERT_EQ(bar.size(), inst.x.size());
    for (std::int64_t i = 0; i < inst.n; ++i) {
      double s = 0;
      Vec yk(static_cast<std::size_t>(inst.d), 0.0);
      for (std::int64_t j = 0; j < inst.m; ++j) {
        const double pij = plan[static_cast<std::size_t>(i * inst.m + j)];
        s += pij;
        for (std::int64_t k = 0; k < inst.d; ++k) yk[k] += pij * inst.y[j * inst.d + k];
      }
      EXPECT_NEAR(rows[i], s, 1e-12);
      EXPECT_NEAR(s, inst.a[i], 1e-8);  // converged: the rows carry a
      for (std::int64_t k = 0; k < inst.d; ++k)
        ASSERT_NEAR(bar[i * inst.d + k], yk[k] / s, 1e-9 * (1 + std::abs(yk[k] / s)))
            << "row " << i << " coordinate " << k;
    }
  }
}

TEST(GroundCosts, Float32EuclideanAgreesWithFloat64) {
  const CostCase c = find_cost("euclidean p=1");
  Instance<double> inst(150, 130, 3, 101);
  Instance<float> inst32(150, 130, 3, 101);
  inst.cost = inst32.cost = c.cost();
  const auto want = sinkhorn(problem_of(inst, c.epsilon), converge_options(1e-9));
  ASSERT_TRUE(want.converged());
  OtProblem<float> p32 = inst32.problem();
  p32.epsilon = c.epsilon;
  const auto got = sinkhorn(p32, converge_options(1e-4));
  EXPECT_EQ(got.report().working_dtype, "float32");
  EXPECT_TRUE(got.converged()) << got.report().marginal_error;
  EXPECT_NEAR(got.loss(), want.loss(), 1e-4 * std::abs(want.loss()));
  EXPECT_NEAR(got.report().transport_cost, want.report().transport_cost,
              1e-4 * std::abs(want.report().transport_cost));
  for (std::size_t i = 0; i < want.f().size(); ++i)
    ASSERT_NEAR(got.f()[i] - got.f()[0], want.f()[i] - want.f()[0], 1e-3) << i;
}

}  // namespace
}  // namespace birkhoff::transport
