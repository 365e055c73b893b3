// Every bad input is an InvalidInput whose message starts with the argument's name.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/fixtures.hpp"

namespace birkhoff::transport {
namespace {

using testing::Instance;
using testing::Settings;
using testing::to_vector;

template <class F>
void expect_invalid(F f, const std::string& argument) {
  try {
    f();
    ADD_FAILURE() << "no exception for " << argument;
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()).rfind(argument + ":", 0), 0u) << e.what();
  }
}

TEST(SinkhornErrors, NameTheOffendingArgument) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto solve = [](const Instance<double>& i, Settings o = {}) {
    return sinkhorn(i.problem(o.blur), o);
  };

  Instance<double> empty(5, 5, 2, 1);
  const MatrixView<const double> x(empty.x.data(), 5, 2), y(empty.y.data(), 5, 2);
  expect_invalid([&] { PointCloud<double>({empty.x.data(), 0, 2}, y); }, "x");
  expect_invalid([&] { PointCloud<double>(x, {empty.y.data(), 0, 2}); }, "y");
  expect_invalid([&] { PointCloud<double>(x, {empty.y.data(), 5, 1, 2}); }, "y");
  expect_invalid([&] { sinkhorn(OtProblem<double>{}); }, "geometry");

  for (double bad : {nan, inf}) {
    Instance<double> i(5, 6, 2, 1);
    i.x[3] = bad;
    expect_invalid([&] { solve(i); }, "x");
    Instance<double> j(5, 6, 2, 1);
    j.y[0] = bad;
    expect_invalid([&] { solve(j); }, "y");
    Instance<double> k(5, 6, 2, 1);
    k.a[1] = bad;
    expect_invalid([&] { solve(k); }, "a");
  }
  Instance<double> neg(5, 6, 2, 1);
  neg.b[2] = -0.1;
  expect_invalid([&] { solve(neg); }, "b");
  Instance<double> zero(5, 6, 2, 1);
  for (auto& v : zero.a) v = 0;
  expect_invalid([&] { solve(zero); }, "a");
  Instance<double> len(5, 6, 2, 1);
  len.a.pop_back();
  expect_invalid([&] { solve(len); }, "a");
  Instance<double> masses(5, 6, 2, 1);
  for (auto& v : masses.a) v *= 2;
  expect_invalid([&] { solve(masses); }, "b");
  masses.reach_a = 1.0;  // unbalanced: unequal masses are fine
  EXPECT_NO_THROW(solve(masses));

  Instance<double> ok(5, 6, 2, 1);
  for (double eps : {0.0, -1.0, nan, inf}) {
    auto p = ok.problem();
    p.epsilon = eps;
    expect_invalid([&] { sinkhorn(p); }, "epsilon");
  }
  for (double s : {0.0, 1.0, 1.5}) {
    Settings o;
    o.scaling = s;
    expect_invalid([&] { solve(ok, o); }, "scaling");
  }
  ok.reach_a = -1.0;
  expect_invalid([&] { solve(ok); }, "reach_a");
}

TEST(SinkhornErrors, RejectParametersBeyondThePrecision) {
  Instance<double> i(5, 6, 2, 1);
  for (double blur : {1e-160, 1e200}) expect_invalid([&] { sinkhorn(i.problem(blur)); }, "epsilon");
  i.reach_a = 1e-200;
  expect_invalid([&] { sinkhorn(i.problem()); }, "reach_a");
  i.reach_a.reset();
  // (Epsilon below what float32 resolves is solved in float64: Converge tests.)
  Instance<float> f(5, 6, 2, 1);
  // Squared coordinates overflowing float32.
  for (auto& v : f.x) v *= 1e20f;
  expect_invalid([&] { sinkhorn(f.problem()); }, "x");
  // A schedule of astronomically many steps is refused; a huge fixed count costs no memory.
  Settings slow;
  slow.scaling = 0.9999999999999999;
  expect_invalid([&] { sinkhorn(i.problem(slow.blur), slow); }, "scaling");
  Settings tol_alone;
  tol_alone.tol = 1e-3;
  expect_invalid([&] { sinkhorn(i.problem(tol_alone.blur), tol_alone); }, "tol");
}

TEST(SinkhornErrors, AHugeIterationCountNeedsNoMemory) {
  Instance<double> i(5, 6, 2, 1);
  Settings o;
  o.blur = 1.0;
  o.iterations = 2147483647;
  o.tol = 1e-12;
  const auto r = sinkhorn(i.problem(o.blur), o);
  EXPECT_TRUE(r.report().stopped_early);
  EXPECT_TRUE(r.converged());
}

TEST(SinkhornErrors, CancellationComesFromTheProgressCallback) {
  Instance<float> i(20, 20, 2, 1);
  Settings o;
  int calls = 0;
  o.progress = [&](const ProgressInfo& info) {
    EXPECT_EQ(info.stage, "sinkhorn");
    return ++calls < 3;
  };
  EXPECT_THROW(sinkhorn(i.problem(o.blur), o), Cancelled);
  EXPECT_EQ(calls, 3);
}

TEST(SolutionErrors, RejectShapeMismatchAndNonFiniteVectors) {
  Instance<double> i(5, 6, 2, 1);
  const auto plan = sinkhorn(i.problem());
  std::vector<double> v(5), out(5);
  expect_invalid(
      [&] {
        plan.apply(MatrixView<const double>(v.data(), 5, 1), MatrixView<double>(out.data(), 5, 1));
      },
      "v");
  std::vector<double> v6(6, std::nan("")), out6(5);
  expect_invalid(
      [&] {
        plan.apply(MatrixView<const double>(v6.data(), 6, 1),
                   MatrixView<double>(out6.data(), 5, 1));
      },
      "v");
}

}  // namespace
}  // namespace birkhoff::transport
