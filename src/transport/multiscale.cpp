#include "transport/multiscale.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "transport/solver.hpp"
#include "transport/spd.hpp"
#include "transport/state.hpp"

namespace birkhoff::transport::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Potentials may grow by this many epsilons (per side) before the kept lists are rebuilt; the
// lists are built with twice that as a safety margin.
constexpr double kDrift = 1.0;

// Blocks per superblock of the two-level list build.
constexpr std::int64_t kGroup = 16;

template <class T>
Boxes make_boxes(const Side<T>& s, const Blocks& b) {
  Boxes out;
  out.d = s.d;
  out.count = b.count;
  out.groups = (b.count + kGroup - 1) / kGroup;
  const auto d = static_cast<std::size_t>(s.d);
  std::vector<double> lo(static_cast<std::size_t>(b.count) * d, kInf), hi(lo.size(), -kInf);
  for (std::int64_t blk = 0; blk < b.count; ++blk)
    for (std::int64_t p = b.begin(blk); p < b.end(blk); ++p)
      for (std::size_t k = 0; k < d; ++k) {
        const double v = s.points[static_cast<std::size_t>(p) * d + k];
        lo[blk * d + k] = std::min(lo[blk * d + k], v);
        hi[blk * d + k] = std::max(hi[blk * d + k], v);
      }
  out.centre.resize(lo.size());
  out.half.resize(lo.size());
  for (std::size_t q = 0; q < lo.size(); ++q) {
    out.centre[q] = 0.5 * (lo[q] + hi[q]);
    out.half[q] = 0.5 * (hi[q] - lo[q]);
  }
  out.group_centre.resize(static_cast<std::size_t>(out.groups) * d);
  out.group_half.resize(out.group_centre.size());
  out.group_log_mass.resize(static_cast<std::size_t>(out.groups));
  for (std::int64_t g = 0; g < out.groups; ++g) {
    const std::int64_t first = g * kGroup, last = std::min(b.count, first + kGroup);
    double mass = 0;
    for (std::int64_t blk = first; blk < last; ++blk) mass += b.mass[static_cast<std::size_t>(blk)];
    out.group_log_mass[static_cast<std::size_t>(g)] = mass > 0 ? std::log(mass) : -kInf;
    for (std::size_t k = 0; k < d; ++k) {
      double l = kInf, h = -kInf;
      for (std::int64_t blk = first; blk < last; ++blk) {
        l = std::min(l, lo[blk * d + k]);
        h = std::max(h, hi[blk * d + k]);
      }
      out.group_centre[g * d + k] = 0.5 * (l + h);
      out.group_half[g * d + k] = 0.5 * (h - l);
    }
  }
  return out;
}

// Least-squares slope of the standard potential over points [p0, p1) about centre c, then the
// one-sided residual: h_i <= alpha + <u, p_i - c> + rho. Writes alpha, u (d), rho.
template <class T>
void fit_affine(const Side<T>& s, const std::vector<T>& hat, std::int64_t p0, std::int64_t p1,
                const double* c, double& alpha, double* u, double& rho) {
  // The standard potential h = hat + cs |p|^2 (nearly affine on a small block).
  auto h = [&](std::int64_t p) {
    return static_cast<double>(hat[static_cast<std::size_t>(p)]) + static_cast<double>(s.sqnorm[p]);
  };
  const auto d = static_cast<std::size_t>(s.d);
  const double count = static_cast<double>(p1 - p0);
  std::vector<double> mean(d, 0.0), cov(d * d, 0.0), rhs(d, 0.0);
  double hmean = 0;
  for (std::int64_t p = p0; p < p1; ++p) {
    hmean += h(p);
    for (std::size_t k = 0; k < d; ++k) mean[k] += s.points[p * d + k] - c[k];
  }
  hmean /= count;
  for (double& m : mean) m /= count;
  for (std::int64_t p = p0; p < p1; ++p) {
    const double r = h(p) - hmean;
    for (std::size_t k = 0; k < d; ++k) {
      const double a = s.points[p * d + k] - c[k] - mean[k];
      rhs[k] += a * r;
      for (std::size_t l = 0; l <= k; ++l)
        cov[k * d + l] += a * (s.points[p * d + l] - c[l] - mean[l]);
    }
  }
  // Least squares with a small ridge; a degenerate block (points on a subspace) keeps the
  // ridge's slope (or slope 0), and the residual below makes any slope a valid bound.
  double trace = 0;
  for (std::size_t k = 0; k < d; ++k) trace += cov[k * d + k];
  for (std::size_t k = 0; k < d; ++k) cov[k * d + k] += 1e-9 * trace + 1e-300;
  if (!spd_solve(cov.data(), rhs.data(), static_cast<std::int64_t>(d)))
    std::fill(rhs.begin(), rhs.end(), 0.0);
  alpha = hmean;
  for (std::size_t k = 0; k < d; ++k) {
    u[k] = std::isfinite(rhs[k]) ? rhs[k] : 0.0;
    alpha -= u[k] * mean[k];
  }
  rho = -kInf;
  for (std::int64_t p = p0; p < p1; ++p) {
    double v = h(p) - alpha;
    for (std::size_t k = 0; k < d; ++k) v -= u[k] * (s.points[p * d + k] - c[k]);
    rho = std::max(rho, v);
  }
}

