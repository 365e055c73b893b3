// The block-sparse passes of the multiscale backend: block boxes, affine bounds of the
// potentials, the kept lists and the certificate (block_sparse.hpp).
#include "transport/block_sparse.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "transport/spd.hpp"

namespace birkhoff::transport::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The kept lists are built with a margin of 2 kDrift epsilons on f_i + g_j - C_ij, and rebuilt
// once the potentials' rises could have used it up.
constexpr double kDrift = 1.0;

// Blocks per superblock of the two-level list build.
constexpr std::int64_t kGroup = 16;

// Block-local passes copy each row block's kept columns: above this kept fraction the copies
// cost more than float32 saves, and the kept columns span the clouds (little precision gained).
constexpr double kLocalKept = 0.25;

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

// One box of a side as pair_bound reads it: the bound's offset alpha + rho, its slope, and the
// box's centre and half-widths, of block k or of superblock k.
struct BoxBound {
  double a;
  const double *u, *c, *h;
};
inline BoxBound block_of(const AffineBound& f, const Boxes& b, std::int64_t k) {
  const auto q = static_cast<std::size_t>(k);
  return {f.alpha[q] + f.rho[q], f.u.data() + k * b.d, b.centre.data() + k * b.d,
          b.half.data() + k * b.d};
}
inline BoxBound group_of(const AffineBound& f, const Boxes& b, std::int64_t k) {
  const auto q = static_cast<std::size_t>(k);
  return {f.group_alpha[q] + f.group_rho[q], f.group_u.data() + k * b.d,
          b.group_centre.data() + k * b.d, b.group_half.data() + k * b.d};
}
inline double pair_bound(const BoxBound& r, const BoxBound& c, std::int64_t d, double cs) {
  return pair_bound(d, r.a, r.u, r.c, r.h, c.a, c.u, c.c, c.h, cs);
}

}  // namespace

template <class T>
BlockSparsePasses<T>::BlockSparsePasses(const Side<T>& x, const Side<T>& y, const Blocks& bx,
                                        const Blocks& by, double cost_scale, double delta,
                                        int threads, const Blocks* col_x, const Blocks* col_y)
    : x_(x),
      y_(y),
      bx_(bx),
      by_(by),
      cx_(col_x ? *col_x : bx),
      cy_(col_y ? *col_y : by),
      boxes_x_(make_boxes(x, bx)),
      boxes_y_(make_boxes(y, by)),
      col_boxes_x_(make_boxes(x, cx_)),
      col_boxes_y_(make_boxes(y, cy_)),
      cs_(cost_scale),
      delta_(delta),
      threads_(threads) {}

