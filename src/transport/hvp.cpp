// Second-order products of the OT value: Hessian-vector products, the inverse HVP and the
// implicit gradient, each a conjugate-gradient solve on the Schur complement of the dual
// Hessian whose products with the plan are streamed passes (nothing n x m is stored).
#include "birkhoff/transport/hvp.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "transport/backend.hpp"
#include "transport/cg.hpp"
#include "transport/state.hpp"

namespace birkhoff::transport {
namespace {

using detail::Axis;
using detail::LseOut;
using detail::MarginalPolicy;
using detail::Modulation;
using detail::Side;
using Vec = std::vector<double>;

// One OT problem's plan P_ij = a_i b_j exp((f_i + g_j - C_ij) / eps) as the passes read it:
// rows x with shifted potential fh, columns y with shifted potential gh.
template <class T>
struct Plan {
  Side<T> x, y;
  std::vector<T> fh, gh;
  std::span<const T> f, g;  // standard potentials (the weight gradients' damping terms)
  double eps = 1, kappa = 2;
  MarginalPolicy policy{Balanced{}};
  int threads = 1;
  Vec xs, ys;                                 // centred points as double, (n, d) and (m, d)
  std::shared_ptr<detail::Passes<T>> passes;  // the solution's plan (a self plan: a view)
};

// A self problem's plan through its solution's passes: rows and columns are both `axis`.
template <class T>
class SelfView final : public detail::Passes<T> {
 public:
  SelfView(std::shared_ptr<detail::Passes<T>> base, Axis axis)
      : base_(std::move(base)), axis_(axis) {}
  void lse(Axis, Axis, const std::vector<T>& row_hat, const std::vector<T>& col_hat, double eps,
           LseOut<T>& out, const T* values, std::int64_t dv, const Modulation<T>& mod) override {
    base_->lse(axis_, axis_, row_hat, col_hat, eps, out, values, dv, mod);
  }
  void min(Axis, Axis, const std::vector<T>& col_hat, std::vector<T>& out,
           std::vector<std::int64_t>& argmin) override {
    base_->min(axis_, axis_, col_hat, out, argmin);
  }

