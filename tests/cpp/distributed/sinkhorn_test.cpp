// Run under mpirun (ctest: 2 and 3 ranks): the distributed solver against the single-process
// one on every rank, bit for bit, and the ranks' agreement on their inputs.
#include "birkhoff/distributed/sinkhorn.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "transport/fixtures.hpp"

namespace birkhoff::distributed {
namespace {

using transport::testing::Instance;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

template <class T>
bool same_bits(std::span<const T> u, std::span<const T> v) {
  return u.size() == v.size() && std::memcmp(u.data(), v.data(), u.size_bytes()) == 0;
}

// Slices are pure arithmetic: no ranks needed.
RC_GTEST_PROP(Slice, TilesTheRowsInRankOrderWithSizesOneApart, ()) {
  const auto n = *rc::gen::inRange<std::int64_t>(0, 100000);
  const int size = *rc::gen::inRange(1, 65);
  std::int64_t next = 0, least = n, most = 0;
  for (int r = 0; r < size; ++r) {
    const Slice s = slice(n, r, size);
    RC_ASSERT(s.begin == next);
    RC_ASSERT(s.end >= s.begin);
    least = std::min(least, s.end - s.begin);
    most = std::max(most, s.end - s.begin);
    next = s.end;
  }
  RC_ASSERT(next == n);
  RC_ASSERT(most - least <= 1);
}

template <class T>
class SameBits : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SameBits, Types);

template <class T>
void expect_same(const transport::Solution<T>& got, const transport::Solution<T>& want) {
  EXPECT_TRUE(same_bits(got.f(), want.f()));
  EXPECT_TRUE(same_bits(got.g(), want.g()));
  EXPECT_EQ(got.loss(), want.loss());
  EXPECT_EQ(got.report().marginal_error, want.report().marginal_error);
  EXPECT_EQ(got.report().transport_cost, want.report().transport_cost);
  EXPECT_EQ(got.report().iterations, want.report().iterations);
  EXPECT_EQ(got.report().marginal_errors, want.report().marginal_errors);
}

TYPED_TEST(SameBits, BalancedAndUnbalancedOnSizesNoRankCountDivides) {
  using T = TypeParam;
  for (const auto& [n, m, d] : {std::tuple{37, 29, 3}, {1, 5, 2}, {2, 61, 4}, {53, 1, 1}}) {
    Instance<T> inst(n, m, d, 11u + static_cast<unsigned>(n));
    const auto balanced = inst.problem(0.5);
    expect_same(sinkhorn(balanced, {}, MPI_COMM_WORLD), transport::sinkhorn(balanced));
    inst.reach_a = 1.0;
    inst.reach_b = 2.0;
    const auto unbalanced = inst.problem(0.5);
    expect_same(sinkhorn(unbalanced, {}, MPI_COMM_WORLD), transport::sinkhorn(unbalanced));
  }
}

TYPED_TEST(SameBits, DebiasedDivergence) {
  using T = TypeParam;
  Instance<T> inst(31, 26, 2, 5u);
  const auto p = inst.problem(0.5);
  const auto got = sinkhorn_divergence(p, {}, MPI_COMM_WORLD);
  const auto want = transport::sinkhorn_divergence(p);
  EXPECT_EQ(got.loss(), want.loss());
  EXPECT_TRUE(same_bits(got.f_aa(), want.f_aa()));
  EXPECT_TRUE(same_bits(got.g_bb(), want.g_bb()));
  expect_same(got.xy(), want.xy());
}

TEST(SameBits, LabelAugmentedCost) {
  Instance<double> inst(29, 34, 3, 9u);
  std::vector<std::int64_t> lx, ly;
  for (int i = 0; i < 29; ++i) lx.push_back(i % 3);
  for (int j = 0; j < 34; ++j) ly.push_back((j * 7) % 3);
  const std::vector<double> table = {0, 1, 2, 1, 0, 1, 2, 1, 0};
  auto p = inst.problem(0.5);
  p.geometry = transport::PointCloud<double>({inst.x.data(), 29, 3}, {inst.y.data(), 34, 3},
                                             transport::Cost::sqeuclidean(),
                                             {lx, ly, {table.data(), 3, 3}, 0.5});
  expect_same(sinkhorn(p, {}, MPI_COMM_WORLD), transport::sinkhorn(p));
}

// Clouds in the unit square against a shifted copy, with 16-point blocks: enough superblocks
// for every rank to hold some (and some none), and blur small enough to prune most pairs.
template <class T>
transport::OtProblem<T> plane(std::vector<T>& x, std::vector<T>& y, std::int64_t n,
                              std::int64_t m) {
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  };
  x.resize(static_cast<std::size_t>(2 * n));
  y.resize(static_cast<std::size_t>(2 * m));
  for (auto& v : x) v = static_cast<T>(next());
  for (auto& v : y) v = static_cast<T>(next() + 0.2);
  transport::OtProblem<T> p;
  p.geometry = transport::PointCloud<T>({x.data(), n, 2}, {y.data(), m, 2});
  p.epsilon = 0.03 * 0.03;
  return p;
}

