// The backend seam: the solver visits the pairs through the chosen backend's passes only,
// choose() reports why, a registry without multiscale refuses it by name, and the small SPD
// solve.
#include "transport/backend.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <string>

#include "birkhoff/core/error.hpp"
#include "transport/fixtures.hpp"
#include "transport/solver.hpp"
#include "transport/spd.hpp"

namespace birkhoff::transport {
namespace {

using detail::Axis;
using detail::Passes;
using detail::Side;

// Dense passes that count the pairs they visit.
template <class T>
class CountingPasses final : public Passes<T> {
 public:
  CountingPasses(std::unique_ptr<Passes<T>> inner, std::atomic<std::int64_t>& pairs, std::int64_t n,
                 std::int64_t m)
      : inner_(std::move(inner)), pairs_(pairs), nm_(n * m) {}
  void lse(Axis rows, Axis cols, const std::vector<T>& row_hat, const std::vector<T>& col_hat,
           double eps, detail::LseOut<T>& out, const T* values, std::int64_t dv,
           const detail::Modulation<T>& mod) override {
    pairs_ += nm_;
    inner_->lse(rows, cols, row_hat, col_hat, eps, out, values, dv, mod);
  }
  void min(Axis rows, Axis cols, const std::vector<T>& col_hat, std::vector<T>& out,
           std::vector<std::int64_t>& argmin) override {
    pairs_ += nm_;
    inner_->min(rows, cols, col_hat, out, argmin);
  }

 private:
  std::unique_ptr<Passes<T>> inner_;
  std::atomic<std::int64_t>& pairs_;
  std::int64_t nm_;
};

template <class T>
class CountingBackend final : public detail::RowBackend<T> {
 public:
  std::unique_ptr<Passes<T>> passes(const Side<T>& x, const Side<T>& y, double kappa,
                                    int threads) const override {
    return std::make_unique<CountingPasses<T>>(
        detail::dense_backend<T>().passes(x, y, kappa, threads), pairs, x.n, y.n);
  }
  mutable std::atomic<std::int64_t> pairs{0};
};

detail::Registry counting_registry(const std::shared_ptr<CountingBackend<double>>& backend) {
  detail::Registry r;
  r.dense.f64 = backend;
  r.dense.f32 = std::shared_ptr<const detail::RowBackend<float>>(&detail::dense_backend<float>(),
                                                                 [](auto*) {});
  r.without_multiscale = "is not in this test's registry";
  return r;
}

TEST(BackendSeam, TheSolverVisitsThePairsThroughTheRegisteredBackendOnly) {
  testing::Instance<double> inst(60, 50, 3, 4);
  auto backend = std::make_shared<CountingBackend<double>>();
  const auto registry = counting_registry(backend);
  SinkhornOptions o;
  const Solution<double> via = detail::sinkhorn_with(inst.problem(0.3), o, registry);
  const Solution<double> local = sinkhorn(inst.problem(0.3), o);
  // Every pass of the solve was the counting backend's (two per iteration at least), and the
  // answer is the dense backend's to the bit.
  EXPECT_GE(backend->pairs.load(), 2 * via.report().iterations * 60 * 50);
  ASSERT_EQ(via.f().size(), local.f().size());
  for (std::size_t i = 0; i < via.f().size(); ++i) EXPECT_EQ(via.f()[i], local.f()[i]);
  for (std::size_t j = 0; j < via.g().size(); ++j) EXPECT_EQ(via.g()[j], local.g()[j]);
  EXPECT_EQ(via.loss(), local.loss());
  EXPECT_EQ(via.report().backend_reason, "fewer than 1e8 pairs");

  const auto before = backend->pairs.load();
  const auto div = detail::sinkhorn_divergence_with(inst.problem(0.3), o, registry);
  EXPECT_GT(backend->pairs.load(), before);
  EXPECT_EQ(div.loss(), sinkhorn_divergence(inst.problem(0.3), o).loss());
  EXPECT_EQ(div.xy().report().backend_reason, "fewer than 1e8 pairs");
}

TEST(BackendSeam, AutoPicksMultiscaleWhateverTheKeptFractionUpToDimensionEight) {
  // A blur of the data's size keeps every block pair; multiscale still pays (fewer iterations).
  SinkhornOptions o;
  testing::Instance<double> wide(10000, 10000, 3, 5, true);
  const auto chosen = detail::choose(detail::Registry::local(), wide.problem(1.0), o);
  EXPECT_EQ(chosen.kind, Backend::Multiscale) << chosen.reason;
  testing::Instance<double> high(10000, 10000, 9, 5, true);
  const auto dense = detail::choose(detail::Registry::local(), high.problem(1.0), o);
  EXPECT_EQ(dense.kind, Backend::Dense);
  EXPECT_EQ(dense.reason, "dimension above 8");
}

TEST(BackendSeam, ARegistryWithoutMultiscaleRefusesItByNameAndAutoSaysWhy) {
  // 1e4 x 1e4 points in the plane at a small blur: auto's rules pick multiscale (choose()
  // only judges, nothing is solved).
  testing::Instance<double> inst(10000, 10000, 2, 5, true);
  const auto problem = inst.problem(0.01);
  auto backend = std::make_shared<CountingBackend<double>>();
  const auto registry = counting_registry(backend);
  SinkhornOptions o;
  const auto local = detail::choose(detail::Registry::local(), problem, o);
  EXPECT_EQ(local.kind, Backend::Multiscale);
  EXPECT_EQ(local.reason.rfind("expected kept fraction", 0), 0u) << local.reason;
  const auto here = detail::choose(registry, problem, o);
  EXPECT_EQ(here.kind, Backend::Dense);
  EXPECT_EQ(here.backend, backend.get());
  EXPECT_NE(here.reason.find("is not in this test's registry (multiscale: expected kept"),
            std::string::npos)
      << here.reason;
  o.backend = Backend::Multiscale;
  try {
    detail::choose(registry, problem, o);
    ADD_FAILURE() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()).rfind("backend: the multiscale backend is not in", 0), 0u)
        << e.what();
  }
  o.backend = Backend::Dense;
  EXPECT_EQ(detail::choose(detail::Registry::local(), problem, o).reason, "asked for");
}

TEST(SpdSolve, SolvesPositiveDefiniteSystemsAndRefusesIndefiniteOnes) {
  std::mt19937 rng(3);
  std::normal_distribution<double> z;
  for (std::int64_t k : {1, 2, 5, 9}) {
    std::vector<double> g(static_cast<std::size_t>(k * k)), a(g.size()), b(k), x(k);
    for (double& v : g) v = z(rng);
    for (std::int64_t i = 0; i < k; ++i)
      for (std::int64_t j = 0; j < k; ++j) {
        double s = i == j ? 0.5 : 0.0;
        for (std::int64_t q = 0; q < k; ++q) s += g[i * k + q] * g[j * k + q];
        a[i * k + j] = s;
      }
    for (double& v : b) v = z(rng);
    std::vector<double> factor = a;
    x = b;
    ASSERT_TRUE(detail::spd_solve(factor.data(), x.data(), k));
    for (std::int64_t i = 0; i < k; ++i) {
      double r = -b[i];
      for (std::int64_t j = 0; j < k; ++j) r += a[i * k + j] * x[j];
      EXPECT_NEAR(r, 0.0, 1e-10 * (1 + std::abs(b[i])));
    }
  }
  std::vector<double> indefinite = {1, 2, 2, 1}, rhs = {1, 1};
  EXPECT_FALSE(detail::spd_solve(indefinite.data(), rhs.data(), 2));
}

}  // namespace
}  // namespace birkhoff::transport