 private:
  std::shared_ptr<detail::Passes<T>> base_;
  Axis axis_;
};

// A streamed product with P (or P^T): per row the plan's mass and out (rows, k) = P v, and
// the same divided by the row's weight (finite for a zero weight).
struct Product {
  Vec mass, out, mass_per_weight, out_per_weight;
};

template <class T>
Product apply(const Plan<T>& p, bool transpose, const Vec& values, std::int64_t k,
              const Vec* mod_rows = nullptr, const Vec* mod_cols = nullptr, std::int64_t dm = 0) {
  const Side<T>& r = transpose ? p.y : p.x;
  const T* rh = transpose ? p.gh.data() : p.fh.data();
  const std::vector<T> v(values.begin(), values.end());
  std::vector<T> mx, my;
  Modulation<T> mod;
  if (dm > 0) {
    mx.assign(mod_rows->begin(), mod_rows->end());
    my.assign(mod_cols->begin(), mod_cols->end());
    mod = {mx.data(), my.data(), dm};
  }
  LseOut<T> o;
  p.passes->lse(transpose ? Axis::Y : Axis::X, transpose ? Axis::X : Axis::Y,
                transpose ? p.gh : p.fh, transpose ? p.fh : p.gh, p.eps, o, k ? v.data() : nullptr,
                k, mod);
  Product out;
  const auto n = static_cast<std::size_t>(r.n);
  out.mass.resize(n);
  out.mass_per_weight.resize(n);
  out.out.resize(n * static_cast<std::size_t>(k));
  out.out_per_weight.resize(n * static_cast<std::size_t>(k));
  for (std::size_t i = 0; i < n; ++i) {
    // P_ij / w_i = 2^(log2e rh_i / eps + M_i) 2^(z_ij - M_i) (streams.hpp, plan_row_factor).
    const double unweighted =
        std::isfinite(static_cast<double>(o.max[i]))
            ? std::exp2(detail::kLog2e * static_cast<double>(rh[i]) / p.eps + o.max[i])
            : 0.0;
    const double w = r.weights[i];
    out.mass_per_weight[i] = unweighted * o.sum[i];
    out.mass[i] = w * out.mass_per_weight[i];
    for (std::int64_t q = 0; q < k; ++q) {
      const std::size_t idx = i * static_cast<std::size_t>(k) + static_cast<std::size_t>(q);
      out.out_per_weight[idx] = unweighted * o.values[idx];
      out.out[idx] = w * out.out_per_weight[idx];
    }
  }
  return out;
}

// Row-major (rows, sum of widths) block of column groups, each (rows, width) row-major.
Vec columns(std::int64_t rows, std::initializer_list<std::pair<const Vec*, std::int64_t>> groups) {
  std::int64_t k = 0;
  for (const auto& g : groups) k += g.second;
  Vec out(static_cast<std::size_t>(rows * k));
  std::int64_t offset = 0;
  for (const auto& [v, width] : groups) {
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t q = 0; q < width; ++q)
        out[static_cast<std::size_t>(i * k + offset + q)] =
            (*v)[static_cast<std::size_t>(i * width + q)];
    offset += width;
  }
  return out;
}

// Column block [q0, q0 + width) of a (rows, k) matrix.
Vec block(const Vec& m, std::int64_t rows, std::int64_t k, std::int64_t q0, std::int64_t width) {
  Vec out(static_cast<std::size_t>(rows * width));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t q = 0; q < width; ++q)
      out[static_cast<std::size_t>(i * width + q)] = m[static_cast<std::size_t>(i * k + q0 + q)];
  return out;
}

// Row-wise dot products of two (rows, d) matrices, and row scaling v_i * M_i.
Vec row_dots(const Vec& a, const Vec& b, std::int64_t rows, std::int64_t d) {
  Vec out(static_cast<std::size_t>(rows), 0.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = 0; k < d; ++k)
      out[static_cast<std::size_t>(i)] +=
          a[static_cast<std::size_t>(i * d + k)] * b[static_cast<std::size_t>(i * d + k)];
  return out;
}

Vec scale_rows(const Vec& v, const Vec& m, std::int64_t rows, std::int64_t d) {
  Vec out(static_cast<std::size_t>(rows * d));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = 0; k < d; ++k)
      out[static_cast<std::size_t>(i * d + k)] =
          v[static_cast<std::size_t>(i)] * m[static_cast<std::size_t>(i * d + k)];
  return out;
}

void subtract_mean(Vec& v) {
  double mean = 0;
  for (double e : v) mean += e;
  mean /= static_cast<double>(std::max<std::size_t>(v.size(), 1));
  for (double& e : v) e -= mean;
}

struct CgStats {
  int iterations = 0;
  bool converged = false;
  double residual = 0;
};

