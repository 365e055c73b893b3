// Second-order products against a dense float64 Hessian and finite differences of the
// streamed gradients, for both costs; the implicit gradient; the inverse HVP; c-transform and
// the label-augmented cost against dense formulas.
#include "birkhoff/transport/hvp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "birkhoff/transport/c_transform.hpp"
#include "birkhoff/transport/reference.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/fixtures.hpp"

namespace birkhoff::transport {
namespace {

using testing::Instance;
using testing::Settings;
using Vec = std::vector<double>;
using Reach = std::pair<std::optional<double>, std::optional<double>>;

Settings converged_options(double blur = 0.8) {
  Settings o;
  o.blur = blur;
  o.iterations = 4000;
  o.tol = 1e-14;
  return o;
}

const Reach kReaches[] = {
    {std::nullopt, std::nullopt}, {1.0, 1.0}, {1.0, std::nullopt}, {std::nullopt, 2.0}};

// Solves the dense symmetric system M z = rhs (rhs orthogonal to M's kernel, if any, which is
// spanned by `null`, or empty) by Gaussian elimination on M + null null^T.
Vec dense_solve(Vec M, Vec rhs, const Vec& null) {
  const std::size_t k = rhs.size();
  for (std::size_t i = 0; i < k && !null.empty(); ++i)
    for (std::size_t j = 0; j < k; ++j) M[i * k + j] += null[i] * null[j];
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::abs(M[r * k + c]) > std::abs(M[piv * k + c])) piv = r;
    for (std::size_t j = 0; j < k; ++j) std::swap(M[c * k + j], M[piv * k + j]);
    std::swap(rhs[c], rhs[piv]);
    for (std::size_t r = c + 1; r < k; ++r) {
      const double f = M[r * k + c] / M[c * k + c];
      for (std::size_t j = c; j < k; ++j) M[r * k + j] -= f * M[c * k + j];
      rhs[r] -= f * rhs[c];
    }
  }
  Vec z(k);
  for (std::size_t c = k; c-- > 0;) {
    double s = rhs[c];
    for (std::size_t j = c + 1; j < k; ++j) s -= M[c * k + j] * z[j];
    z[c] = s / M[c * k + c];
  }
  return z;
}

// The Hessian-vector product of OT_eps(x, y) written densely from its definition (implicit
// function theorem on the dual optimality conditions), from dense reference potentials.
struct Dense {
  std::int64_t n, m, d;
  Vec x, y, P;
  double eps, kappa, ila, ilb;
  bool balanced;