TYPED_TEST(SameBits, MultiscaleSolveDivergenceAndProducts) {
  using T = TypeParam;
  std::vector<T> x, y;
  const auto p = plane<T>(x, y, 1700, 1500);
  transport::SinkhornOptions o;
  o.backend = transport::Backend::Multiscale;
  o.block_size = 16;
  const auto got = sinkhorn(p, o, MPI_COMM_WORLD);
  const auto want = transport::sinkhorn(p, o);
  EXPECT_EQ(got.report().backend, "multiscale");
  EXPECT_LT(got.report().kept_fraction, 0.5);
  EXPECT_EQ(got.report().kept_fraction, want.report().kept_fraction);
  EXPECT_EQ(got.report().truncation_bound, want.report().truncation_bound);
  expect_same(got, want);
  const auto gg = got.gradients(), gw = want.gradients();
  EXPECT_TRUE(same_bits<T>(gg.x, gw.x));
  EXPECT_TRUE(same_bits<T>(gg.y, gw.y));
  const auto dg = sinkhorn_divergence(p, o, MPI_COMM_WORLD);
  const auto dw = transport::sinkhorn_divergence(p, o);
  EXPECT_EQ(dg.loss(), dw.loss());
  EXPECT_TRUE(same_bits(dg.f_aa(), dw.f_aa()));
  EXPECT_TRUE(same_bits(dg.g_bb(), dw.g_bb()));
  expect_same(dg.xy(), dw.xy());
  // auto picks multiscale under MPI too (here: asked, so the report says so).
  EXPECT_EQ(dg.xy().report().backend, "multiscale");
  // Partial OT on the block-sparse passes keeps the same bits too.
  auto pp = p;
  pp.marginals = transport::Partial{0.5};
  const auto pg = sinkhorn(pp, o, MPI_COMM_WORLD);
  const auto pw = transport::sinkhorn(pp, o);
  EXPECT_EQ(pg.report().backend, "multiscale");
  EXPECT_EQ(pg.multiplier(), pw.multiplier());
  expect_same(pg, pw);
}

TEST(Agree, AnotherShapeOnTheLastRankIsAnErrorOnEveryRank) {
  const int last = world_size() - 1;
  const std::int64_t d = world_rank() == last && last > 0 ? 4 : 3;
  try {
    agree(MPI_COMM_WORLD, "", {{"x", {10, d}, 0}});
    EXPECT_EQ(last, 0);
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "x: has shape (10, 4) on rank " + std::to_string(last) + " but (10, 3) on rank 0");
  }
}

TEST(Agree, OtherValuesOrALocalErrorAreErrorsOnEveryRank) {
  const int last = world_size() - 1;
  const bool odd = world_rank() == last && last > 0;
  EXPECT_THROW(agree(MPI_COMM_WORLD, "", {{"y", {7, 2}, odd ? 2u : 1u}}), InvalidInput)
      << "rank " << world_rank();
  try {
    agree(MPI_COMM_WORLD, world_rank() == last ? "SOURCE: cannot open file" : "");
    ADD_FAILURE() << "a local error was not raised";
  } catch (const InvalidInput& e) {
    const std::string where = last > 0 ? " (on rank " + std::to_string(last) + ")" : "";
    EXPECT_EQ(std::string(e.what()), "SOURCE: cannot open file" + where);
  }
  EXPECT_NO_THROW(agree(MPI_COMM_WORLD, "", {{"y", {7, 2}, 1u}}));
}

}  // namespace
}  // namespace birkhoff::distributed

// MPI around the tests; the run fails when a test failed on any rank.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