// Solves S z = rhs, S = diag(dy) - P^T diag(1/dx) P (the Schur complement of the dual
// Hessian's x block), by CG preconditioned with diag(dy). S is symmetric positive
// semi-definite; for balanced problems its kernel is the constants, which the right-hand side
// is orthogonal to and which do not change any product the callers form (z1_i + z2_j).
template <class T>
Vec schur_solve(const Plan<T>& p, const Vec& dx, const Vec& dy, const Vec& rhs, const HvpOptions& o,
                CgStats& stats) {
  const std::size_t m = rhs.size();
  auto op = [&](const Vec& v) {
    const auto pv = apply(p, false, v, 1);
    Vec w(dx.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = pv.out[i] / dx[i];
    const auto ptw = apply(p, true, w, 1);
    Vec out(m);
    for (std::size_t j = 0; j < m; ++j) out[j] = dy[j] * v[j] - ptw.out[j];
    return out;
  };
  auto result = detail::conjugate_gradient(op, rhs, dy, o.max_iter, o.rtol, o.atol, [&](int k) {
    report_progress(o.progress, "hvp", k, o.max_iter);
  });
  stats = {result.iterations, result.converged, result.residual};
  return std::move(result.x);
}

// The diagonal blocks D of the dual Hessian: plan marginals (clamped away from 0 for empty
// rows) times 1 / lambda.
Vec diagonal(const Vec& mass, double inverse_damping, double eps) {
  const double floor = std::max(1e-12, 1e-10 * eps);
  Vec out(mass.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::max(mass[i], floor) * inverse_damping;
  return out;
}

struct PairHvp {
  Vec x, y;
  CgStats stats;
};

// H (A, B) for one plan; B empty means zero; y block only when want_y. Notation of
// [flashsinkhorn2026] §7.2 extended to both clouds: e_ij = x_i - y_j, delta_ij = A_i - B_j,
// t_i = <x_i, A_i>, s_j = <y_j, B_j>, m_ij = <A_i, y_j> + <x_i, B_j>, so that
// <e_ij, delta_ij> = t_i + s_j - m_ij.
template <class T>
PairHvp pair_hvp(const Plan<T>& p, const Vec& A, const Vec* B, bool want_y, const HvpOptions& o) {
  const std::int64_t n = p.x.n, m = p.y.n, d = p.x.d;
  const double eps = p.eps, kappa = p.kappa;
  const Vec& X = p.xs;
  const Vec& Y = p.ys;
  const Vec t = row_dots(X, A, n, d);
  const Vec zero_m(static_cast<std::size_t>(m), 0.0);
  const Vec s = B ? row_dots(Y, *B, m, d) : zero_m;
  const bool mixed = B != nullptr;

  // Row pass 1: r, P Y and (with B) P B, P s, P (s Y).
  const Vec sY = mixed ? scale_rows(s, Y, m, d) : Vec{};
  const Vec one_m(static_cast<std::size_t>(m), 1.0);
  const auto r1 = mixed
                      ? apply(p, false, columns(m, {{&Y, d}, {B, d}, {&s, 1}, {&sY, d}}), 3 * d + 1)
                      : apply(p, false, Y, d);
  const std::int64_t k1 = mixed ? 3 * d + 1 : d;
  const Vec& r = r1.mass;
  const Vec PY = block(r1.out, n, k1, 0, d);
  const Vec PB = mixed ? block(r1.out, n, k1, d, d) : Vec(static_cast<std::size_t>(n * d), 0.0);
  const Vec Ps = mixed ? block(r1.out, n, k1, 2 * d, 1) : Vec(static_cast<std::size_t>(n), 0.0);
  const Vec PsY =
      mixed ? block(r1.out, n, k1, 2 * d + 1, d) : Vec(static_cast<std::size_t>(n * d), 0.0);
  const Vec dx = diagonal(r, p.policy.inverse_damping(Axis::X, eps), eps);
  const Vec a_py = row_dots(A, PY, n, d), x_pb = row_dots(X, PB, n, d);
  Vec x1(static_cast<std::size_t>(n)), y1(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < x1.size(); ++i) {
    x1[i] = kappa * (r[i] * t[i] - a_py[i] - x_pb[i] + Ps[i]);
    y1[i] = x1[i] / dx[i];
  }

  // Column pass 1: c, P^T A, P^T t, P^T y1 and (when needed) P^T X, P^T (t X).
  const bool need_x = mixed || want_y;
  const Vec tX = need_x ? scale_rows(t, X, n, d) : Vec{};
  const std::int64_t k2 = need_x ? 3 * d + 2 : d + 2;
  const auto c1 =
      need_x ? apply(p, true, columns(n, {{&A, d}, {&t, 1}, {&y1, 1}, {&X, d}, {&tX, d}}), k2)
             : apply(p, true, columns(n, {{&A, d}, {&t, 1}, {&y1, 1}}), k2);
  const Vec& c = c1.mass;
  const Vec PtA = block(c1.out, m, k2, 0, d);
  const Vec Ptt = block(c1.out, m, k2, d, 1);
  const Vec Pty1 = block(c1.out, m, k2, d + 1, 1);
  const Vec PtX = need_x ? block(c1.out, m, k2, d + 2, d) : Vec{};
  const Vec PttX = need_x ? block(c1.out, m, k2, 2 * d + 2, d) : Vec{};
  const Vec dy = diagonal(c, p.policy.inverse_damping(Axis::Y, eps), eps);
  const Vec y_pta = row_dots(Y, PtA, m, d);
  const Vec ptx_b = mixed ? row_dots(PtX, *B, m, d) : zero_m;
  Vec rhs(static_cast<std::size_t>(m));
  for (std::size_t j = 0; j < rhs.size(); ++j)
    rhs[j] = kappa * (Ptt[j] - y_pta[j] - ptx_b[j] + c[j] * s[j]) - Pty1[j];
  if (p.policy.hard(Axis::X) && p.policy.hard(Axis::Y)) subtract_mean(rhs);

  PairHvp out;
  const Vec z2 = schur_solve(p, dx, dy, rhs, o, out.stats);

  // Row pass 2: P z2, P (z2 Y); then z1 and the implicit part of the x block.
  const Vec z2Y = scale_rows(z2, Y, m, d);
  const auto r2 = apply(p, false, columns(m, {{&z2, 1}, {&z2Y, d}}), d + 1);
  const Vec Pz2 = block(r2.out, n, d + 1, 0, 1);
  const Vec Pz2Y = block(r2.out, n, d + 1, 1, d);
  Vec z1(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < z1.size(); ++i) z1[i] = y1[i] - Pz2[i] / dx[i];

  // Row pass 3 (modulated by m_ij): P m and P (m Y).
  const Vec mod_rows = mixed ? columns(n, {{&A, d}, {&X, d}}) : A;
  const Vec mod_cols = mixed ? columns(m, {{&Y, d}, {B, d}}) : Y;
  const std::int64_t dm = mixed ? 2 * d : d;
  const auto r3 =
      apply(p, false, columns(m, {{&one_m, 1}, {&Y, d}}), d + 1, &mod_rows, &mod_cols, dm);
  const Vec Pm = block(r3.out, n, d + 1, 0, 1);
  const Vec PmY = block(r3.out, n, d + 1, 1, d);

  out.x.resize(static_cast<std::size_t>(n * d));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const double row = t[si] * r[si] + Ps[si] - Pm[si];
    for (std::int64_t k = 0; k < d; ++k) {
      const auto ik = static_cast<std::size_t>(i * d + k);
      const double implicit = X[ik] * (r[si] * z1[si] + Pz2[si]) - PY[ik] * z1[si] - Pz2Y[ik];
      const double q = X[ik] * row - (t[si] * PY[ik] + PsY[ik] - PmY[ik]);
      out.x[ik] =
          kappa / eps * implicit + kappa * (r[si] * A[ik] - PB[ik]) - kappa * kappa / eps * q;
    }
  }
  if (!want_y) return out;

  // Column passes for the y block: P^T z1, P^T (z1 X); modulated P^T m, P^T (m X).
  const Vec z1X = scale_rows(z1, X, n, d);
  const auto c2 = apply(p, true, columns(n, {{&z1, 1}, {&z1X, d}}), d + 1);
  const Vec Ptz1 = block(c2.out, m, d + 1, 0, 1);
  const Vec Ptz1X = block(c2.out, m, d + 1, 1, d);
  const Vec one_n(static_cast<std::size_t>(n), 1.0);
  const auto c3 =
      apply(p, true, columns(n, {{&one_n, 1}, {&X, d}}), d + 1, &mod_cols, &mod_rows, dm);
  const Vec Ptm = block(c3.out, m, d + 1, 0, 1);
  const Vec PtmX = block(c3.out, m, d + 1, 1, d);
  out.y.resize(static_cast<std::size_t>(m * d));
  for (std::int64_t j = 0; j < m; ++j) {
    const auto sj = static_cast<std::size_t>(j);
    const double col = Ptt[sj] + s[sj] * c[sj] - Ptm[sj];
    for (std::int64_t k = 0; k < d; ++k) {
      const auto jk = static_cast<std::size_t>(j * d + k);
      const double implicit = Ptz1X[jk] + z2[sj] * PtX[jk] - Y[jk] * (Ptz1[sj] + c[sj] * z2[sj]);
      const double q = PttX[jk] + s[sj] * PtX[jk] - PtmX[jk] - Y[jk] * col;
      const double b = mixed ? (*B)[jk] : 0.0;
      out.y[jk] = -kappa / eps * implicit - kappa * (PtA[jk] - c[sj] * b) + kappa * kappa / eps * q;
    }
  }
  return out;
}

template <class T>
Vec as_double(std::span<const T> v) {
  return Vec(v.begin(), v.end());
}

template <class T>
Vec as_double(const T* p, std::int64_t count) {
  return Vec(p, p + count);
}

// The second-order products below are derived for the squared Euclidean cost.
template <class T>
void require_second_order(const detail::SolutionState<T>& s) {
  const auto& cost = s.geometry.cost();
  require(cost->second_order(), "cost",
          "Hessian products are implemented for the sqeuclidean cost only, not " + cost.name());
}

template <class T>
Plan<T> make_plan(const detail::SolutionState<T>& s, const HvpOptions& o) {
  require_second_order(s);
  require(!std::holds_alternative<Partial>(s.marginals), "mass",
          "Hessian products of partial OT are not implemented (the active caps make the dual "
          "piecewise smooth)");
  Plan<T> p;
  p.x = s.x();
  p.y = s.y();
  p.fh = s.f_hat;
  p.gh = detail::shifted<T>(s.g_grad.empty() ? std::span<const T>(s.g) : s.g_grad, p.y.sqnorm);
  p.f = s.f;
  p.g = s.g;
  p.eps = s.report.epsilon;
  p.kappa = s.kappa();
  p.policy = MarginalPolicy(s.marginals);
  p.threads = resolve_threads(o.num_threads > 0 ? o.num_threads : s.num_threads);
  p.xs = as_double(p.x.points, p.x.n * p.x.d);
  p.ys = as_double(p.y.points, p.y.n * p.y.d);
  p.passes = s.plan;
  return p;
}

// The self problem OT(w, w) of one side of a divergence: potentials h (final) and h_grad.
template <class T>
Plan<T> self_plan(const detail::SolutionState<T>& s, Axis axis, std::span<const T> h,
                  std::span<const T> h_grad, const HvpOptions& o) {
  Plan<T> p;
  p.x = p.y = axis == Axis::X ? s.x() : s.y();
  p.fh = detail::shifted<T>(h, p.x.sqnorm);
  p.gh = detail::shifted<T>(h_grad.empty() ? h : h_grad, p.x.sqnorm);
  p.f = p.g = h;
  p.eps = s.report.epsilon;
  p.kappa = s.kappa();
  p.policy = MarginalPolicy(s.marginals).self(axis);
  p.threads = resolve_threads(o.num_threads > 0 ? o.num_threads : s.num_threads);
  p.xs = p.ys = as_double(p.x.points, p.x.n * p.x.d);
  p.passes = std::make_shared<SelfView<T>>(s.plan, axis);
  return p;
}

template <class T>
Vec direction(MatrixView<const T> v, std::int64_t rows, std::int64_t d, const char* name) {
  require(v.rows == rows && v.cols == d, name,
          "must have shape (" + std::to_string(rows) + ", " + std::to_string(d) + ")");
  Vec out(static_cast<std::size_t>(rows * d));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = 0; k < d; ++k) {
      const double e = v(i, k);
      require(std::isfinite(e), name, "non-finite value at row " + std::to_string(i));
      out[static_cast<std::size_t>(i * d + k)] = e;
    }
  return out;
}