// An upper bound of f(x) + g(y) - cs |x - y|^2 over x in the box (cr, hr), y in the box
// (cc, hc), with f(x) <= ar + <ur, x - cr> and g(y) <= ac + <uc, y - cc>. Per coordinate, with
// x = cr + p, y = cc + q and w = p - q: u p + v q - cs (D + w)^2 = (u + v) p - v w - cs (D + w)^2
// with D = cr - cc, bounded by |u + v| hr plus the maximum over |w| <= hr + hc of the concave
// quadratic (the coupling of p and w relaxed); the mirrored split gives a second bound, and the
// smaller one counts.
inline double pair_bound(std::int64_t d, double ar, const double* ur, const double* cr,
                         const double* hr, double ac, const double* uc, const double* cc,
                         const double* hc, double cs) {
  double v = ar + ac;
  for (std::int64_t k = 0; k < d; ++k) {
    const double D = cr[k] - cc[k], W = hr[k] + hc[k];
    auto best = [&](double lin, double h) {
      // max over |w| <= W of -lin w - cs (D + w)^2, plus |u + v| h.
      const double w = std::clamp(-D - lin / (2 * cs), -W, W);
      return std::abs(ur[k] + uc[k]) * h - lin * w - cs * (D + w) * (D + w);
    };
    // q = p - w (eliminate q, p free in its box) or p = q + w (eliminate p).
    v += std::min(best(uc[k], hr[k]), best(-ur[k], hc[k]));
  }
  return v;
}

}  // namespace

template <class T>
BlockSparsePasses<T>::BlockSparsePasses(const Side<T>& x, const Side<T>& y, const Blocks& bx,
                                        const Blocks& by, double cost_scale, double delta,
                                        int threads)
    : x_(x),
      y_(y),
      bx_(bx),
      by_(by),
      boxes_x_(make_boxes(x, bx)),
      boxes_y_(make_boxes(y, by)),
      cs_(cost_scale),
      delta_(delta),
      threads_(threads) {}

template <class T>
AffineBound BlockSparsePasses<T>::bound(Axis a, const std::vector<T>& hat) const {
  const Side<T>& s = side(a);
  const Blocks& b = blocks(a);
  const Boxes& bx = boxes(a);
  const std::int64_t d = s.d;
  AffineBound f;
  f.alpha.resize(static_cast<std::size_t>(b.count));
  f.u.resize(static_cast<std::size_t>(b.count * d));
  f.rho.resize(f.alpha.size());
  f.group_alpha.resize(static_cast<std::size_t>(bx.groups));
  f.group_u.resize(static_cast<std::size_t>(bx.groups * d));
  f.group_rho.resize(f.group_alpha.size());
#pragma omp parallel num_threads(threads_)
  {
#pragma omp for schedule(static)
    for (std::int64_t blk = 0; blk < b.count; ++blk)
      fit_affine(s, hat, b.begin(blk), b.end(blk), bx.centre.data() + blk * d,
                 f.alpha[static_cast<std::size_t>(blk)], f.u.data() + blk * d,
                 f.rho[static_cast<std::size_t>(blk)]);
#pragma omp for schedule(static)
    for (std::int64_t g = 0; g < bx.groups; ++g)
      fit_affine(s, hat, b.begin(g * kGroup), b.end(std::min(b.count, (g + 1) * kGroup) - 1),
                 bx.group_centre.data() + g * d, f.group_alpha[static_cast<std::size_t>(g)],
                 f.group_u.data() + g * d, f.group_rho[static_cast<std::size_t>(g)]);
  }
  return f;
}

