#include "transport/blocks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace birkhoff::transport::detail {

double Blocks::median_diagonal2() const {
  std::vector<double> diag(static_cast<std::size_t>(count));
  for (std::int64_t b = 0; b < count; ++b) {
    double s = 0;
    for (std::int64_t k = 0; k < d; ++k) {
      const double e =
          hi[static_cast<std::size_t>(b * d + k)] - lo[static_cast<std::size_t>(b * d + k)];
      s += e * e;
    }
    diag[static_cast<std::size_t>(b)] = s;
  }
  if (diag.empty()) return 0;
  auto mid = diag.begin() + static_cast<std::ptrdiff_t>(diag.size() / 2);
  std::nth_element(diag.begin(), mid, diag.end());
  return *mid;
}

namespace {

// Blocks of `size` points over n points in d dimensions, before their order and statistics.
Blocks shell(std::int64_t n, std::int64_t d, std::int64_t size) {
  Blocks b;
  b.size = size;
  b.n = n;
  b.d = d;
  b.count = (n + size - 1) / size;
  return b;
}

// Boxes, masses and centroids of b's blocks (b.order and b.size set).
template <class T>
void fill_stats(Blocks& b, MatrixView<const T> points, std::span<const T> weights) {
  const auto cells = static_cast<std::size_t>(b.count * b.d);
  b.lo.assign(cells, std::numeric_limits<double>::infinity());
  b.hi.assign(cells, -std::numeric_limits<double>::infinity());
  b.centroid.assign(cells, 0.0);
  b.mass.assign(static_cast<std::size_t>(b.count), 0.0);
  b.log_mass.assign(static_cast<std::size_t>(b.count), 0.0);
  std::vector<double> plain(static_cast<std::size_t>(b.d));
  for (std::int64_t blk = 0; blk < b.count; ++blk) {
    double* lo = b.lo.data() + blk * b.d;
    double* hi = b.hi.data() + blk * b.d;
    double* c = b.centroid.data() + blk * b.d;
    std::fill(plain.begin(), plain.end(), 0.0);
    double mass = 0;
    for (std::int64_t p = b.begin(blk); p < b.end(blk); ++p) {
      const std::int64_t i = b.order[static_cast<std::size_t>(p)];
      const double w = weights.empty() ? 1.0 / static_cast<double>(b.n)
                                       : static_cast<double>(weights[static_cast<std::size_t>(i)]);
      mass += w;
      for (std::int64_t k = 0; k < b.d; ++k) {
        const double v = points(i, k);
        lo[k] = std::min(lo[k], v);
        hi[k] = std::max(hi[k], v);
        c[k] += w * v;
        plain[static_cast<std::size_t>(k)] += v;
      }
    }
    const double count = static_cast<double>(b.end(blk) - b.begin(blk));
    for (std::int64_t k = 0; k < b.d; ++k)
      c[k] = mass > 0 ? c[k] / mass : plain[static_cast<std::size_t>(k)] / count;
    b.mass[static_cast<std::size_t>(blk)] = mass;
    b.log_mass[static_cast<std::size_t>(blk)] =
        mass > 0 ? std::log(mass) : -std::numeric_limits<double>::infinity();
  }
}

}  // namespace

template <class T>
Blocks make_blocks(MatrixView<const T> points, std::span<const T> weights, std::int64_t size,
                   std::int64_t sub) {
  Blocks b = shell(points.rows, points.cols, size);
  b.order.resize(static_cast<std::size_t>(b.n));
  std::iota(b.order.begin(), b.order.end(), std::int64_t{0});
  // Split [lo, hi) at a multiple of `size` from lo, along the widest coordinate, until every
  // piece is one block (every block but the last is full); then each block likewise at
  // multiples of `sub`, so that its runs of sub points are compact too.
  if (sub <= 0 || sub > size || size % sub != 0) sub = size;
  std::vector<std::pair<std::int64_t, std::int64_t>> stack{{0, b.n}};
  while (!stack.empty()) {
    const auto [lo, hi] = stack.back();
    stack.pop_back();
    if (hi - lo <= sub) continue;
    const std::int64_t unit = hi - lo > size ? size : sub;
    std::int64_t widest = 0;
    double extent = -1;
    for (std::int64_t k = 0; k < b.d; ++k) {
      double mn = std::numeric_limits<double>::infinity(), mx = -mn;
      for (std::int64_t p = lo; p < hi; ++p) {
        const double v = points(b.order[static_cast<std::size_t>(p)], k);
        mn = std::min(mn, v);
        mx = std::max(mx, v);
      }
      if (mx - mn > extent) {
        extent = mx - mn;
        widest = k;
      }
    }
    const std::int64_t pieces = (hi - lo + unit - 1) / unit;
    const std::int64_t mid = lo + unit * (pieces / 2);
    std::nth_element(
        b.order.begin() + lo, b.order.begin() + mid, b.order.begin() + hi,
        [&](std::int64_t u, std::int64_t v) { return points(u, widest) < points(v, widest); });
    stack.push_back({lo, mid});
    stack.push_back({mid, hi});
  }
  fill_stats(b, points, weights);
  return b;
}

template <class T>
Blocks sub_blocks(const Blocks& b, MatrixView<const T> points, std::span<const T> weights,
                  std::int64_t sub) {
  Blocks s = shell(b.n, b.d, sub);
  s.order = b.order;
  fill_stats(s, points, weights);
  std::vector<std::int64_t>().swap(s.order);  // b holds it
  return s;
}

template <class T>
std::vector<T> gather_rows(const T* in, std::int64_t width,
                           const std::vector<std::int64_t>& order) {
  std::vector<T> out(order.size() * static_cast<std::size_t>(width));
  for (std::size_t p = 0; p < order.size(); ++p)
    std::copy_n(in + order[p] * width, width, out.begin() + static_cast<std::ptrdiff_t>(p) * width);
  return out;
}

template <class T>
std::vector<T> scatter(std::span<const T> in, const std::vector<std::int64_t>& order) {
  if (in.empty()) return {};
  std::vector<T> out(in.size());
  for (std::size_t p = 0; p < order.size(); ++p) out[static_cast<std::size_t>(order[p])] = in[p];
  return out;
}

template Blocks make_blocks(MatrixView<const float>, std::span<const float>, std::int64_t,
                            std::int64_t);
template Blocks make_blocks(MatrixView<const double>, std::span<const double>, std::int64_t,
                            std::int64_t);
template Blocks sub_blocks(const Blocks&, MatrixView<const float>, std::span<const float>,
                           std::int64_t);
template Blocks sub_blocks(const Blocks&, MatrixView<const double>, std::span<const double>,
                           std::int64_t);
template std::vector<float> gather_rows(const float*, std::int64_t,
                                        const std::vector<std::int64_t>&);
template std::vector<double> gather_rows(const double*, std::int64_t,
                                         const std::vector<std::int64_t>&);
template std::vector<float> scatter(std::span<const float>, const std::vector<std::int64_t>&);
template std::vector<double> scatter(std::span<const double>, const std::vector<std::int64_t>&);

}  // namespace birkhoff::transport::detail
