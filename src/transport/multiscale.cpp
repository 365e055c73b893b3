#include "transport/multiscale.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
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
void BlockSparsePasses<T>::build(Lists& l, Axis rows, const std::vector<T>& row_hat,
                                 const std::vector<T>& col_hat, double eps) {
  const Axis cols = rows == Axis::X ? Axis::Y : Axis::X;
  const Blocks& br = blocks(rows);
  const Blocks& bc = blocks(cols);
  const Boxes& xr = boxes(rows);
  const Boxes& xc = boxes(cols);
  const AffineBound fr = bound(rows, row_hat), fc = bound(cols, col_hat);
  const std::int64_t d = x_.d, nr = br.count, nc = bc.count;
  // Keep J when log b_J + U(I, J) / eps >= log(delta / nc) - 2 kDrift; a superblock of k
  // blocks is dropped whole when its own bound is below that plus log k.
  const double threshold = std::log(delta_ / static_cast<double>(nc)) - 2 * kDrift;
  std::vector<std::vector<std::int64_t>> per_row(static_cast<std::size_t>(nr));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
  for (std::int64_t gi = 0; gi < xr.groups; ++gi) {
    std::vector<char> near(static_cast<std::size_t>(xc.groups));
    for (std::int64_t gj = 0; gj < xc.groups; ++gj) {
      const std::int64_t size = std::min(nc, (gj + 1) * kGroup) - gj * kGroup;
      const double u = pair_bound(
          d,
          fr.group_alpha[static_cast<std::size_t>(gi)] + fr.group_rho[static_cast<std::size_t>(gi)],
          fr.group_u.data() + gi * d, xr.group_centre.data() + gi * d,
          xr.group_half.data() + gi * d,
          fc.group_alpha[static_cast<std::size_t>(gj)] + fc.group_rho[static_cast<std::size_t>(gj)],
          fc.group_u.data() + gj * d, xc.group_centre.data() + gj * d,
          xc.group_half.data() + gj * d, cs_);
      near[static_cast<std::size_t>(gj)] =
          xc.group_log_mass[static_cast<std::size_t>(gj)] + u / eps >=
          threshold + std::log(static_cast<double>(size));
    }
    for (std::int64_t i = gi * kGroup; i < std::min(nr, (gi + 1) * kGroup); ++i) {
      auto& out = per_row[static_cast<std::size_t>(i)];
      std::int64_t open = -1;
      const double ar = fr.alpha[static_cast<std::size_t>(i)] + fr.rho[static_cast<std::size_t>(i)];
      for (std::int64_t j = 0; j < nc; ++j) {
        bool keep = false;
        if (near[static_cast<std::size_t>(j / kGroup)]) {
          const double u = pair_bound(
              d, ar, fr.u.data() + i * d, xr.centre.data() + i * d, xr.half.data() + i * d,
              fc.alpha[static_cast<std::size_t>(j)] + fc.rho[static_cast<std::size_t>(j)],
              fc.u.data() + j * d, xc.centre.data() + j * d, xc.half.data() + j * d, cs_);
          keep = bc.log_mass[static_cast<std::size_t>(j)] + u / eps >= threshold;
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
  kept_fraction_ =
      static_cast<double>(pairs) / (static_cast<double>(br.n) * static_cast<double>(bc.n));
}

template <class T>
void BlockSparsePasses<T>::lse(Axis rows, Axis cols, const std::vector<T>& row_hat,
                               const std::vector<T>& col_hat, double eps, LseOut<T>& out,
                               const T* values, std::int64_t dv, const Modulation<T>& mod) {
  require(rows != cols, "backend",
          "the multiscale backend has no self-transport passes (debiased divergence); use "
          "backend dense");
  Lists& l = rows == Axis::X ? xy_ : yx_;
  // The lists hold while neither potential moved by more than kDrift epsilons since the build
  // (they were built with twice that as margin).
  auto drift = [](const std::vector<T>& now, const std::vector<T>& then) {
    double e = 0;
    for (std::size_t i = 0; i < now.size(); ++i)
      e = std::max(e, std::abs(static_cast<double>(now[i]) - static_cast<double>(then[i])));
    return e;
  };
  const bool valid = l.built && l.eps == eps && drift(row_hat, l.row_hat) <= kDrift * eps &&
                     drift(col_hat, l.col_hat) <= kDrift * eps;
  if (!valid) build(l, rows, row_hat, col_hat, eps);
  lse_pass(side(rows), side(cols), col_hat.data(), eps, 2 * cs_, threads_, out, values, dv, mod,
           BlockRanges{blocks(rows).size, l.ptr.data(), l.ranges.data()});
}

template <class T>
double BlockSparsePasses<T>::certify(Axis rows, const std::vector<T>& cand_hat,
                                     const std::vector<T>& col_hat, double eps) const {
  const Lists& l = rows == Axis::X ? xy_ : yx_;
  const Axis cols = rows == Axis::X ? Axis::Y : Axis::X;
  const Blocks& br = blocks(rows);
  const Blocks& bc = blocks(cols);
  const Boxes& xr = boxes(rows);
  const Boxes& xc = boxes(cols);
  // R(I) with the candidate's bound: exp(-cand_i / eps) is what the kept blocks give.
  const AffineBound fr = bound(rows, cand_hat), fc = bound(cols, col_hat);
  const std::int64_t d = x_.d;
  double worst = 0;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads_) reduction(max : worst)
  for (std::int64_t i = 0; i < br.count; ++i) {
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
  return eps * std::log1p(worst);
}

template <class T>
Solution<T> multiscale_sinkhorn(const OtProblem<T>& problem, const SinkhornOptions& options,
                                const std::string& reason) {
  validate(problem, options);
  const auto& geom = problem.geometry;
  const std::int64_t block = options.block_size;
  const int threads = resolve_threads(options.num_threads);
  const double cs = 0.5 * geom.cost()->kappa();
  const double delta = 1e-2 * options.marginal_tol;
  const Blocks bx = make_blocks(geom.x(), problem.a, block);
  const Blocks by = make_blocks(geom.y(), problem.b, block);

  // The problem in block order.
  const std::int64_t d = geom.dim();
  const auto xs = gather_rows(geom.x().data, d, bx.order);
  const auto ys = gather_rows(geom.y().data, d, by.order);
  const auto as = problem.a.empty() ? std::vector<T>() : gather_rows(problem.a.data(), 1, bx.order);
  const auto bs = problem.b.empty() ? std::vector<T>() : gather_rows(problem.b.data(), 1, by.order);
  OtProblem<T> fine{PointCloud<T>({xs.data(), geom.n(), d}, {ys.data(), geom.m(), d}, geom.cost()),
                    as, bs, problem.epsilon, problem.marginals};

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
  Solver<T> coarse_solver(coarse, co, false, dense_backend<T>());
  coarse_solver.run();
  const Solution<T> cs_sol = coarse_solver.result();
  LevelReport coarse_level{
      "coarse",
      cs_sol.report().levels.empty() ? eps_jump : cs_sol.report().levels.front().epsilon_start,
      eps_jump, cs_sol.report().iterations, 1.0};

  // Jump: the fine potentials are the soft c-transforms of the coarse ones at eps_jump.
  std::vector<T> f0, g0;
  {
    const MarginalPolicy policy(problem.marginals);
    auto extend = [&](const std::vector<T>& fine_pts, std::int64_t n_fine,
                      const std::vector<T>& coarse_pts, std::int64_t n_coarse,
                      std::span<const T> fine_w, const std::vector<T>& coarse_w,
                      std::span<const T> coarse_h, Axis axis) {
      const PointCloud<T> jump({fine_pts.data(), n_fine, d}, {coarse_pts.data(), n_coarse, d},
                               geom.cost());
      const Weights<T> wf = make_weights(fine_w, n_fine);
      const Weights<T> wc = make_weights(std::span<const T>(coarse_w), n_coarse);
      const Side<T> rows = x_side(jump, wf), cols = y_side(jump, wc);
      const auto col_hat = shifted(coarse_h, cols.sqnorm);
      LseOut<T> out;
      std::vector<T> cand;
      softmin(*dense_backend<T>().passes(rows, cols, 2 * cs, threads), Axis::X, Axis::Y, {},
              col_hat, eps_jump, out, cand);
      std::vector<T> h = cand;
      policy.update(axis, h, cand, rows.sqnorm, eps_jump, 1.0);
      return take_standard(h, rows.sqnorm);
    };
    f0 = extend(xs, geom.n(), yc, by.count, fine.a, bc, cs_sol.g(), Axis::X);
    g0 = extend(ys, geom.m(), xc, bx.count, fine.b, ac, cs_sol.f(), Axis::Y);
  }

  // Fine level: block-sparse passes, annealing from eps_jump, then to the tolerance.
  const Weights<T> wa = make_weights(std::span<const T>(fine.a), geom.n());
  const Weights<T> wb = make_weights(std::span<const T>(fine.b), geom.m());
  BlockSparsePasses<T> passes(x_side(fine.geometry, wa), y_side(fine.geometry, wb), bx, by, cs,
                              delta, threads);
  SinkhornOptions fo = options;
  fo.schedule = Schedule::Converge;
  fo.diameter = std::sqrt(eps_jump);
  Solver<T> solver(fine, fo, false, passes);
  solver.warm_start(f0, g0);
  solver.run();
  const Solution<T> sorted = solver.result();

  // Certificate: one more truncated candidate per side from the final potentials.
  const auto& st = sorted.state();
  double bound = 0;
  {
    LseOut<T> out;
    std::vector<T> cand;
    softmin(passes, Axis::X, Axis::Y, st.f_hat, st.g_hat, problem.epsilon, out, cand);
    bound = passes.certify(Axis::X, cand, st.g_hat, problem.epsilon);
    softmin(passes, Axis::Y, Axis::X, st.g_hat, st.f_hat, problem.epsilon, out, cand);
    bound = std::max(bound, passes.certify(Axis::Y, cand, st.f_hat, problem.epsilon));
  }

  // Back to the caller's order and geometry.
  Found<T> found{scatter<T>(st.f, bx.order), scatter<T>(st.g, by.order), {}, {}, st.report, 0};
  SinkhornReport& r = found.report;
  r.backend = "multiscale";
  r.working_dtype = sizeof(T) == 4 ? "float32" : "float64";
  r.backend_reason = reason;
  r.truncation_bound = bound;
  r.kept_fraction = passes.kept_fraction();
  r.levels.insert(r.levels.begin(), coarse_level);
  r.converged = r.converged && bound <= problem.epsilon * options.marginal_tol;
  return make_solution(geom, problem.marginals, make_weights(problem.a, geom.n()),
                       make_weights(problem.b, geom.m()), options.num_threads, std::move(found));
}

template class BlockSparsePasses<float>;
template class BlockSparsePasses<double>;
template Solution<float> multiscale_sinkhorn(const OtProblem<float>&, const SinkhornOptions&,
                                             const std::string&);
template Solution<double> multiscale_sinkhorn(const OtProblem<double>&, const SinkhornOptions&,
                                              const std::string&);

}  // namespace birkhoff::transport::detail