template <class T>
std::vector<T> to_t(const Vec& v) {
  return std::vector<T>(v.begin(), v.end());
}

void accumulate(Vec& into, const Vec& v, double factor) {
  if (into.empty()) into.assign(v.size(), 0.0);
  for (std::size_t i = 0; i < v.size(); ++i) into[i] += factor * v[i];
}

void merge(CgStats& total, const CgStats& s, bool first) {
  total.iterations += s.iterations;
  total.converged = (first || total.converged) && s.converged;
  total.residual = std::max(total.residual, s.residual);
}

}  // namespace

template <class T>
HvpResult<T> hvp(const Solution<T>& solution, MatrixView<const T> vx, MatrixView<const T> vy,
                 bool want_y, const HvpOptions& options) {
  const auto& s = solution.state();
  require_second_order(s);
  const std::int64_t n = s.geometry.n(), m = s.geometry.m(), d = s.geometry.dim();
  const Vec A = direction(vx, n, d, "vx");
  const Vec B = vy.empty() ? Vec{} : direction(vy, m, d, "vy");
  const auto plan = make_plan(s, options);
  const auto h = pair_hvp(plan, A, B.empty() ? nullptr : &B, want_y, options);
  HvpResult<T> out;
  out.x = to_t<T>(h.x);
  out.y = to_t<T>(h.y);
  out.cg_iterations = h.stats.iterations;
  out.converged = h.stats.converged;
  out.residual = h.stats.residual;
  return out;
}