template <class T>
void BlockSparsePasses<T>::build(Lists& l, Axis rows, Axis cols, const std::vector<T>& row_hat,
                                 const std::vector<T>& col_hat, double eps) {
  const Blocks& br = blocks(rows);
  const Blocks& bc = blocks(cols);
  const Boxes& xr = boxes(rows);
  const Boxes& xc = boxes(cols);
  const AffineBound fr = bound(rows, row_hat), fc = bound(cols, col_hat);
  const std::int64_t d = x_.d, nr = br.count, nc = bc.count;
  // Keep J when log b_J + U(I, J) / eps >= log(delta / nc) - 2 kDrift; a superblock of k
  // blocks is dropped whole when its own bound is below that plus log k. Far from a solution
  // (a warm start from other potentials) every bound of a row may lie below that: the
  // threshold is then taken relative to the row superblock's best bound, and a row block keeps
  // at least its best column block, so no row is left without pairs.
  const double relative = std::log(delta_ / static_cast<double>(nc)) - 2 * kDrift;
  const double threshold = relative;
  std::vector<std::vector<std::int64_t>> per_row(static_cast<std::size_t>(nr));
  const auto own = own_groups(rows);
  const std::int64_t g_first = own.first, g_last = own.second;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
  for (std::int64_t gi = g_first; gi < g_last; ++gi) {
    std::vector<char> near(static_cast<std::size_t>(xc.groups));
    std::vector<double> group_value(static_cast<std::size_t>(xc.groups));
    for (std::int64_t gj = 0; gj < xc.groups; ++gj) {
      const double u = pair_bound(
          d,
          fr.group_alpha[static_cast<std::size_t>(gi)] + fr.group_rho[static_cast<std::size_t>(gi)],
          fr.group_u.data() + gi * d, xr.group_centre.data() + gi * d,
          xr.group_half.data() + gi * d,
          fc.group_alpha[static_cast<std::size_t>(gj)] + fc.group_rho[static_cast<std::size_t>(gj)],
          fc.group_u.data() + gj * d, xc.group_centre.data() + gj * d,
          xc.group_half.data() + gj * d, cs_);
      group_value[static_cast<std::size_t>(gj)] =
          xc.group_log_mass[static_cast<std::size_t>(gj)] + u / eps;
    }
    const double best = *std::max_element(group_value.begin(), group_value.end());
    const double t = std::min(threshold, best + relative);
    for (std::int64_t gj = 0; gj < xc.groups; ++gj) {
      const std::int64_t size = std::min(nc, (gj + 1) * kGroup) - gj * kGroup;
      near[static_cast<std::size_t>(gj)] =
          group_value[static_cast<std::size_t>(gj)] >= t + std::log(static_cast<double>(size));
    }
    for (std::int64_t i = gi * kGroup; i < std::min(nr, (gi + 1) * kGroup); ++i) {
      auto& out = per_row[static_cast<std::size_t>(i)];
      std::int64_t open = -1, best_j = -1;
      double best_value = -kInf;
      const double ar = fr.alpha[static_cast<std::size_t>(i)] + fr.rho[static_cast<std::size_t>(i)];
      for (std::int64_t j = 0; j < nc; ++j) {
        bool keep = false;
        if (near[static_cast<std::size_t>(j / kGroup)]) {
          const double u = pair_bound(
              d, ar, fr.u.data() + i * d, xr.centre.data() + i * d, xr.half.data() + i * d,
              fc.alpha[static_cast<std::size_t>(j)] + fc.rho[static_cast<std::size_t>(j)],
              fc.u.data() + j * d, xc.centre.data() + j * d, xc.half.data() + j * d, cs_);
          const double value = bc.log_mass[static_cast<std::size_t>(j)] + u / eps;
          keep = value >= t;
          if (value > best_value || best_j < 0) {
            best_value = value;
            best_j = j;
          }
        }
        if (keep && open < 0) open = j;
        if (!keep && open >= 0) {
          out.push_back(open);
          out.push_back(j);
          open = -1;
        }
      }
      if (open >= 0) {
        out.push_back(open);
        out.push_back(nc);
      }
      if (out.empty() && best_j >= 0) {
        out.push_back(best_j);
        out.push_back(best_j + 1);
      }
    }
  }
  l.ptr.assign(1, 0);
  l.ranges.clear();
  l.block_ranges.clear();
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < nr; ++i) {
    const auto& r = per_row[static_cast<std::size_t>(i)];
    const std::int64_t rows_in = br.end(i) - br.begin(i);
    for (std::size_t q = 0; q < r.size(); q += 2) {
      const std::int64_t c0 = bc.begin(r[q]), c1 = bc.end(r[q + 1] - 1);
      l.ranges.push_back(c0);
      l.ranges.push_back(c1);
      l.block_ranges.push_back(r[q]);
      l.block_ranges.push_back(r[q + 1]);
      pairs += rows_in * (c1 - c0);
    }
    l.ptr.push_back(static_cast<std::int64_t>(l.ranges.size() / 2));
  }
  l.eps = eps;
  l.row_hat = row_hat;
  l.col_hat = col_hat;
  l.built = true;
  ++builds_;
  l.first = g_first;
  l.last = g_last;
  if (share_) pairs = share_->sum(pairs);
  l.kept = static_cast<double>(pairs) / (static_cast<double>(br.n) * static_cast<double>(bc.n));
  latest_kept_ = l.kept;
}

