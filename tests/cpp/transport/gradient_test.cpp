// Envelope gradients against central finite differences of the converged value (float64).
#include <gtest/gtest.h>

#include <cmath>

#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/fixtures.hpp"

namespace birkhoff::transport {
namespace {

using testing::Instance;
using testing::Settings;
using testing::to_vector;

Settings converged_options() {
  Settings o;
  o.blur = 0.8;
  o.iterations = 3000;
  o.tol = 1e-13;
  return o;
}

template <class Loss>
void check_gradient(Instance<double>& inst, const Gradients<double>& grad, Loss loss) {
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
}

TEST(Gradients, MatchFiniteDifferencesForBalancedUnbalancedAndHalfCost) {
  const std::optional<double> none;
  const std::pair<std::optional<double>, std::optional<double>> reaches[] = {
      {none, none}, {1.0, 1.0}, {1.0, none}, {none, 2.0}};
  for (Cost cost : {Cost::sqeuclidean(), Cost::sqeuclidean(0.5)})
    for (const auto& [ra, rb] : reaches) {
      Instance<double> inst(12, 10, 3, 19);
      inst.cost = cost;
      inst.reach_a = ra;
      inst.reach_b = rb;
      const auto o = converged_options();
      const auto r = sinkhorn(inst.problem(o.blur), o);
      const auto grad = r.gradients();
      check_gradient(inst, grad, [&](const Instance<double>& i) {
        return sinkhorn(i.problem(o.blur), o).loss();
      });
    }
}

TEST(Gradients, OfTheDivergenceMatchFiniteDifferences) {
  Instance<double> inst(12, 10, 3, 21);
  const auto o = converged_options();
  const auto r = sinkhorn_divergence(inst.problem(o.blur), o);
  const auto grad = r.gradients();
  check_gradient(inst, grad, [&](const Instance<double>& i) {
    return sinkhorn_divergence(i.problem(o.blur), o).loss();
  });
}

TEST(Gradients, WithRespectToWeightsMatchFiniteDifferencesAlongMassPreservingMoves) {
  // Balanced OT is defined on equal masses, so move mass between two points of a.
  Instance<double> inst(12, 10, 2, 29);
  const auto o = converged_options();
  const auto r = sinkhorn(inst.problem(o.blur), o);
  const auto grad = r.gradients();
  const double h = 1e-6;
  inst.a[2] += h;
  inst.a[5] -= h;
  const double up = sinkhorn(inst.problem(o.blur), o).loss();
  inst.a[2] -= 2 * h;
  inst.a[5] += 2 * h;
  const double down = sinkhorn(inst.problem(o.blur), o).loss();
  EXPECT_NEAR(grad.a[2] - grad.a[5], (up - down) / (2 * h), 1e-6);
  // Unbalanced: any direction.
  Instance<double> u(12, 10, 2, 31);
  u.reach_a = 1.0;
  u.reach_b = 1.5;
  const auto ru = sinkhorn(u.problem(o.blur), o);
  const auto gu = ru.gradients();
  const double keep = u.b[3];
  u.b[3] = keep + h;
  const double bu = sinkhorn(u.problem(o.blur), o).loss();
  u.b[3] = keep - h;
  const double bd = sinkhorn(u.problem(o.blur), o).loss();
  EXPECT_NEAR(gu.b[3], (bu - bd) / (2 * h), 1e-6);
}

}  // namespace
}  // namespace birkhoff::transport
