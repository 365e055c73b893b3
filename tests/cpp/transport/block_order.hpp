// The clouds of a problem sorted into blocks, with uniform weights, as the block-sparse passes
// read them: for tests of the private passes.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "birkhoff/transport/geometry.hpp"
#include "transport/blocks.hpp"
#include "transport/streams.hpp"

namespace birkhoff::transport::testing {

/// n points uniform in [0, 1]^d plus a shift, row-major (n, d).
inline std::vector<double> uniform_points(std::int64_t n, std::int64_t d, double shift,
                                          unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> p(static_cast<std::size_t>(n * d));
  for (double& v : p) v = shift + u(rng);
  return p;
}

/// Holds the sorted points the sides point into, so it stays where it was made.
/// With 0 < sub < block, each block's points are ordered in compact runs of sub points too, and
/// cx, cy describe those column sub-blocks (else they repeat bx, by).
struct BlockOrdered {
  detail::Blocks bx, by, cx, cy;
  std::vector<double> xs, ys;
  PointCloud<double> geometry;
  detail::Weights<double> wa, wb;
  detail::Side<double> x, y;

  BlockOrdered(const PointCloud<double>& g, std::int64_t block, std::int64_t sub = 0)
      : bx(detail::make_blocks(g.x(), std::span<const double>(), block, sub)),
        by(detail::make_blocks(g.y(), std::span<const double>(), block, sub)),
        cx(detail::sub_blocks(bx, g.x(), std::span<const double>(), sub > 0 ? sub : block)),
        cy(detail::sub_blocks(by, g.y(), std::span<const double>(), sub > 0 ? sub : block)),
        xs(detail::gather_rows(g.x().data, g.dim(), bx.order)),
        ys(detail::gather_rows(g.y().data, g.dim(), by.order)),
        geometry({xs.data(), g.n(), g.dim()}, {ys.data(), g.m(), g.dim()}),
        wa(detail::make_weights(std::span<const double>(), g.n())),
        wb(detail::make_weights(std::span<const double>(), g.m())),
        x(detail::x_side(geometry, wa)),
        y(detail::y_side(geometry, wb)) {}
  BlockOrdered(const BlockOrdered&) = delete;
  BlockOrdered& operator=(const BlockOrdered&) = delete;

  /// A potential of x (f) or of y (g), caller's order, into block order.
  std::vector<double> of_x(std::span<const double> f) const {
    return detail::gather_rows(f.data(), 1, bx.order);
  }
  std::vector<double> of_y(std::span<const double> g) const {
    return detail::gather_rows(g.data(), 1, by.order);
  }
};

}  // namespace birkhoff::transport::testing