template <class T>
std::pair<std::int64_t, std::int64_t> BlockSparsePasses<T>::own_groups(Axis rows) const {
  const std::int64_t groups = boxes(rows).groups;
  return share_ ? share_->groups(groups) : std::pair<std::int64_t, std::int64_t>{0, groups};
}

template <class T>
double BlockSparsePasses<T>::kept_fraction() const {
  const Lists& l = lists(Axis::X, Axis::Y);
  return l.kept >= 0 ? l.kept : latest_kept_;
}

template <class T>
void BlockSparsePasses<T>::lse(Axis rows, Axis cols, const std::vector<T>& row_hat,
                               const std::vector<T>& col_hat, double eps, LseOut<T>& out,
                               const T* values, std::int64_t dv, const Modulation<T>& mod) {
  Lists& l = lists(rows, cols);
  // The lists hold while neither potential moved by more than kDrift epsilons since the build
  // (they were built with twice that as margin).
  auto drift = [](const std::vector<T>& now, const std::vector<T>& then) {
    double e = 0;
    for (std::size_t i = 0; i < now.size(); ++i)
      e = std::max(e, std::abs(static_cast<double>(now[i]) - static_cast<double>(then[i])));
    return e;
  };
  const auto own = own_groups(rows);
  const bool valid = l.built && l.first == own.first && l.last == own.second && l.eps == eps &&
                     drift(row_hat, l.row_hat) <= kDrift * eps &&
                     drift(col_hat, l.col_hat) <= kDrift * eps;
  if (!valid) build(l, rows, cols, row_hat, col_hat, eps);
  const Blocks& br = blocks(rows);
  if (!share_) {
    lse_pass(side(rows), side(cols), col_hat.data(), eps, 2 * cs_, threads_, out, values, dv, mod,
             BlockRanges{br.size, l.ptr.data(), l.ranges.data()});
    return;
  }
  // This process's rows: its superblocks' points, their lists and row operands.
  const std::int64_t groups = boxes(rows).groups;
  std::vector<std::int64_t> group_rows(static_cast<std::size_t>(groups + 1));
  for (std::int64_t g = 0; g <= groups; ++g)
    group_rows[static_cast<std::size_t>(g)] = std::min(br.n, g * kGroup * br.size);
  const std::int64_t r0 = group_rows[static_cast<std::size_t>(own.first)];
  Side<T> mine = side(rows);
  mine.n = group_rows[static_cast<std::size_t>(own.second)] - r0;
  mine.points += r0 * mine.d;
  mine.sqnorm += r0;
  mine.weights += r0;
  mine.logw += r0;
  if (mine.labels) mine.labels += r0;
  Modulation<T> m = mod;
  if (m.dm > 0) m.mod_x += r0 * m.dm;
  LseOut<T> part;
  if (mine.n > 0)
    lse_pass(mine, side(cols), col_hat.data(), eps, 2 * cs_, threads_, part, values, dv, m,
             BlockRanges{br.size, l.ptr.data() + own.first * kGroup, l.ranges.data()});
  share_->share(part, dv, group_rows, out);
}