  Dense(const Instance<double>& inst, double blur) : n(inst.n), m(inst.m), d(inst.d) {
    const auto o = converged_options(blur);
    const auto prob = inst.problem(blur);
    const auto ref = reference::sinkhorn_dense(prob, o);
    const auto C = reference::cost_matrix(prob.geometry);
    x = inst.x;
    y = inst.y;
    eps = blur * blur;
    kappa = inst.cost->kappa();
    ila = inst.reach_a ? 1 + eps / (*inst.reach_a * *inst.reach_a) : 1.0;
    ilb = inst.reach_b ? 1 + eps / (*inst.reach_b * *inst.reach_b) : 1.0;
    balanced = !inst.reach_a && !inst.reach_b;
    P.resize(static_cast<std::size_t>(n * m));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        const double a = inst.a.empty() ? 1.0 / n : inst.a[i];
        const double b = inst.b.empty() ? 1.0 / m : inst.b[j];
        P[i * m + j] = a * b * std::exp((ref.f[i] + ref.g[j] - C[i * m + j]) / eps);
      }
  }

  double e(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return x[i * d + k] - y[j * d + k];
  }

  std::pair<Vec, Vec> hvp(const Vec& A, const Vec& B) const {
    Vec r(n, 0.0), c(m, 0.0), ed(n * m, 0.0);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        r[i] += P[i * m + j];
        c[j] += P[i * m + j];
        for (std::int64_t k = 0; k < d; ++k)
          ed[i * m + j] += e(i, j, k) * (A[i * d + k] - (B.empty() ? 0.0 : B[j * d + k]));
      }
    const std::size_t K = static_cast<std::size_t>(n + m);
    Vec M(K * K, 0.0), rhs(K, 0.0);
    for (std::int64_t i = 0; i < n; ++i) M[i * K + i] = r[i] * ila;
    for (std::int64_t j = 0; j < m; ++j) M[(n + j) * K + n + j] = c[j] * ilb;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        M[i * K + n + j] = M[(n + j) * K + i] = P[i * m + j];
        rhs[i] += kappa * P[i * m + j] * ed[i * m + j];
        rhs[n + j] += kappa * P[i * m + j] * ed[i * m + j];
      }
    Vec null;
    if (balanced) {
      null.assign(K, 1.0);
      for (std::int64_t j = 0; j < m; ++j) null[n + j] = -1.0;
    }
    const Vec z = dense_solve(M, rhs, null);
    Vec hx(n * d, 0.0), hy(m * d, 0.0);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j)
        for (std::int64_t k = 0; k < d; ++k) {
          const double p = P[i * m + j], ek = e(i, j, k);
          const double dk = A[i * d + k] - (B.empty() ? 0.0 : B[j * d + k]);
          const double v = kappa / eps * p * ek * (z[i] + z[n + j]) + kappa * p * dk -
                           kappa * kappa / eps * p * ed[i * m + j] * ek;
          hx[i * d + k] += v;
          hy[j * d + k] -= v;
        }
    return {hx, hy};
  }
};

Vec random_vec(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Vec v(size);
  for (auto& e : v) e = normal(rng);
  return v;
}

double max_abs(const Vec& v) {
  double s = 0;
  for (double e : v) s = std::max(s, std::abs(e));
  return s;
}

template <class T>
void expect_close(const std::vector<T>& got, const Vec& want, double rel, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double scale = max_abs(want);
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(static_cast<double>(got[i]), want[i], rel * scale) << what << "[" << i << "]";
}

TEST(Hvp, MatchesTheDenseFloat64HessianForBothCostsAndEveryMarginalPolicy) {
  for (Cost cost : {Cost::sqeuclidean(), Cost::sqeuclidean(0.5)})
    for (const auto& [ra, rb] : kReaches) {
      SCOPED_TRACE(std::string(cost == Cost::sqeuclidean() ? "cs=1" : "cs=1/2") + " reach " +
                   (ra ? "a" : "-") + (rb ? "b" : "-"));
      Instance<double> inst(37, 29, 3, 5);
      inst.cost = cost;
      inst.reach_a = ra;
      inst.reach_b = rb;
      const double blur = 0.7;
      const auto o = converged_options(blur);
      const auto sol = sinkhorn(inst.problem(blur), o);
      const Dense dense(inst, blur);
      const Vec A = random_vec(inst.x.size(), 1), B = random_vec(inst.y.size(), 2);
      HvpOptions ho;
      ho.rtol = 1e-12;
      const auto hx_only = hvp<double>(sol, {A.data(), inst.n, inst.d}, {}, true, ho);
      EXPECT_TRUE(hx_only.converged);
      const auto [wx, wy] = dense.hvp(A, {});
      expect_close(hx_only.x, wx, 1e-8, "x block");
      expect_close(hx_only.y, wy, 1e-8, "y block");
      const auto both =
          hvp<double>(sol, {A.data(), inst.n, inst.d}, {B.data(), inst.m, inst.d}, true, ho);
      const auto [bx, by] = dense.hvp(A, B);
      expect_close(both.x, bx, 1e-8, "x block, both directions");
      expect_close(both.y, by, 1e-8, "y block, both directions");
    }
}

