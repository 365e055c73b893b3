// The block structure of the multiscale backend: column sub-blocks refine the row blocks
// without changing them, and block-sparse passes that keep columns by sub-block stay within
// their certified bound while keeping fewer pairs.
#include "transport/blocks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/block_order.hpp"
#include "transport/block_sparse.hpp"
#include "transport/fixtures.hpp"
#include "transport/state.hpp"

namespace birkhoff::transport {
namespace {

double mean_diagonal(const detail::Blocks& b) {
  double s = 0;
  for (std::int64_t k = 0; k < b.count; ++k) {
    double d2 = 0;
    for (std::int64_t c = 0; c < b.d; ++c) {
      const auto q = static_cast<std::size_t>(k * b.d + c);
      d2 += (b.hi[q] - b.lo[q]) * (b.hi[q] - b.lo[q]);
    }
    s += std::sqrt(d2);
  }
  return s / static_cast<double>(b.count);
}

TEST(Blocks, SubBlocksRefineTheBlocksWithoutChangingThem) {
  for (unsigned seed = 0; seed < 8; ++seed) {
    const std::int64_t d = 1 + seed % 4, n = 1000 + 77 * seed;  // not a multiple of the sizes
    const auto p = testing::uniform_points(n, d, 0.0, seed);
    std::vector<double> w(static_cast<std::size_t>(n));
    std::mt19937 rng(seed + 50);
    std::uniform_real_distribution<double> u(0.5, 1.5);
    for (double& v : w) v = u(rng);
    const MatrixView<const double> pts{p.data(), n, d};
    const auto plain = detail::make_blocks(pts, std::span<const double>(w), 32);
    const auto fine = detail::make_blocks(pts, std::span<const double>(w), 32, 8);
    const auto sub = detail::sub_blocks(fine, pts, std::span<const double>(w), 8);
    ASSERT_EQ(fine.count, plain.count);
    ASSERT_EQ(sub.count, (n + 7) / 8);
    for (std::int64_t b = 0; b < fine.count; ++b) {
      // The same points in each block, in another order.
      std::vector<std::int64_t> a(plain.order.begin() + plain.begin(b),
                                  plain.order.begin() + plain.end(b));
      std::vector<std::int64_t> c(fine.order.begin() + fine.begin(b),
                                  fine.order.begin() + fine.end(b));
      std::sort(a.begin(), a.end());
      std::sort(c.begin(), c.end());
      EXPECT_EQ(a, c) << "seed " << seed << " block " << b;
      // Its sub-blocks lie in its box and carry its mass.
      double mass = 0;
      for (std::int64_t s = b * 4; s < std::min(sub.count, (b + 1) * 4); ++s) {
        mass += sub.mass[static_cast<std::size_t>(s)];
        for (std::int64_t k = 0; k < d; ++k) {
          EXPECT_GE(sub.lo[static_cast<std::size_t>(s * d + k)],
                    fine.lo[static_cast<std::size_t>(b * d + k)]);
          EXPECT_LE(sub.hi[static_cast<std::size_t>(s * d + k)],
                    fine.hi[static_cast<std::size_t>(b * d + k)]);
        }
      }
      EXPECT_NEAR(mass, fine.mass[static_cast<std::size_t>(b)], 1e-12);
    }
    // Compact runs: in d dimensions a quarter of the points spans about 4^(-1/d) of the extent.
    EXPECT_LT(mean_diagonal(sub),
              std::pow(0.25, 1.0 / static_cast<double>(d)) * 1.2 * mean_diagonal(fine))
        << "seed " << seed;
  }
}

TEST(Blocks, ColumnSubBlocksKeepFewerPairsWithinTheCertifiedBound) {
  // Potentials near a solution; the truncated soft c-transform of each side with columns kept
  // by blocks of 32 and by sub-blocks of 8: both within their certificate of the dense one,
  // the sub-blocks keeping fewer pairs.
  const std::int64_t n = 4000, m = 3600, d = 3;
  const auto x = testing::uniform_points(n, d, 0.0, 3), y = testing::uniform_points(m, d, 0.2, 4);
  const double blur = 0.03, eps = blur * blur;
  auto p = testing::make_problem(x, n, y, m, d, blur);
  SinkhornOptions o;
  o.backend = Backend::Multiscale;
  o.max_iter = 40;
  const auto sol = sinkhorn(p, o);
  const testing::BlockOrdered ob(p.geometry, 32, 8);
  const auto fh = detail::shifted<double>(ob.of_x(sol.f()), ob.x.sqnorm);
  const auto gh = detail::shifted<double>(ob.of_y(sol.g()), ob.y.sqnorm);
  detail::BlockSparsePasses<double> blocks(ob.x, ob.y, ob.bx, ob.by, 1.0, 1e-5, 2);
  detail::BlockSparsePasses<double> sub(ob.x, ob.y, ob.bx, ob.by, 1.0, 1e-5, 2, &ob.cx, &ob.cy);
  detail::DensePasses<double> dense(ob.x, ob.y, 2.0, 2);
  detail::LseOut<double> scratch;
  for (const auto rows : {detail::Axis::X, detail::Axis::Y}) {
    const auto cols = rows == detail::Axis::X ? detail::Axis::Y : detail::Axis::X;
    const auto& rh = rows == detail::Axis::X ? fh : gh;
    const auto& ch = rows == detail::Axis::X ? gh : fh;
    std::vector<double> exact, by_blocks, by_sub;
    detail::softmin<double>(dense, rows, cols, rh, ch, eps, scratch, exact);
    detail::softmin<double>(blocks, rows, cols, rh, ch, eps, scratch, by_blocks);
    detail::softmin<double>(sub, rows, cols, rh, ch, eps, scratch, by_sub);
    const double bound_blocks = blocks.certify(rows, cols, by_blocks, ch, eps);
    const double bound_sub = sub.certify(rows, cols, by_sub, ch, eps);
    double err_blocks = 0, err_sub = 0;
    for (std::size_t i = 0; i < exact.size(); ++i) {
      err_blocks = std::max(err_blocks, std::abs(exact[i] - by_blocks[i]));
      err_sub = std::max(err_sub, std::abs(exact[i] - by_sub[i]));
    }
    EXPECT_LE(err_blocks, bound_blocks + 1e-13);
    EXPECT_LE(err_sub, bound_sub + 1e-13);
    EXPECT_LE(bound_sub, 1e-5 * eps);
  }
  EXPECT_LT(sub.kept_fraction(), 0.85 * blocks.kept_fraction());
  EXPECT_GT(sub.kept_fraction(), 0.0);
}

}  // namespace
}  // namespace birkhoff::transport