template <class T>
double BlockSparsePasses<T>::certify(Axis rows, Axis cols, const std::vector<T>& cand_hat,
                                     const std::vector<T>& col_hat, double eps) const {
  const Lists& l = lists(rows, cols);
  const Blocks& br = blocks(rows);
  const Blocks& bc = blocks(cols);
  const Boxes& xr = boxes(rows);
  const Boxes& xc = boxes(cols);
  // R(I) with the candidate's bound: exp(-cand_i / eps) is what the kept blocks give.
  const AffineBound fr = bound(rows, cand_hat), fc = bound(cols, col_hat);
  const std::int64_t d = x_.d;
  double worst = 0;
  const auto own = own_groups(rows);
  const std::int64_t i_first = own.first * kGroup, i_last = std::min(br.count, own.second * kGroup);
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads_) reduction(max : worst)
  for (std::int64_t i = i_first; i < i_last; ++i) {
    const double ar = fr.alpha[static_cast<std::size_t>(i)] + fr.rho[static_cast<std::size_t>(i)];
    // Column blocks kept for I, marked; a superblock with none kept is bounded whole.
    std::vector<char> kept(static_cast<std::size_t>(bc.count), 0);
    for (std::int64_t q = l.ptr[static_cast<std::size_t>(i)];
         q < l.ptr[static_cast<std::size_t>(i) + 1]; ++q)
      for (std::int64_t j = l.block_ranges[static_cast<std::size_t>(2 * q)];
           j < l.block_ranges[static_cast<std::size_t>(2 * q + 1)]; ++j)
        kept[static_cast<std::size_t>(j)] = 1;
    double pruned = 0;
    for (std::int64_t gj = 0; gj < xc.groups; ++gj) {
      const std::int64_t first = gj * kGroup, last = std::min(bc.count, first + kGroup);
      const bool any =
          std::any_of(kept.begin() + first, kept.begin() + last, [](char c) { return c != 0; });
      if (!any) {
        // A superblock bounded whole, when its (looser) bound is already small.
        const double u =
            pair_bound(d, ar, fr.u.data() + i * d, xr.centre.data() + i * d, xr.half.data() + i * d,
                       fc.group_alpha[static_cast<std::size_t>(gj)] +
                           fc.group_rho[static_cast<std::size_t>(gj)],
                       fc.group_u.data() + gj * d, xc.group_centre.data() + gj * d,
                       xc.group_half.data() + gj * d, cs_);
        const double term = std::exp(xc.group_log_mass[static_cast<std::size_t>(gj)] + u / eps);
        if (term <= delta_ / static_cast<double>(xc.groups)) {
          pruned += term;
          continue;
        }
      }
      for (std::int64_t j = first; j < last; ++j) {
        if (kept[static_cast<std::size_t>(j)]) continue;
        const double u =
            pair_bound(d, ar, fr.u.data() + i * d, xr.centre.data() + i * d, xr.half.data() + i * d,
                       fc.alpha[static_cast<std::size_t>(j)] + fc.rho[static_cast<std::size_t>(j)],
                       fc.u.data() + j * d, xc.centre.data() + j * d, xc.half.data() + j * d, cs_);
        pruned += std::exp(bc.log_mass[static_cast<std::size_t>(j)] + u / eps);
      }
    }
    worst = std::max(worst, pruned);
  }
  if (share_) worst = share_->max(worst);
  return eps * std::log1p(worst);
}

template <class T>
BlockOrder<T>::BlockOrder(const OtProblem<T>& problem, std::int64_t block_size, double delta,
                          int threads, std::shared_ptr<const RowShare<T>> share)
    : bx(make_blocks(problem.geometry.x(), problem.a, block_size)),
      by(make_blocks(problem.geometry.y(), problem.b, block_size)),
      geometry(problem.geometry.permuted(bx.order, by.order)),
      a(problem.a.empty() ? std::vector<T>() : gather_rows(problem.a.data(), 1, bx.order)),
      b(problem.b.empty() ? std::vector<T>() : gather_rows(problem.b.data(), 1, by.order)),
      wa(make_weights(std::span<const T>(a), geometry.n())),
      wb(make_weights(std::span<const T>(b), geometry.m())),
      passes(std::make_unique<BlockSparsePasses<T>>(x_side(geometry, wa), y_side(geometry, wb), bx,
                                                    by, 0.5 * geometry.cost()->kappa(), delta,
                                                    threads)) {
  passes->set_share(std::move(share));
}

template <class T>
void BlockOrderPasses<T>::lse(Axis rows, Axis cols, const std::vector<T>& row_hat,
                              const std::vector<T>& col_hat, double eps, LseOut<T>& out,
                              const T* values, std::int64_t dv, const Modulation<T>& mod) {
  const auto& ro = order(rows);
  const auto& co = order(cols);
  const auto rh = gather_rows(row_hat.data(), 1, ro);
  const auto ch = gather_rows(col_hat.data(), 1, co);
  const auto v = values ? gather_rows(values, dv, co) : std::vector<T>();
  Modulation<T> m = mod;
  std::vector<T> mx, my;
  if (mod.dm > 0) {
    mx = gather_rows(mod.mod_x, mod.dm, ro);
    my = gather_rows(mod.mod_y, mod.dm, co);
    m.mod_x = mx.data();
    m.mod_y = my.data();
  }
  LseOut<T> sorted;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    order_->passes->lse(rows, cols, rh, ch, eps, sorted, values ? v.data() : nullptr, dv, m);
  }
  out.max = scatter<T>(sorted.max, ro);
  out.sum = scatter<T>(sorted.sum, ro);
  out.values.resize(sorted.values.size());
  for (std::size_t p = 0; p < ro.size(); ++p)
    std::copy_n(sorted.values.begin() + static_cast<std::int64_t>(p) * dv, dv,
                out.values.begin() + ro[p] * dv);
}