// Central differences of the streamed gradient along (A, B).
template <class Grad>
std::pair<Vec, Vec> fd_of_gradient(Instance<double> inst, const Vec& A, const Vec& B, Grad grad) {
  const double h = 1e-5;
  auto shifted = [&](double t) {
    Instance<double> s = inst;
    for (std::size_t i = 0; i < A.size(); ++i) s.x[i] += t * A[i];
    for (std::size_t j = 0; j < B.size(); ++j) s.y[j] += t * B[j];
    return grad(s);
  };
  const auto up = shifted(h), down = shifted(-h);
  Vec gx(up.x.size()), gy(up.y.size());
  for (std::size_t i = 0; i < gx.size(); ++i) gx[i] = (up.x[i] - down.x[i]) / (2 * h);
  for (std::size_t j = 0; j < gy.size(); ++j) gy[j] = (up.y[j] - down.y[j]) / (2 * h);
  return {gx, gy};
}

TEST(Hvp, MatchesFiniteDifferencesOfTheGradientForBothCosts) {
  for (Cost cost : {Cost::sqeuclidean(), Cost::sqeuclidean(0.5)})
    for (const auto& [ra, rb] : kReaches) {
      Instance<double> inst(23, 31, 2, 8);
      inst.cost = cost;
      inst.reach_a = ra;
      inst.reach_b = rb;
      const auto o = converged_options(0.6);
      const Vec A = random_vec(inst.x.size(), 3), B = random_vec(inst.y.size(), 4);
      const auto [fx, fy] = fd_of_gradient(inst, A, B, [&](const Instance<double>& s) {
        return sinkhorn(s.problem(o.blur), o).gradients();
      });
      const auto sol = sinkhorn(inst.problem(o.blur), o);
      HvpOptions ho;
      ho.rtol = 1e-12;
      const auto h =
          hvp<double>(sol, {A.data(), inst.n, inst.d}, {B.data(), inst.m, inst.d}, true, ho);
      expect_close(h.x, fx, 1e-6, "x block");
      expect_close(h.y, fy, 1e-6, "y block");
    }
}

TEST(Hvp, OfTheDivergenceMatchesFiniteDifferencesOfItsGradient) {
  for (Cost cost : {Cost::sqeuclidean(), Cost::sqeuclidean(0.5)})
    for (bool unbalanced : {false, true}) {
      Instance<double> inst(21, 17, 3, 9);
      inst.cost = cost;
      if (unbalanced) inst.reach_a = inst.reach_b = 1.5;
      const auto o = converged_options(0.6);
      const Vec A = random_vec(inst.x.size(), 5), B = random_vec(inst.y.size(), 6);
      const auto [fx, fy] = fd_of_gradient(inst, A, B, [&](const Instance<double>& s) {
        return sinkhorn_divergence(s.problem(o.blur), o).gradients();
      });
      const auto div = sinkhorn_divergence(inst.problem(o.blur), o);
      HvpOptions ho;
      ho.rtol = 1e-12;
      const auto h =
          hvp<double>(div, {A.data(), inst.n, inst.d}, {B.data(), inst.m, inst.d}, true, ho);
      expect_close(h.x, fx, 1e-6, "x block");
      expect_close(h.y, fy, 1e-6, "y block");
    }
}

