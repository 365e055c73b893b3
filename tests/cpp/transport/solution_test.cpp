#include "birkhoff/transport/solution.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "transport/fixtures.hpp"

namespace birkhoff::transport {
namespace {

using testing::Instance;
using testing::Settings;
using testing::to_vector;

TEST(Solution, ProductsMatchTheDensePlan) {
  for (bool use_float : {false, true}) {
    Instance<double> inst(53, 47, 6, 41, false, true);
    Settings o;
    o.blur = 0.5;
    const auto r = sinkhorn(inst.problem(o.blur), o);
    const auto& plan = r;
    const auto p = plan.dense_plan();
    std::vector<double> v(static_cast<std::size_t>(inst.m * 3)),
        u(static_cast<std::size_t>(inst.n * 2));
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::sin(static_cast<double>(k));
    for (std::size_t k = 0; k < u.size(); ++k) u[k] = std::cos(static_cast<double>(k));
    std::vector<double> pv(static_cast<std::size_t>(inst.n * 3)),
        ptu(static_cast<std::size_t>(inst.m * 2));
    const double tol = use_float ? 1e-5 : 1e-12;
    if (use_float) {
      Instance<float> fi(53, 47, 6, 41, false, true);
      const auto rf = sinkhorn(fi.problem(o.blur), o);
      const auto& pf = rf;
      std::vector<float> vf(v.begin(), v.end()), uf(u.begin(), u.end());
      std::vector<float> pvf(pv.size()), ptuf(ptu.size());
      pf.apply(MatrixView<const float>(vf.data(), inst.m, 3),
               MatrixView<float>(pvf.data(), inst.n, 3));
      pf.apply_transpose(MatrixView<const float>(uf.data(), inst.n, 2),
                         MatrixView<float>(ptuf.data(), inst.m, 2));
      pv.assign(pvf.begin(), pvf.end());
      ptu.assign(ptuf.begin(), ptuf.end());
    } else {
      plan.apply(MatrixView<const double>(v.data(), inst.m, 3),
                 MatrixView<double>(pv.data(), inst.n, 3));
      plan.apply_transpose(MatrixView<const double>(u.data(), inst.n, 2),
                           MatrixView<double>(ptu.data(), inst.m, 2));
    }
    for (std::int64_t i = 0; i < inst.n; ++i)
      for (std::int64_t k = 0; k < 3; ++k) {
        double want = 0;
        for (std::int64_t j = 0; j < inst.m; ++j)
          want +=
              p[static_cast<std::size_t>(i * inst.m + j)] * v[static_cast<std::size_t>(j * 3 + k)];
        ASSERT_NEAR(pv[static_cast<std::size_t>(i * 3 + k)], want, tol) << i;
      }
    for (std::int64_t j = 0; j < inst.m; ++j)
      for (std::int64_t k = 0; k < 2; ++k) {
        double want = 0;
        for (std::int64_t i = 0; i < inst.n; ++i)
          want +=
              p[static_cast<std::size_t>(i * inst.m + j)] * u[static_cast<std::size_t>(i * 2 + k)];
        ASSERT_NEAR(ptu[static_cast<std::size_t>(j * 2 + k)], want, tol) << j;
      }
  }
}

TEST(Solution, MarginalsAndBarycentricMapMatchTheDensePlan) {
  Instance<double> inst(40, 35, 3, 43);
  for (auto& v : inst.x) v += 10;  // far from the origin: the map must add the centre back
  for (auto& v : inst.y) v += 10;
  Settings o;
  o.blur = 0.3;
  o.iterations = 5000;
  o.tol = 1e-12;
  const auto r = sinkhorn(inst.problem(o.blur), o);
  const auto& plan = r;
  const auto p = plan.dense_plan();
  const auto rows = plan.row_marginal();
  const auto cols = plan.col_marginal();
  const auto bar = plan.barycentric_map();
  for (std::int64_t i = 0; i < inst.n; ++i) {
    double s = 0, yk[3] = {0, 0, 0};
    for (std::int64_t j = 0; j < inst.m; ++j) {
      const double pij = p[static_cast<std::size_t>(i * inst.m + j)];
      s += pij;
      for (int k = 0; k < 3; ++k) yk[k] += pij * inst.y[static_cast<std::size_t>(j * 3 + k)];
    }
    ASSERT_NEAR(rows[static_cast<std::size_t>(i)], s, 1e-12);
    for (int k = 0; k < 3; ++k)
      ASSERT_NEAR(bar[static_cast<std::size_t>(i * 3 + k)], yk[k] / s, 1e-9);
  }
  double total = 0;
  for (double c : cols) total += c;
  EXPECT_NEAR(total, 1.0, 1e-6);
  EXPECT_LT(r.report().marginal_error, 1e-6);
}

}  // namespace
}  // namespace birkhoff::transport