template <class T>
void BlockOrderPasses<T>::min(Axis rows, Axis cols, const std::vector<T>& col_hat,
                              std::vector<T>& out, std::vector<std::int64_t>& argmin) {
  const auto& ro = order(rows);
  const auto& co = order(cols);
  std::vector<T> sorted;
  std::vector<std::int64_t> at;
  order_->passes->min(rows, cols, gather_rows(col_hat.data(), 1, co), sorted, at);
  out = scatter<T>(sorted, ro);
  argmin.resize(ro.size());
  for (std::size_t p = 0; p < ro.size(); ++p)
    argmin[static_cast<std::size_t>(ro[p])] = co[static_cast<std::size_t>(at[p])];
}

namespace {

// One multiscale run, shared by sinkhorn() and the divergence: the coarse problem on the block
// centroids, the jump to the points by soft c-transforms, the fine solver on block-sparse
// passes (started instead from the caller's potentials when options.init_f is given).
template <class T>
struct FineRun {
  std::shared_ptr<BlockOrder<T>> order;
  std::unique_ptr<Solver<T>> solver;
  std::vector<LevelReport> coarse;
};

template <class T>
FineRun<T> run_multiscale(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias,
                          std::shared_ptr<const RowShare<T>> share) {
  validate(problem, options);
  const auto& geom = problem.geometry;
  const int threads = resolve_threads(options.num_threads);
  const double cs = 0.5 * geom.cost()->kappa();
  FineRun<T> run;
  run.order = std::make_shared<BlockOrder<T>>(
      problem, options.block_size, 1e-2 * options.marginal_tol, threads, std::move(share));
  const BlockOrder<T>& o = *run.order;
  const Blocks& bx = o.bx;
  const Blocks& by = o.by;
  const OtProblem<T> fine = o.problem(problem);
  const std::int64_t d = geom.dim();
  // The fine level converges, also where GeomLoss's schedule was asked for (SamplesLoss): one
  // sweep per epsilon from eps_jump would leave several times that schedule's error from the
  // diameter, a converged run leaves less than it.
  SinkhornOptions fo = options;
  fo.schedule = Schedule::Converge;
  fo.tol.reset();
  if (!options.init_f.empty()) {
    // A warm start: the caller's potentials in block order, no annealing.
    fo.init_f = gather_rows(options.init_f.data(), 1, bx.order);
    fo.init_g = gather_rows(options.init_g.data(), 1, by.order);
    run.solver = std::make_unique<Solver<T>>(fine, fo, debias, *o.passes);
    run.solver->run();
    return run;
  }

  // Coarse problem on the block centroids, down to the scale of a block.
  // The centroids stand for their blocks down to about a quarter of a block's diagonal.
  const double eps_jump =
      std::max(problem.epsilon, cs * std::max(bx.median_diagonal2(), by.median_diagonal2()) / 16);
  std::vector<T> xc(bx.centroid.begin(), bx.centroid.end()),
      yc(by.centroid.begin(), by.centroid.end());
  std::vector<T> ac(bx.mass.begin(), bx.mass.end()), bc(by.mass.begin(), by.mass.end());
  OtProblem<T> coarse{
      PointCloud<T>({xc.data(), bx.count, d}, {yc.data(), by.count, d}, geom.cost()), ac, bc,
      eps_jump, problem.marginals};
  SinkhornOptions co;
  co.schedule = Schedule::Converge;
  co.backend = Backend::Dense;
  co.scaling = options.scaling;
  co.diameter = options.diameter;
  co.marginal_tol = 1e-2;
  co.max_iter = 500;
  co.num_threads = options.num_threads;
  co.progress = options.progress;
  Solver<T> coarse_solver(coarse, co, debias, dense_backend<T>());
  coarse_solver.run();
  std::optional<DivergenceSolution<T>> coarse_div;
  if (debias) coarse_div = coarse_solver.divergence();
  const Solution<T> cs_sol = debias ? coarse_div->xy() : coarse_solver.result();
  run.coarse.push_back(
      {"coarse",
       cs_sol.report().levels.empty() ? eps_jump : cs_sol.report().levels.front().epsilon_start,
       eps_jump, cs_sol.report().iterations, 1.0});

  // Jump: the fine potentials are the soft c-transforms of the coarse ones at eps_jump (the
  // self potentials of the divergence likewise, from their own coarse problems).
  const MarginalPolicy policy(problem.marginals);
  auto extend = [&](const MarginalPolicy& pol, MatrixView<const T> fine_pts,
                    std::span<const T> fine_w, const std::vector<T>& coarse_pts,
                    std::int64_t n_coarse, const std::vector<T>& coarse_w,
                    std::span<const T> coarse_h, Axis axis) {
    const PointCloud<T> jump({fine_pts.data, fine_pts.rows, d}, {coarse_pts.data(), n_coarse, d},
                             geom.cost());
    const Weights<T> wf = make_weights(fine_w, fine_pts.rows);
    const Weights<T> wc = make_weights(std::span<const T>(coarse_w), n_coarse);
    const Side<T> rows = x_side(jump, wf), cols = y_side(jump, wc);
    const auto col_hat = shifted(coarse_h, cols.sqnorm);
    LseOut<T> out;
    std::vector<T> cand;
    softmin(*dense_backend<T>().passes(rows, cols, 2 * cs, threads), Axis::X, Axis::Y, {}, col_hat,
            eps_jump, out, cand);
    std::vector<T> h = cand;
    pol.update(axis, h, cand, rows.sqnorm, eps_jump, 1.0);
    return take_standard(h, rows.sqnorm);
  };
  const auto xf = o.geometry.x(), yf = o.geometry.y();
  const auto f0 = extend(policy, xf, fine.a, yc, by.count, bc, cs_sol.g(), Axis::X);
  const auto g0 = extend(policy, yf, fine.b, xc, bx.count, ac, cs_sol.f(), Axis::Y);

  // Fine level: block-sparse passes, annealing from eps_jump, then to the tolerance.
  fo.diameter = std::sqrt(eps_jump);
  run.solver = std::make_unique<Solver<T>>(fine, fo, debias, *o.passes);
  run.solver->warm_start(f0, g0);
  if (debias) {
    const auto faa =
        extend(policy.self(Axis::X), xf, fine.a, xc, bx.count, ac, coarse_div->f_aa(), Axis::X);
    const auto gbb =
        extend(policy.self(Axis::Y), yf, fine.b, yc, by.count, bc, coarse_div->g_bb(), Axis::Y);
    run.solver->warm_start_self(faa, gbb);
  }
  run.solver->run();
  return run;
}

// The certificate of one truncated update at the final potentials (shifted, block order).
template <class T>
double certificate(BlockSparsePasses<T>& passes, Axis rows, Axis cols, const std::vector<T>& rh,
                   const std::vector<T>& ch, double eps) {
  LseOut<T> out;
  std::vector<T> cand;
  softmin(passes, rows, cols, rh, ch, eps, out, cand);
  return passes.certify(rows, cols, cand, ch, eps);
}

// scatter(), with an empty input (no such potentials) left empty.
template <class T>
std::vector<T> maybe_scatter(std::span<const T> in, const std::vector<std::int64_t>& order) {
  return in.empty() ? std::vector<T>() : scatter<T>(in, order);
}

// A block-order solution back in the caller's order and geometry, its plan read through the
// block-sparse passes of the run; `bound` the certificate of the run's updates.
template <class T>
Solution<T> in_caller_order(const OtProblem<T>& problem, const SinkhornOptions& options,
                            const FineRun<T>& run, const Solution<T>& sorted,
                            const std::string& reason, double bound) {
  const auto& st = sorted.state();
  const auto& geom = problem.geometry;
  const auto& ox = run.order->bx.order;
  const auto& oy = run.order->by.order;
  Found<T> found{scatter<T>(st.f, ox),
                 scatter<T>(st.g, oy),
                 maybe_scatter<T>(st.f_grad, ox),
                 maybe_scatter<T>(st.g_grad, oy),
                 st.report,
                 0};
  SinkhornReport& r = found.report;
  r.backend = "multiscale";
  r.working_dtype = sizeof(T) == 4 ? "float32" : "float64";
  r.backend_reason = reason;
  r.truncation_bound = bound;
  r.kept_fraction = run.order->passes->kept_fraction();
  r.levels.insert(r.levels.begin(), run.coarse.begin(), run.coarse.end());
  r.converged = r.converged && bound <= problem.epsilon * options.marginal_tol;
  return make_solution(
      geom, problem.marginals, make_weights(problem.a, geom.n()), make_weights(problem.b, geom.m()),
      options.num_threads, std::move(found),
      std::shared_ptr<Passes<T>>(std::make_shared<BlockOrderPasses<T>>(run.order)));
}

}  // namespace