TEST(Hvp, InFloat32AgreesWithFloat64AndRejectsBadDirections) {
  Instance<double> inst(40, 35, 3, 10);
  Instance<float> inst32(40, 35, 3, 10);
  const auto o = converged_options(0.5);
  const auto sol = sinkhorn(inst.problem(o.blur), o);
  const auto sol32 = sinkhorn(inst32.problem(o.blur), o);
  const Vec A = random_vec(inst.x.size(), 7);
  const std::vector<float> A32(A.begin(), A.end());
  const auto h = hvp<double>(sol, {A.data(), inst.n, inst.d});
  const auto h32 = hvp<float>(sol32, {A32.data(), inst.n, inst.d});
  expect_close(h32.x, Vec(h.x.begin(), h.x.end()), 2e-3, "float32 vs float64");
  EXPECT_THROW(hvp<double>(sol, {A.data(), inst.n - 1, inst.d}), InvalidInput);
  Vec bad = A;
  bad[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(hvp<double>(sol, {bad.data(), inst.n, inst.d}), InvalidInput);
}

TEST(InverseHvp, SolvesTheNewtonSystemWhereTheHessianIsPositiveDefinite) {
  // OT_eps is not convex in x in general (two unrelated clouds give negative curvature); near a
  // good match (y a slightly noisy affine image of x) with a small blur H_xx is positive
  // definite, as in a registration problem.
  Instance<double> inst(30, 30, 2, 11, true);
  const Vec noise = random_vec(inst.y.size(), 19);
  for (std::size_t i = 0; i < inst.y.size(); ++i)
    inst.y[i] = 1.2 * inst.x[i] + 0.3 + 0.05 * noise[i];
  const auto o = converged_options(0.05);
  const auto sol = sinkhorn(inst.problem(o.blur), o);
  const Vec g = random_vec(inst.x.size(), 12);
  InverseHvpOptions io;
  io.rtol = 1e-9;
  io.inner.rtol = 1e-12;
  const auto w = inverse_hvp<double>(sol, {g.data(), inst.n, inst.d}, io);
  ASSERT_TRUE(w.converged) << w.iterations << " " << w.negative_curvature << " " << w.residual;
  EXPECT_FALSE(w.negative_curvature);
  const auto hw = hvp<double>(sol, {w.x.data(), inst.n, inst.d}, {}, false, io.inner);
  expect_close(hw.x, g, 1e-7, "H w");
}

TEST(ImplicitGradient, MatchesFiniteDifferencesOfAFunctionOfThePotentials) {
  for (const auto& [ra, rb] : kReaches) {
    Instance<double> inst(19, 14, 2, 13);
    inst.cost = Cost::sqeuclidean(0.5);
    inst.reach_a = ra;
    inst.reach_b = rb;
    const auto o = converged_options(0.6);
    Vec uf = random_vec(static_cast<std::size_t>(inst.n), 14);
    Vec ug = random_vec(static_cast<std::size_t>(inst.m), 15);
    const bool balanced = !ra && !rb;
    if (balanced) {  // L must not see the (f + t, g - t) ambiguity of balanced potentials
      double sf = 0, sg = 0;
      for (double v : uf) sf += v;
      for (double v : ug) sg += v;
      for (double& v : ug) v += (sf - sg) / static_cast<double>(inst.m);
    }
    auto L = [&](const Instance<double>& s) {
      const auto r = sinkhorn(s.problem(o.blur), o);
      double v = 0;
      for (std::size_t i = 0; i < uf.size(); ++i) v += uf[i] * r.f()[i];
      for (std::size_t j = 0; j < ug.size(); ++j) v += ug[j] * r.g()[j];
      return v;
    };
    const auto sol = sinkhorn(inst.problem(o.blur), o);
    HvpOptions ho;
    ho.rtol = 1e-12;
    const auto grad = implicit_gradient<double>(sol, uf, ug, ho);
    const Vec A = random_vec(inst.x.size(), 16), B = random_vec(inst.y.size(), 17);
    const double h = 1e-5;
    auto moved = [&](double t) {
      Instance<double> s = inst;
      for (std::size_t i = 0; i < A.size(); ++i) s.x[i] += t * A[i];
      for (std::size_t j = 0; j < B.size(); ++j) s.y[j] += t * B[j];
      return L(s);
    };
    double directional = 0;
    for (std::size_t i = 0; i < A.size(); ++i) directional += grad.x[i] * A[i];
    for (std::size_t j = 0; j < B.size(); ++j) directional += grad.y[j] * B[j];
    EXPECT_NEAR(directional, (moved(h) - moved(-h)) / (2 * h), 1e-6 * (1 + std::abs(directional)));
    // Weights: a mass-preserving direction keeps balanced problems feasible.
    Vec da = random_vec(static_cast<std::size_t>(inst.n), 18);
    double mean = 0;
    for (double v : da) mean += v / static_cast<double>(da.size());
    for (double& v : da) v = balanced || !ra ? v - mean : v;
    auto weighted = [&](double t) {
      Instance<double> s = inst;
      for (std::size_t i = 0; i < da.size(); ++i) s.a[i] += t * da[i];
      return L(s);
    };
    double dweights = 0;
    for (std::size_t i = 0; i < da.size(); ++i) dweights += grad.a[i] * da[i];
    EXPECT_NEAR(dweights, (weighted(h) - weighted(-h)) / (2 * h), 1e-6 * (1 + std::abs(dweights)));
  }
}

TEST(CTransform, MatchesBruteForceForBothCostsAndBothTypes) {
  for (Cost cost : {Cost::sqeuclidean(), Cost::sqeuclidean(0.5)}) {
    Instance<double> inst(150, 411, 5, 21);
    Instance<float> inst32(150, 411, 5, 21);
    inst.cost = inst32.cost = cost;
    const Vec g = random_vec(static_cast<std::size_t>(inst.m), 22);
    const std::vector<float> g32(g.begin(), g.end());
    const auto ct = c_transform<double>(inst.problem().geometry, g, inst.a, inst.b);
    const auto ct32 = c_transform<float>(inst32.problem().geometry, g32, inst32.a, inst32.b);
    const double cs = 0.5 * cost->kappa();
    double value = 0;
    Vec grad_g(inst.b.begin(), inst.b.end());
    for (std::int64_t i = 0; i < inst.n; ++i) {
      double best = std::numeric_limits<double>::infinity();
      std::int64_t arg = -1;
      for (std::int64_t j = 0; j < inst.m; ++j) {
        double c = 0;
        for (std::int64_t k = 0; k < inst.d; ++k)
          c += std::pow(inst.x[i * inst.d + k] - inst.y[j * inst.d + k], 2);
        if (cs * c - g[j] < best) {
          best = cs * c - g[j];
          arg = j;
        }
      }
      EXPECT_NEAR(ct.values[i], best, 1e-11);
      EXPECT_EQ(ct.argmin[i], arg);
      EXPECT_NEAR(ct32.values[i], best, 2e-5 * (1 + std::abs(best)));
      value += inst.a[i] * best;
      grad_g[arg] -= inst.a[i];
      for (std::int64_t k = 0; k < inst.d; ++k)
        EXPECT_NEAR(ct.grad_x[i * inst.d + k],
                    inst.a[i] * 2 * cs * (inst.x[i * inst.d + k] - inst.y[arg * inst.d + k]),
                    1e-12);
    }
    for (std::int64_t j = 0; j < inst.m; ++j) value += inst.b[j] * g[j];
    EXPECT_NEAR(ct.value, value, 1e-12);
    expect_close(ct.grad_g, grad_g, 1e-12, "grad_g");
  }
  Instance<double> inst(5, 4, 2, 1);
  const Vec short_g(3, 0.0);
  EXPECT_THROW(c_transform<double>(inst.problem().geometry, short_g), InvalidInput);
}

// A random symmetric label table with zero diagonal, and random labels.
struct Labels {
  std::vector<std::int64_t> lx, ly;
  Vec table;
  std::int64_t v;
  Labels(std::int64_t n, std::int64_t m, std::int64_t classes, unsigned seed) : v(classes) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::int64_t> pick(0, classes - 1);
    std::uniform_real_distribution<double> unif(0.2, 2.0);
    for (std::int64_t i = 0; i < n; ++i) lx.push_back(pick(rng));
    for (std::int64_t j = 0; j < m; ++j) ly.push_back(pick(rng));
    table.assign(static_cast<std::size_t>(classes * classes), 0.0);
    for (std::int64_t i = 0; i < classes; ++i)
      for (std::int64_t j = 0; j < i; ++j)
        table[i * classes + j] = table[j * classes + i] = unif(rng);
  }
  LabelCost cost(double weight) const { return {lx, ly, {table.data(), v, v}, weight}; }
};

