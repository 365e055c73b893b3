#include "birkhoff/transport/sliced.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "checks.hpp"
#include "monotone.hpp"

namespace birkhoff::transport {
namespace {

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The k-th uniform number in (0, 1) of the stream `key`.
double uniform(std::uint64_t key, std::uint64_t k) {
  return (static_cast<double>(splitmix64(key + k * 0x9e3779b97f4a7c15ULL) >> 11) + 0.5) * 0x1p-53;
}

// |s|^p and its derivative in s.
struct PowerCost {
  double p;
  double value(double s) const {
    const double t = std::abs(s);
    return p == 2 ? t * t : p == 1 ? t : std::pow(t, p);
  }
  double slope(double s) const {
    if (p == 2) return 2 * s;
    const double sign = s > 0 ? 1.0 : s < 0 ? -1.0 : 0.0;
    return p == 1 ? sign : sign * p * std::pow(std::abs(s), p - 1);
  }
};

// One cloud on the line: its points sorted by their projection (ties by index).
struct Sorted {
  detail::SortedLine order;

  template <class T>
  void project(MatrixView<const T> z, const double* theta) {
    order.resize(static_cast<std::size_t>(z.rows));
    for (std::int64_t i = 0; i < z.rows; ++i) {
      const T* row = z.row(i);
      double s = 0;
      for (std::int64_t k = 0; k < z.cols; ++k) s += static_cast<double>(row[k]) * theta[k];
      order[static_cast<std::size_t>(i)] = {s, i};
    }
    std::sort(order.begin(), order.end());
  }
};

// Where one direction writes its derivatives: in the projected coordinates (hx, hy) and in the
// weights (f, g, the 1-D dual potentials). Null when not asked for.
struct LineOut {
  double* hx = nullptr;
  double* hy = nullptr;
  double* f = nullptr;
  double* g = nullptr;
};

// W_p^p between the sorted clouds with weights wa, wb, on their monotone coupling. Its
// staircase is a spanning tree of the transport problem, whose dual f_i + g_j = c_ij on the
// tree is feasible for a convex cost, so it also gives the potentials.
template <class WA, class WB>
double match_line(const Sorted& sx, const Sorted& sy, const WA& wa, const WB& wb, PowerCost cost,
                  const LineOut& out) {
  const auto& px = sx.order;
  const auto& py = sy.order;
  auto c = [&](std::int64_t i, std::int64_t j) {
    return cost.value(px[static_cast<std::size_t>(i)].first -
                      py[static_cast<std::size_t>(j)].first);
  };
  auto f = [&](std::int64_t i) -> double& { return out.f[px[static_cast<std::size_t>(i)].second]; };
  auto g = [&](std::int64_t j) -> double& { return out.g[py[static_cast<std::size_t>(j)].second]; };
  double total = 0;
  std::int64_t last_i = -1, last_j = -1;
  const auto [end_i, end_j] =
      detail::monotone_coupling(px, py, wa, wb, [&](std::int64_t i, std::int64_t j, double mass) {
        const auto& [s_i, x_i] = px[static_cast<std::size_t>(i)];
        const auto& [t_j, y_j] = py[static_cast<std::size_t>(j)];
        total += mass * cost.value(s_i - t_j);
        if (out.hx) {
          const double slope = mass * cost.slope(s_i - t_j);
          out.hx[x_i] += slope;
          out.hy[y_j] -= slope;
        }
        if (out.f) {
          if (last_i < 0) {
            f(i) = 0;
            g(j) = c(i, j);
          } else {
            if (i != last_i) f(i) = c(i, last_j) - g(last_j);
            if (j != last_j) g(j) = c(i, j) - f(i);
          }
        }
        last_i = i;
        last_j = j;
      });
  if (out.f) {
    // Points past the end of the other side (masses equal up to rounding): the same tree.
    for (auto k = end_i + 1; k < static_cast<std::int64_t>(px.size()); ++k)
      f(k) = c(k, end_j) - g(end_j);
    for (auto k = end_j + 1; k < static_cast<std::int64_t>(py.size()); ++k)
      g(k) = c(end_i, k) - f(end_i);
  }
  return total;
}

// The total masses of a and b (1 for uniform weights).
template <class T>
std::pair<double, double> check_inputs(MatrixView<const T> x, MatrixView<const T> y,
                                       std::span<const T> a, std::span<const T> b,
                                       const SlicedOptions& options,
                                       MatrixView<const T> projections) {
  detail::check_points(x, "x");
  detail::check_points(y, "y");
  require(x.cols == y.cols, "y",
          "dimension mismatch: x has d = " + std::to_string(x.cols) +
              ", y has d = " + std::to_string(y.cols));
  const double ma = detail::check_weights(a, x.rows, "a", "x");
  const double mb = detail::check_weights(b, y.rows, "b", "y");
  detail::check_equal_masses(ma, mb, "the sliced distance needs equal masses");
  if (projections.data != nullptr || projections.rows != 0) {
    require(projections.rows == x.cols, "projections",
            "must have shape (d, L) with d = " + std::to_string(x.cols) +
                " (one direction per "
                "column), got " +
                std::to_string(projections.rows) + " rows");
    detail::check_points(projections, "projections");
  } else {
    require(options.n_projections >= 1, "n_projections",
            "must be >= 1, got " + std::to_string(options.n_projections));
    require(static_cast<double>(options.n_projections) * static_cast<double>(x.cols) <= 1e9,
            "n_projections", "d x n_projections must be at most 1e9 directions' coordinates");
  }
  require(std::isfinite(options.p) && options.p >= 1, "p",
          "must be a finite number >= 1, got " + std::to_string(options.p));
  require(options.num_threads >= 0, "num_threads", "must be >= 0");
  return {ma, mb};
}

}  // namespace

template <class T>
std::vector<T> random_directions(std::int64_t d, std::int64_t count, std::int64_t seed) {
  const std::uint64_t key = splitmix64(static_cast<std::uint64_t>(seed));
  std::vector<double> z(static_cast<std::size_t>(d * count));
  for (std::int64_t l = 0; l < count; ++l) {
    double norm = 0;
    for (std::int64_t k = 0; k < d; ++k) {
      const auto t = static_cast<std::uint64_t>(l * d + k);
      const double u1 = uniform(key, 2 * t), u2 = uniform(key, 2 * t + 1);
      const double v = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
      z[static_cast<std::size_t>(k * count + l)] = v;
      norm += v * v;
    }
    norm = std::sqrt(norm);
    for (std::int64_t k = 0; k < d; ++k) z[static_cast<std::size_t>(k * count + l)] /= norm;
  }
  return {z.begin(), z.end()};
}

template <class T>
SlicedResult<T> sliced_wasserstein(MatrixView<const T> x, MatrixView<const T> y,
                                   std::span<const T> a, std::span<const T> b,
                                   const SlicedOptions& options, MatrixView<const T> projections,
                                   bool gradients) {
  const auto masses = check_inputs(x, y, a, b, options, projections);
  const double mass_a = masses.first, mass_b = masses.second;  // captured below: no bindings
  SlicedResult<T> r;
  r.n = x.rows;
  r.m = y.rows;
  r.d = x.cols;
  const std::int64_t n = r.n, m = r.m, d = r.d;
  if (projections.rows != 0) {
    r.n_projections = projections.cols;
    r.projections.resize(static_cast<std::size_t>(d * projections.cols));
    for (std::int64_t k = 0; k < d; ++k)
      std::copy_n(projections.row(k), projections.cols,
                  r.projections.begin() + k * projections.cols);
  } else {
    r.n_projections = options.n_projections;
    r.projections = random_directions<T>(d, r.n_projections, options.seed);
  }
  const std::int64_t L = r.n_projections;
  // Each direction as d contiguous doubles.
  std::vector<double> theta(static_cast<std::size_t>(d * L));
  for (std::int64_t l = 0; l < L; ++l)
    for (std::int64_t k = 0; k < d; ++k)
      theta[static_cast<std::size_t>(l * d + k)] =
          static_cast<double>(r.projections[static_cast<std::size_t>(k * L + l)]);
  const double uniform_a = 1.0 / static_cast<double>(n), uniform_b = 1.0 / static_cast<double>(m);
  auto wa = [&](std::int64_t i) {
    return a.empty() ? uniform_a : static_cast<double>(a[static_cast<std::size_t>(i)]);
  };
  auto wb = [&](std::int64_t j) {
    return b.empty() ? uniform_b : static_cast<double>(b[static_cast<std::size_t>(j)]);
  };
  const PowerCost cost{options.p};
  const int threads = resolve_threads(options.num_threads);

  // Directions run in blocks of `block`, one per thread at a time; the block's derivatives are
  // then folded into the gradients in direction order, so no sum depends on the thread count.
  const std::int64_t block = std::min<std::int64_t>(L, 4 * static_cast<std::int64_t>(threads));
  r.projected.assign(static_cast<std::size_t>(L), 0.0);
  std::vector<double> hx, hy, fx, gy, gx_acc, gy_acc, ga_acc, gb_acc;
  auto run_block = [&](std::int64_t l0, std::int64_t count, bool with_grads) {
    if (with_grads) {
      hx.assign(static_cast<std::size_t>(n * count), 0.0);
      hy.assign(static_cast<std::size_t>(m * count), 0.0);
      fx.assign(static_cast<std::size_t>(n * count), 0.0);
      gy.assign(static_cast<std::size_t>(m * count), 0.0);
    }
#pragma omp parallel num_threads(threads)
    {
      Sorted sx, sy;
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t c = 0; c < count; ++c) {
        const double* th = theta.data() + (l0 + c) * d;
        sx.project(x, th);
        sy.project(y, th);
        LineOut out;
        if (with_grads)
          out = {hx.data() + c * n, hy.data() + c * m, fx.data() + c * n, gy.data() + c * m};
        r.projected[static_cast<std::size_t>(l0 + c)] = match_line(sx, sy, wa, wb, cost, out);
        if (with_grads) {
          // The constant shared by f and g: split so that <a, f> = <b, g>.
          double af = 0, bg = 0;
          for (std::int64_t i = 0; i < n; ++i) af += wa(i) * out.f[i];
          for (std::int64_t j = 0; j < m; ++j) bg += wb(j) * out.g[j];
          const double shift = (bg - af) / (mass_a + mass_b);
          for (std::int64_t i = 0; i < n; ++i) out.f[i] += shift;
          for (std::int64_t j = 0; j < m; ++j) out.g[j] -= shift;
        }
      }
    }
    if (!with_grads) return;
    auto fold = [&](std::int64_t rows, const std::vector<double>& h, const std::vector<double>& p,
                    std::vector<double>& grad, std::vector<double>& grad_w) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (std::int64_t i = 0; i < rows; ++i) {
        double* gi = grad.data() + i * d;
        for (std::int64_t c = 0; c < count; ++c) {
          const double hic = h[static_cast<std::size_t>(c * rows + i)];
          const double* th = theta.data() + (l0 + c) * d;
          for (std::int64_t k = 0; k < d; ++k) gi[k] += hic * th[k];
          grad_w[static_cast<std::size_t>(i)] += p[static_cast<std::size_t>(c * rows + i)];
        }
      }
    };
    fold(n, hx, fx, gx_acc, ga_acc);
    fold(m, hy, gy, gy_acc, gb_acc);
  };

  const bool mean_grads = gradients && !options.max_sliced;
  if (gradients) {
    gx_acc.assign(static_cast<std::size_t>(n * d), 0.0);
    gy_acc.assign(static_cast<std::size_t>(m * d), 0.0);
    ga_acc.assign(static_cast<std::size_t>(n), 0.0);
    gb_acc.assign(static_cast<std::size_t>(m), 0.0);
  }
  for (std::int64_t l0 = 0; l0 < L; l0 += block) run_block(l0, std::min(block, L - l0), mean_grads);

  double value = 0;
  std::int64_t best = 0;
  for (std::int64_t l = 0; l < L; ++l) {
    const double w = r.projected[static_cast<std::size_t>(l)];
    require(std::isfinite(w), "p",
            "the projected costs |s - t|^p overflow float64 (p = " + std::to_string(options.p) +
                "): rescale the points or lower p");
    if (w > r.projected[static_cast<std::size_t>(best)]) best = l;
    value += w;
  }
  value = options.max_sliced ? r.projected[static_cast<std::size_t>(best)]
                             : value / static_cast<double>(L);
  r.loss = std::pow(value, 1.0 / options.p);
  if (!gradients) return r;
  double factor = value > 0 ? r.loss / (options.p * value) : 0.0;  // d loss / d value
  if (options.max_sliced) {
    run_block(best, 1, true);
  } else {
    factor /= static_cast<double>(L);
  }
  auto scaled = [factor](const std::vector<double>& v) {
    std::vector<T> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(factor * v[i]);
    return out;
  };
  r.grad_x = scaled(gx_acc);
  r.grad_y = scaled(gy_acc);
  r.grad_a = scaled(ga_acc);
  r.grad_b = scaled(gb_acc);
  return r;
}

#define BIRKHOFF_INSTANTIATE(T)                                                            \
  template std::vector<T> random_directions<T>(std::int64_t, std::int64_t, std::int64_t);  \
  template SlicedResult<T> sliced_wasserstein<T>(MatrixView<const T>, MatrixView<const T>, \
                                                 std::span<const T>, std::span<const T>,   \
                                                 const SlicedOptions&, MatrixView<const T>, bool);
BIRKHOFF_INSTANTIATE(float)
BIRKHOFF_INSTANTIATE(double)
#undef BIRKHOFF_INSTANTIATE

}  // namespace birkhoff::transport