template <class T>
Solution<T> multiscale_sinkhorn(const OtProblem<T>& problem, const SinkhornOptions& options,
                                const std::string& reason,
                                std::shared_ptr<const RowShare<T>> share) {
  FineRun<T> run = run_multiscale(problem, options, false, std::move(share));
  const Solution<T> sorted = run.solver->result();
  const auto& st = sorted.state();
  auto& passes = *run.order->passes;
  const double eps = problem.epsilon;
  const double bound = std::max(certificate(passes, Axis::X, Axis::Y, st.f_hat, st.g_hat, eps),
                                certificate(passes, Axis::Y, Axis::X, st.g_hat, st.f_hat, eps));
  // The solution's products are local, on lists of the final potentials.
  passes.set_share(nullptr);
  passes.reset_lists();
  return in_caller_order(problem, options, run, sorted, reason, bound);
}

template <class T>
DivergenceSolution<T> multiscale_divergence(const OtProblem<T>& problem,
                                            const SinkhornOptions& options,
                                            const std::string& reason,
                                            std::shared_ptr<const RowShare<T>> share) {
  FineRun<T> run = run_multiscale(problem, options, true, std::move(share));
  const DivergenceSolution<T> sorted = run.solver->divergence();
  const auto& st = sorted.xy().state();
  auto& passes = *run.order->passes;
  const auto& g = run.order->geometry;
  const double eps = problem.epsilon;
  const auto faa = shifted(sorted.f_aa(), g.x_sqnorm().data());
  const auto gbb = shifted(sorted.g_bb(), g.y_sqnorm().data());
  const double bound = std::max({certificate(passes, Axis::X, Axis::Y, st.f_hat, st.g_hat, eps),
                                 certificate(passes, Axis::Y, Axis::X, st.g_hat, st.f_hat, eps),
                                 certificate(passes, Axis::X, Axis::X, faa, faa, eps),
                                 certificate(passes, Axis::Y, Axis::Y, gbb, gbb, eps)});
  // The solution's products are local, on lists of the final potentials.
  passes.set_share(nullptr);
  passes.reset_lists();
  auto s = std::make_shared<DivergenceState<T>>();
  s->xy = in_caller_order(problem, options, run, sorted.xy(), reason, bound);
  s->f_aa = scatter<T>(sorted.f_aa(), run.order->bx.order);
  s->g_bb = scatter<T>(sorted.g_bb(), run.order->by.order);
  s->f_aa_grad = maybe_scatter<T>(sorted.f_aa_grad(), run.order->bx.order);
  s->g_bb_grad = maybe_scatter<T>(sorted.g_bb_grad(), run.order->by.order);
  s->loss = sorted.loss();
  return DivergenceSolution<T>(std::move(s));
}