TEST(LabelCost, StreamedSolveMatchesTheDenseFormulaAndItsGradients) {
  for (bool debias : {false, true}) {
    Instance<double> inst(33, 27, 3, 31);
    const Labels labels(inst.n, inst.m, 4, 32);
    const double lambda = 0.7;
    Settings o = converged_options(0.5);
    auto problem_of = [&](const Instance<double>& s) {
      OtProblem<double> p = s.problem(o.blur);
      p.geometry = PointCloud<double>({s.x.data(), s.n, s.d}, {s.y.data(), s.m, s.d}, s.cost,
                                      labels.cost(lambda));
      return p;
    };
    const auto prob = problem_of(inst);
    // The dense cost matrix is the formula |x_i - y_j|^2 + lambda W[l_i, l_j].
    const auto C = reference::cost_matrix(prob.geometry);
    for (std::int64_t i = 0; i < inst.n; i += 7)
      for (std::int64_t j = 0; j < inst.m; j += 5) {
        double c = 0;
        for (std::int64_t k = 0; k < inst.d; ++k)
          c += std::pow(inst.x[i * inst.d + k] - inst.y[j * inst.d + k], 2);
        EXPECT_NEAR(C[i * inst.m + j], c + lambda * labels.table[labels.lx[i] * 4 + labels.ly[j]],
                    1e-12);
      }
    const auto ref = reference::sinkhorn_dense(prob, o, debias);
    auto loss = [&](const Instance<double>& s) {
      return debias ? sinkhorn_divergence(problem_of(s), o).loss()
                    : sinkhorn(problem_of(s), o).loss();
    };
    EXPECT_NEAR(loss(inst), ref.loss, 1e-10);
    const auto grad =
        debias ? sinkhorn_divergence(prob, o).gradients() : sinkhorn(prob, o).gradients();
    Instance<double> moved = inst;
    const double h = 1e-5;
    for (std::size_t idx : {0ul, 5ul, 40ul}) {
      moved.x[idx] = inst.x[idx] + h;
      const double up = loss(moved);
      moved.x[idx] = inst.x[idx] - h;
      const double down = loss(moved);
      moved.x[idx] = inst.x[idx];
      EXPECT_NEAR(grad.x[idx], (up - down) / (2 * h), 1e-6);
    }
    if (!debias) {
      const auto sol = sinkhorn(prob, o);
      // The plan's transport cost counts the label term: <P, C> from the dense plan.
      const auto P = sol.dense_plan();
      double cost = 0;
      for (std::size_t k = 0; k < P.size(); ++k) cost += P[k] * C[k];
      EXPECT_NEAR(sol.report().transport_cost, cost, 1e-9);
    }
  }
}

TEST(LabelCost, RejectsBadTablesAndLabels) {
  Instance<double> inst(6, 5, 2, 1);
  Labels labels(inst.n, inst.m, 3, 2);
  auto build = [&](const Labels& l, double w = 1.0) {
    return PointCloud<double>({inst.x.data(), inst.n, inst.d}, {inst.y.data(), inst.m, inst.d},
                              Cost::sqeuclidean(), l.cost(w));
  };
  EXPECT_NO_THROW(build(labels));
  Labels asym = labels;
  asym.table[1] += 0.5;
  EXPECT_THROW(build(asym), InvalidInput);
  Labels out_of_range = labels;
  out_of_range.lx[2] = 3;
  EXPECT_THROW(build(out_of_range), InvalidInput);
  EXPECT_THROW(build(labels, -1.0), InvalidInput);
}

}  // namespace
}  // namespace birkhoff::transport