template <class T>
AffineBound BlockSparsePasses<T>::bound(Axis a, const std::vector<T>& hat, bool as_cols) const {
  const Side<T>& s = side(a);
  const Blocks& b = as_cols ? col_blocks(a) : blocks(a);
  const Boxes& bx = as_cols ? col_boxes(a) : boxes(a);
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
  const Blocks& bc = col_blocks(cols);
  const Boxes& xr = boxes(rows);
  const Boxes& xc = col_boxes(cols);
  const AffineBound fr = bound(rows, row_hat, false), fc = bound(cols, col_hat, true);
  const std::int64_t d = x_.d, nr = br.count, nc = bc.count;
  // Keep J when log b_J + U(I, J) / eps >= log(delta / nc) - 2 kDrift; a superblock of k
  // blocks is dropped whole when its own bound is below that plus log k. Far from a solution
  // (a warm start from other potentials) every bound of a row may lie below that: the
  // threshold is then taken relative to the row superblock's best bound, and a row block keeps
  // at least its best column block, so no row is left without pairs.
  const double threshold = std::log(delta_ / static_cast<double>(nc)) - 2 * kDrift;
  // The previous lists go first: a build holds the new ones twice at most (per row, then CSR).
  std::vector<std::int64_t>().swap(l.ranges);
  l.ptr.assign(1, 0);
  l.built = false;
  std::vector<std::vector<std::int64_t>> per_row(static_cast<std::size_t>(nr));
  const auto own = own_groups(rows);
  const std::int64_t g_first = own.first, g_last = own.second;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
  for (std::int64_t gi = g_first; gi < g_last; ++gi) {
    std::vector<char> near(static_cast<std::size_t>(xc.groups));
    std::vector<double> group_value(static_cast<std::size_t>(xc.groups));
    for (std::int64_t gj = 0; gj < xc.groups; ++gj) {
      const double u = pair_bound(group_of(fr, xr, gi), group_of(fc, xc, gj), d, cs_);
      group_value[static_cast<std::size_t>(gj)] =
          xc.group_log_mass[static_cast<std::size_t>(gj)] + u / eps;
    }
    const double best = *std::max_element(group_value.begin(), group_value.end());
    const double t = std::min(threshold, best + threshold);
    for (std::int64_t gj = 0; gj < xc.groups; ++gj) {
      const std::int64_t size = std::min(nc, (gj + 1) * kGroup) - gj * kGroup;
      near[static_cast<std::size_t>(gj)] =
          group_value[static_cast<std::size_t>(gj)] >= t + std::log(static_cast<double>(size));
    }
    for (std::int64_t i = gi * kGroup; i < std::min(nr, (gi + 1) * kGroup); ++i) {
      auto& out = per_row[static_cast<std::size_t>(i)];
      std::int64_t open = -1, best_j = -1, best_g = -1;
      double best_value = -kInf, best_group = -kInf;
      const BoxBound row = block_of(fr, xr, i);
      auto value_of = [&](std::int64_t j) {
        return bc.log_mass[static_cast<std::size_t>(j)] +
               pair_bound(row, block_of(fc, xc, j), d, cs_) / eps;
      };
      auto close_at = [&](std::int64_t j) {  // ends an open range before column block j
        if (open < 0) return;
        out.push_back(open);
        out.push_back(j);
        open = -1;
      };
      // Column superblocks that are not near are skipped whole (they close an open range).
      for (std::int64_t gj = 0; gj < xc.groups; ++gj) {
        const std::int64_t j0 = gj * kGroup, j1 = std::min(nc, j0 + kGroup);
        if (!near[static_cast<std::size_t>(gj)]) {
          close_at(j0);
          continue;
        }
        // The row block's own bound on the superblock (tighter than the row superblock's).
        const double group = xc.group_log_mass[static_cast<std::size_t>(gj)] +
                             pair_bound(row, group_of(fc, xc, gj), d, cs_) / eps;
        if (best_g < 0 || group > best_group) {
          best_group = group;
          best_g = gj;
        }
        if (group < t + std::log(static_cast<double>(j1 - j0))) {
          close_at(j0);
          continue;
        }
        for (std::int64_t j = j0; j < j1; ++j) {
          const double value = value_of(j);
          if (value > best_value || best_j < 0) {
            best_value = value;
            best_j = j;
          }
          if (value >= t) {
            if (open < 0) open = j;
          } else {
            close_at(j);
          }
        }
      }
      close_at(nc);
      if (out.empty() && best_g >= 0) {
        // Every near superblock failed the row block's own test: its best column block.
        for (std::int64_t j = best_g * kGroup; j < std::min(nc, (best_g + 1) * kGroup); ++j) {
          const double value = value_of(j);
          if (value > best_value || best_j < 0) {
            best_value = value;
            best_j = j;
          }
        }
      }
      if (out.empty() && best_j >= 0) {
        out.push_back(best_j);
        out.push_back(best_j + 1);
      }
    }
  }
  std::size_t total = 0;
  for (const auto& r : per_row) total += r.size();
  l.ptr.assign(1, 0);
  l.ranges.reserve(total);
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < nr; ++i) {
    const std::vector<std::int64_t>& r = per_row[static_cast<std::size_t>(i)];
    const std::int64_t rows_in = br.end(i) - br.begin(i);
    for (std::size_t q = 0; q < r.size(); q += 2) {
      const std::int64_t c0 = bc.begin(r[q]), c1 = bc.end(r[q + 1] - 1);
      l.ranges.push_back(c0);
      l.ranges.push_back(c1);
      pairs += rows_in * (c1 - c0);
    }
    l.ptr.push_back(static_cast<std::int64_t>(l.ranges.size() / 2));
    std::vector<std::int64_t>().swap(per_row[static_cast<std::size_t>(i)]);
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
std::vector<std::int64_t> BlockSparsePasses<T>::group_rows(Axis rows) const {
  const Blocks& br = blocks(rows);
  const std::int64_t groups = boxes(rows).groups;
  std::vector<std::int64_t> out(static_cast<std::size_t>(groups + 1));
  for (std::int64_t g = 0; g <= groups; ++g)
    out[static_cast<std::size_t>(g)] = std::min(br.n, g * kGroup * br.size);
  return out;
}

template <class T>
double BlockSparsePasses<T>::kept_fraction() const {
  const Lists& l = lists(Axis::X, Axis::Y);
  return l.kept >= 0 ? l.kept : latest_kept_;
}

template <class T>
bool BlockSparsePasses<T>::holds(Axis rows, Axis cols, const std::vector<T>& row_hat,
                                 const std::vector<T>& col_hat, double eps) const {
  const Lists& l = lists(rows, cols);
  // A pruned pair's f_i + g_j - C_ij has grown by at most the largest rise of the row potential
  // plus the largest rise of the column potential since the build: the lists hold while that
  // stays within their margin of 2 kDrift epsilons. (Potentials that fall only shrink what
  // was pruned; a rise of f in one region with a fall of g in its image, the slow mode of the
  // iteration at small epsilon, moves no plan entry by more than the sum.)
  auto rise = [](const std::vector<T>& now, const std::vector<T>& then) {
    double e = -kInf;
    for (std::size_t i = 0; i < now.size(); ++i)
      e = std::max(e, static_cast<double>(now[i]) - static_cast<double>(then[i]));
    return e;
  };
  const auto own = own_groups(rows);
  return l.built && l.first == own.first && l.last == own.second && l.eps == eps &&
         rise(row_hat, l.row_hat) + rise(col_hat, l.col_hat) <= 2 * kDrift * eps;
}

template <class T>
void BlockSparsePasses<T>::lse(Axis rows, Axis cols, const std::vector<T>& row_hat,
                               const std::vector<T>& col_hat, double eps, LseOut<T>& out,
                               const T* values, std::int64_t dv, const Modulation<T>& mod) {
  Lists& l = lists(rows, cols);
  const auto own = own_groups(rows);
  if (!holds(rows, cols, row_hat, col_hat, eps)) build(l, rows, cols, row_hat, col_hat, eps);
  const Blocks& br = blocks(rows);
  if constexpr (std::is_same_v<T, double>) {
    if (!values)
      local_used_ =
          local_ && l.kept <= kLocalKept && side(rows).power == 0 && !side(rows).label_cost;
    if (!values && local_used_) {
      std::vector<float>& local = rows == Axis::X ? local_x_ : local_y_;
      if (local.empty()) local = local_coordinates(side(rows), br, boxes(rows));
      LseOut<T> part;
      local_reach_ = local_lse(side(rows), side(cols), br, boxes(rows), col_boxes(cols), local,
                               l.ptr.data(), l.ranges.data(), col_blocks(cols).size, col_hat.data(),
                               eps, 2 * cs_, kGroup, own, threads_, share_ ? part : out);
      if (share_) {
        local_reach_ = share_->max(local_reach_);  // one handover decision on every rank
        share_->share(part, 0, group_rows(rows), out);
      }
      return;
    }
  }
  if (!share_) {
    lse_pass(side(rows), side(cols), col_hat.data(), eps, 2 * cs_, threads_, out, values, dv, mod,
             BlockRanges{br.size, l.ptr.data(), l.ranges.data()});
    return;
  }
  // This process's rows: its superblocks' points, their lists and row operands.
  const std::vector<std::int64_t> group_rows = this->group_rows(rows);
  const std::int64_t r0 = group_rows[static_cast<std::size_t>(own.first)];
  const Side<T> mine = row_slice(side(rows), r0, group_rows[static_cast<std::size_t>(own.second)]);
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
  const Blocks& bc = col_blocks(cols);
  const Boxes& xr = boxes(rows);
  const Boxes& xc = col_boxes(cols);
  // R(I) with the candidate's bound: exp(-cand_i / eps) is what the kept blocks give.
  const AffineBound fr = bound(rows, cand_hat, false), fc = bound(cols, col_hat, true);
  const std::int64_t d = x_.d;
  double worst = 0;
  const auto own = own_groups(rows);
  const std::int64_t i_first = own.first * kGroup, i_last = std::min(br.count, own.second * kGroup);
#pragma omp parallel num_threads(threads_) reduction(max : worst)
  {
    // Column blocks (and superblocks) kept for the row block at hand, marked and unmarked
    // through its ranges; a superblock with none kept is bounded whole.
    std::vector<char> kept(static_cast<std::size_t>(bc.count), 0),
        group_kept(static_cast<std::size_t>(xc.groups), 0);
    auto mark = [&](std::int64_t i, char v) {
      for (std::int64_t q = l.ptr[static_cast<std::size_t>(i)];
           q < l.ptr[static_cast<std::size_t>(i) + 1]; ++q)
        for (std::int64_t j = l.ranges[static_cast<std::size_t>(2 * q)] / bc.size;
             j < (l.ranges[static_cast<std::size_t>(2 * q + 1)] + bc.size - 1) / bc.size; ++j) {
          kept[static_cast<std::size_t>(j)] = v;
          group_kept[static_cast<std::size_t>(j / kGroup)] = v;
        }
    };
#pragma omp for schedule(dynamic, 8)
    for (std::int64_t i = i_first; i < i_last; ++i) {
      const BoxBound row = block_of(fr, xr, i);
      mark(i, 1);
      double pruned = 0;
      for (std::int64_t gj = 0; gj < xc.groups; ++gj) {
        const std::int64_t first = gj * kGroup, last = std::min(bc.count, first + kGroup);
        if (!group_kept[static_cast<std::size_t>(gj)]) {
          // A superblock bounded whole, when its (looser) bound is already small.
          const double u = pair_bound(row, group_of(fc, xc, gj), d, cs_);
          const double term = std::exp(xc.group_log_mass[static_cast<std::size_t>(gj)] + u / eps);
          if (term <= delta_ / static_cast<double>(xc.groups)) {
            pruned += term;
            continue;
          }
        }
        for (std::int64_t j = first; j < last; ++j) {
          if (kept[static_cast<std::size_t>(j)]) continue;
          const double u = pair_bound(row, block_of(fc, xc, j), d, cs_);
          pruned += std::exp(bc.log_mass[static_cast<std::size_t>(j)] + u / eps);
        }
      }
      mark(i, 0);
      worst = std::max(worst, pruned);
    }
  }
  if (share_) worst = share_->max(worst);
  return eps * std::log1p(worst);
}

template class BlockSparsePasses<float>;
template class BlockSparsePasses<double>;

}  // namespace birkhoff::transport::detail