namespace {

template <class T>
class MultiscaleBackend final : public BackendImpl<T> {
 public:
  explicit MultiscaleBackend(std::shared_ptr<const RowShare<T>> share) : share_(std::move(share)) {}
  Solution<T> solve(const OtProblem<T>& problem, const SinkhornOptions& options,
                    const std::string& reason) const override {
    return multiscale_sinkhorn(problem, options, reason, share_);
  }
  DivergenceSolution<T> divergence(const OtProblem<T>& problem, const SinkhornOptions& options,
                                   const std::string& reason) const override {
    return multiscale_divergence(problem, options, reason, share_);
  }

 private:
  std::shared_ptr<const RowShare<T>> share_;
};

}  // namespace

template <class T>
std::shared_ptr<const BackendImpl<T>> multiscale_backend(std::shared_ptr<const RowShare<T>> share) {
  return std::make_shared<MultiscaleBackend<T>>(std::move(share));
}

template class BlockSparsePasses<float>;
template class BlockSparsePasses<double>;
template struct BlockOrder<float>;
template struct BlockOrder<double>;
template class BlockOrderPasses<float>;
template class BlockOrderPasses<double>;
template DivergenceSolution<float> multiscale_divergence(const OtProblem<float>&,
                                                         const SinkhornOptions&, const std::string&,
                                                         std::shared_ptr<const RowShare<float>>);
template DivergenceSolution<double> multiscale_divergence(const OtProblem<double>&,
                                                          const SinkhornOptions&,
                                                          const std::string&,
                                                          std::shared_ptr<const RowShare<double>>);
template std::shared_ptr<const BackendImpl<float>> multiscale_backend(
    std::shared_ptr<const RowShare<float>>);
template std::shared_ptr<const BackendImpl<double>> multiscale_backend(
    std::shared_ptr<const RowShare<double>>);
template Solution<float> multiscale_sinkhorn(const OtProblem<float>&, const SinkhornOptions&,
                                             const std::string&,
                                             std::shared_ptr<const RowShare<float>>);
template Solution<double> multiscale_sinkhorn(const OtProblem<double>&, const SinkhornOptions&,
                                              const std::string&,
                                              std::shared_ptr<const RowShare<double>>);

}  // namespace birkhoff::transport::detail