template <class T>
HvpResult<T> hvp(const DivergenceSolution<T>& solution, MatrixView<const T> vx,
                 MatrixView<const T> vy, bool want_y, const HvpOptions& options) {
  const auto& s = solution.xy().state();
  const std::int64_t n = s.geometry.n(), m = s.geometry.m(), d = s.geometry.dim();
  const Vec A = direction(vx, n, d, "vx");
  const Vec B = vy.empty() ? Vec{} : direction(vy, m, d, "vy");
  const auto h = pair_hvp(make_plan(s, options), A, B.empty() ? nullptr : &B, want_y, options);
  Vec hx = h.x, hy = h.y;
  CgStats stats = h.stats;
  // -OT(a,a)/2: x sits on both sides of the self problem, so its Hessian is the sum of the
  // four blocks: both outputs of the product with (A, A).
  const auto aa = pair_hvp(self_plan(s, Axis::X, solution.f_aa(), solution.f_aa_grad(), options), A,
                           &A, true, options);
  accumulate(hx, aa.x, -0.5);
  accumulate(hx, aa.y, -0.5);
  merge(stats, aa.stats, false);
  if (want_y && !B.empty()) {
    const auto bb = pair_hvp(self_plan(s, Axis::Y, solution.g_bb(), solution.g_bb_grad(), options),
                             B, &B, true, options);
    accumulate(hy, bb.x, -0.5);
    accumulate(hy, bb.y, -0.5);
    merge(stats, bb.stats, false);
  }
  HvpResult<T> out;
  out.x = to_t<T>(hx);
  out.y = to_t<T>(hy);
  out.cg_iterations = stats.iterations;
  out.converged = stats.converged;
  out.residual = stats.residual;
  return out;
}

template <class T>
InverseHvpResult<T> inverse_hvp(const Solution<T>& solution, MatrixView<const T> g,
                                const InverseHvpOptions& options) {
  const auto& s = solution.state();
  const std::int64_t n = s.geometry.n(), d = s.geometry.dim();
  const Vec rhs = direction(g, n, d, "g");
  const auto plan = make_plan(s, options.inner);
  InverseHvpResult<T> out;
  auto cg = detail::conjugate_gradient(
      [&](const Vec& dir) { return pair_hvp(plan, dir, nullptr, false, options.inner).x; }, rhs, {},
      options.max_iter, options.rtol, options.atol, [](int) {});
  Vec w = std::move(cg.x);
  out.iterations = cg.iterations;
  out.negative_curvature = cg.negative_curvature;
  // Steepest descent when the first direction already has non-positive curvature.
  if (cg.negative_curvature && cg.iterations == 0) w = rhs;
  out.residual = cg.residual;
  out.converged = cg.converged;
  out.x = to_t<T>(w);
  return out;
}

template <class T>
Gradients<T> implicit_gradient(const Solution<T>& solution, std::span<const T> grad_f,
                               std::span<const T> grad_g, const HvpOptions& options,
                               HvpResult<T>* report) {
  const auto& s = solution.state();
  const std::int64_t n = s.geometry.n(), m = s.geometry.m(), d = s.geometry.dim();
  require(static_cast<std::int64_t>(grad_f.size()) == n, "grad_f", "must have length n");
  require(static_cast<std::int64_t>(grad_g.size()) == m, "grad_g", "must have length m");
  const Vec uf = as_double(grad_f), ug = as_double(grad_g);
  for (double v : uf) require(std::isfinite(v), "grad_f", "non-finite entry");
  for (double v : ug) require(std::isfinite(v), "grad_g", "non-finite entry");
  // The potentials returned are (f, g): differentiate their own plan.
  Plan<T> p = make_plan(s, options);
  p.gh = s.g_hat;
  const double eps = p.eps, kappa = p.kappa;
  const Vec& X = p.xs;
  const Vec& Y = p.ys;

  // lambda = M^-1 (uf, ug) with M = [[D_x, P], [P^T, D_y]] (the dual Hessian times -eps):
  // lambda2 from the Schur complement, lambda1 = (uf - P lambda2) / D_x.
  const auto r1 = apply(p, false, Y, d);
  const Vec dx = diagonal(r1.mass, p.policy.inverse_damping(Axis::X, eps), eps);
  Vec ufd(uf.size());
  for (std::size_t i = 0; i < ufd.size(); ++i) ufd[i] = uf[i] / dx[i];
  const auto c1 = apply(p, true, columns(n, {{&X, d}, {&ufd, 1}}), d + 1);
  const Vec dy = diagonal(c1.mass, p.policy.inverse_damping(Axis::Y, eps), eps);
  const Vec PtX = block(c1.out, m, d + 1, 0, d);
  const Vec Ptufd = block(c1.out, m, d + 1, d, 1);
  Vec rhs(static_cast<std::size_t>(m));
  for (std::size_t j = 0; j < rhs.size(); ++j) rhs[j] = ug[j] - Ptufd[j];
  const bool balanced = p.policy.hard(Axis::X) && p.policy.hard(Axis::Y);
  if (balanced) subtract_mean(rhs);
  CgStats stats;
  const Vec l2 = schur_solve(p, dx, dy, rhs, options, stats);
  const Vec l2Y = scale_rows(l2, Y, m, d);
  const auto r2 = apply(p, false, columns(m, {{&l2, 1}, {&l2Y, d}}), d + 1);
  const Vec Pl2 = block(r2.out, n, d + 1, 0, 1);
  const Vec Pl2Y = block(r2.out, n, d + 1, 1, d);
  Vec l1(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < l1.size(); ++i) l1[i] = (uf[i] - Pl2[i]) / dx[i];
  const Vec l1X = scale_rows(l1, X, n, d);
  const auto c2 = apply(p, true, columns(n, {{&l1, 1}, {&l1X, d}}), d + 1);
  const Vec Ptl1 = block(c2.out, m, d + 1, 0, 1);
  const Vec Ptl1X = block(c2.out, m, d + 1, 1, d);
  const Vec PY = r1.out;
  const Vec& r = r1.mass;
  const Vec& c = c1.mass;

  Gradients<T> out;
  out.x.resize(static_cast<std::size_t>(n * d));
  out.y.resize(static_cast<std::size_t>(m * d));
  out.a.resize(static_cast<std::size_t>(n));
  out.b.resize(static_cast<std::size_t>(m));
  // dL/dx_i = kappa sum_j P_ij (x_i - y_j)(l1_i + l2_j), and -(same over i) for y_j.
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < d; ++k) {
      const auto ik = static_cast<std::size_t>(i * d + k);
      const auto si = static_cast<std::size_t>(i);
      out.x[ik] =
          static_cast<T>(kappa * (X[ik] * (r[si] * l1[si] + Pl2[si]) - PY[ik] * l1[si] - Pl2Y[ik]));
    }
  for (std::int64_t j = 0; j < m; ++j)
    for (std::int64_t k = 0; k < d; ++k) {
      const auto jk = static_cast<std::size_t>(j * d + k);
      const auto sj = static_cast<std::size_t>(j);
      out.y[jk] = static_cast<T>(
          -kappa * (Ptl1X[jk] + l2[sj] * PtX[jk] - Y[jk] * (Ptl1[sj] + c[sj] * l2[sj])));
    }
  // dL/da_i = eps (l1_i (E_i - r_i / a_i) - (P l2)_i / a_i), E_i = exp(-f_i / rho) (1 when
  // balanced): the derivative of the optimality conditions with respect to the weights.
  for (std::int64_t i = 0; i < n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const double e = p.policy.target_mass(Axis::X, 1.0, static_cast<double>(p.f[si]));
    const double pl2_per_a = r2.out_per_weight[si * static_cast<std::size_t>(d + 1)];
    out.a[si] = static_cast<T>(eps * (l1[si] * (e - r1.mass_per_weight[si]) - pl2_per_a));
  }
  for (std::int64_t j = 0; j < m; ++j) {
    const auto sj = static_cast<std::size_t>(j);
    const double e = p.policy.target_mass(Axis::Y, 1.0, static_cast<double>(p.g[sj]));
    const double ptl1_per_b = c2.out_per_weight[sj * static_cast<std::size_t>(d + 1)];
    out.b[sj] = static_cast<T>(eps * (l2[sj] * (e - c1.mass_per_weight[sj]) - ptl1_per_b));
  }
  if (report) {
    report->cg_iterations = stats.iterations;
    report->converged = stats.converged;
    report->residual = stats.residual;
  }
  return out;
}

template HvpResult<float> hvp(const Solution<float>&, MatrixView<const float>,
                              MatrixView<const float>, bool, const HvpOptions&);
template HvpResult<double> hvp(const Solution<double>&, MatrixView<const double>,
                               MatrixView<const double>, bool, const HvpOptions&);
template HvpResult<float> hvp(const DivergenceSolution<float>&, MatrixView<const float>,
                              MatrixView<const float>, bool, const HvpOptions&);
template HvpResult<double> hvp(const DivergenceSolution<double>&, MatrixView<const double>,
                               MatrixView<const double>, bool, const HvpOptions&);
template InverseHvpResult<float> inverse_hvp(const Solution<float>&, MatrixView<const float>,
                                             const InverseHvpOptions&);
template InverseHvpResult<double> inverse_hvp(const Solution<double>&, MatrixView<const double>,
                                              const InverseHvpOptions&);
template Gradients<float> implicit_gradient(const Solution<float>&, std::span<const float>,
                                            std::span<const float>, const HvpOptions&,
                                            HvpResult<float>*);
template Gradients<double> implicit_gradient(const Solution<double>&, std::span<const double>,
                                             std::span<const double>, const HvpOptions&,
                                             HvpResult<double>*);

}  // namespace birkhoff::transport
