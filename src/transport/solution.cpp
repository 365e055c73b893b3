#include "birkhoff/transport/solution.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "transport/state.hpp"

namespace birkhoff::transport {
namespace {

using detail::Axis;
using detail::LseOut;
using detail::Side;

template <class T>
void check_finite(MatrixView<const T> v, const char* name) {
  for (std::int64_t i = 0; i < v.rows; ++i)
    for (std::int64_t k = 0; k < v.cols; ++k)
      if (!std::isfinite(static_cast<double>(v(i, k))))
        throw InvalidInput(std::string(name) + ": non-finite value at row " + std::to_string(i));
}

template <class T>
std::vector<T> contiguous(MatrixView<const T> v) {
  std::vector<T> out(static_cast<std::size_t>(v.rows * v.cols));
  for (std::int64_t i = 0; i < v.rows; ++i) std::copy_n(v.row(i), v.cols, out.begin() + i * v.cols);
  return out;
}

// One pass over the solution's plan: rows `r` (axis ra, shifted potential rh) against columns
// `c` (axis ca, shifted potential ch), through the passes the solution holds.
template <class T>
struct PlanPass {
  detail::Passes<T>& plan;
  const Side<T>& r;
  Axis ra;
  const std::vector<T>& rh;
  const Side<T>& c;
  Axis ca;
  const std::vector<T>& ch;
  double eps;
  void run(LseOut<T>& o, const T* values = nullptr, std::int64_t dv = 0,
           const detail::Modulation<T>& mod = {}) const {
    plan.lse(ra, ca, rh, ch, eps, o, values, dv, mod);
  }
};

// out_i = sum_j P_ij v_j over the pass's rows; with `mass` also the row sums.
template <class T>
void product(const PlanPass<T>& p, const std::vector<T>& v, std::int64_t k, T* out,
             std::vector<T>* mass = nullptr) {
  LseOut<T> o;
  p.run(o, k ? v.data() : nullptr, k);
  if (mass) mass->resize(static_cast<std::size_t>(p.r.n));
  for (std::int64_t i = 0; i < p.r.n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const double factor = detail::plan_row_factor(p.r, p.rh.data(), si, p.eps, o.max[si]);
    for (std::int64_t q = 0; q < k; ++q)
      out[i * k + q] = static_cast<T>(factor * o.values[static_cast<std::size_t>(i * k + q)]);
    if (mass) (*mass)[si] = static_cast<T>(factor * o.sum[si]);
  }
}

// Row-normalised barycentre of the columns: bar_i = sum_j pi_ij c_j with pi the softmax of
// log w_j + (h_j - C_ij) / eps over j (centred coordinates).
template <class T>
std::vector<T> barycentres(const PlanPass<T>& p) {
  LseOut<T> o;
  p.run(o, p.c.points, p.c.d);
  const std::int64_t n = p.r.n, d = p.r.d;
  std::vector<T> bar(static_cast<std::size_t>(n * d));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < d; ++k)
      bar[static_cast<std::size_t>(i * d + k)] =
          o.values[static_cast<std::size_t>(i * d + k)] / o.sum[static_cast<std::size_t>(i)];
  return bar;
}

// sum_j pi_ij dC/du (u_i, v_j) / kappa' for the pass's rows, pi the row-normalised plan,
// kappa' the returned factor: for the dot-product form u_i - bar_i (kappa' = kappa); for the
// distance-power form sum_j pi_ij |u_i - v_j|^(p - 2) (u_i - v_j) (kappa' = kappa p), one pass
// whose values [v_j, 1] are weighted by s_ij^(p/2 - 1).
template <class T>
double feature_gradients(const PlanPass<T>& p, double kappa, std::vector<double>& out) {
  const Side<T>& r = p.r;
  out.resize(static_cast<std::size_t>(r.n * r.d));
  if (r.power == 0) {
    const auto bar = barycentres(p);
    for (std::size_t idx = 0; idx < out.size(); ++idx) out[idx] = r.points[idx] - bar[idx];
    return kappa;
  }
  const std::int64_t d = r.d, dv = d + 1;
  std::vector<T> values(static_cast<std::size_t>(p.c.n * dv));
  for (std::int64_t j = 0; j < p.c.n; ++j) {
    std::copy_n(p.c.points + j * d, d, values.begin() + j * dv);
    values[static_cast<std::size_t>(j * dv + d)] = T(1);
  }
  detail::Modulation<T> mod;
  mod.distance_exponent = 0.5 * r.power - 1.0;
  LseOut<T> o;
  p.run(o, values.data(), dv, mod);
  for (std::int64_t i = 0; i < r.n; ++i) {
    const T* v = o.values.data() + i * dv;
    const double w = 1.0 / static_cast<double>(o.sum[static_cast<std::size_t>(i)]);
    for (std::int64_t k = 0; k < d; ++k)
      out[static_cast<std::size_t>(i * d + k)] =
          w * (static_cast<double>(r.points[i * d + k]) * v[d] - v[k]);
  }
  return kappa * r.power;
}

// The rows' side of a geometry for the chain rule of the feature map: the centre and the
// scales (empty for the identity map).
struct Pullback {
  const GroundCost* cost = nullptr;
  std::span<const double> centre, scale;
};

template <class T>
Pullback pullback_of(const PointCloud<T>& g, Axis axis) {
  return {&g.cost().model(), g.centre(), axis == Axis::X ? g.x_scale() : g.y_scale()};
}

// d/dx_i of an OT value: r_i sum_j pi_ij dC/dx (x_i, y_j) with r_i the policy's row mass at
// the optimum: the envelope theorem, [flashsinkhorn2026] §4.4 and §5.2; the feature map's
// chain rule takes dC/du back to the point. Rows of axis `axis` against columns of axis
// `other` with the columns' potential h_grad_other; a self term, where x sits on both sides,
// passes the same axis twice and a factor of -1 for -OT(a,a)/2 (the two halves give one full
// self gradient).
template <class T>
void add_point_gradient(const detail::SolutionState<T>& s, const detail::MarginalPolicy& policy,
                        Axis axis, Axis other, std::span<const T> h,
                        std::span<const T> h_grad_other, double factor, std::vector<T>& out,
                        const std::vector<double>* masses = nullptr) {
  const Side<T> r = axis == Axis::X ? s.x() : s.y();
  const Side<T> c = other == Axis::X ? s.x() : s.y();
  const auto ch = detail::shifted(h_grad_other, c.sqnorm);
  const auto rh = detail::shifted(h, r.sqnorm);
  std::vector<double> grad;
  const double scale = feature_gradients(
      PlanPass<T>{*s.plan, r, axis, rh, c, other, ch, s.report.epsilon}, s.kappa(), grad);
  const Pullback back = pullback_of(s.geometry, axis);
  std::vector<double> u(static_cast<std::size_t>(r.d));
  for (std::int64_t i = 0; i < r.n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const double mass = masses ? (*masses)[si]
                               : policy.target_mass(axis, static_cast<double>(r.weights[si]),
                                                    static_cast<double>(h[si]));
    std::span<double> gi(grad.data() + i * r.d, static_cast<std::size_t>(r.d));
    if (!back.scale.empty()) {
      for (std::int64_t k = 0; k < r.d; ++k)
        u[static_cast<std::size_t>(k)] =
            static_cast<double>(r.points[i * r.d + k]) + back.centre[static_cast<std::size_t>(k)];
      back.cost->pullback(u, back.scale[si], gi);
    }
    for (std::int64_t k = 0; k < r.d; ++k)
      out[static_cast<std::size_t>(i * r.d + k)] +=
          static_cast<T>(factor * scale * mass * gi[static_cast<std::size_t>(k)]);
  }
}

// sum_j w_j exp((h_i + k_j - C_ij) / eps) over the pass's rows: a row's plan marginal over its
// weight, also for a zero weight.
template <class T>
std::vector<double> densities(const PlanPass<T>& p) {
  LseOut<T> o;
  p.run(o);
  std::vector<double> out(static_cast<std::size_t>(p.r.n));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = std::exp2(detail::kLog2e * static_cast<double>(p.rh[i]) / p.eps +
                       static_cast<double>(o.max[i])) *
             static_cast<double>(o.sum[i]);
  return out;
}

// The pass of the solution's rows (x) against its columns (y), or the transpose.
template <class T>
PlanPass<T> xy_pass(const detail::SolutionState<T>& s, const Side<T>& x, const Side<T>& y,
                    bool transpose) {
  if (transpose) return {*s.plan, y, Axis::Y, s.g_hat, x, Axis::X, s.f_hat, s.report.epsilon};
  return {*s.plan, x, Axis::X, s.f_hat, y, Axis::Y, s.g_hat, s.report.epsilon};
}

template <class T>
std::span<const T> or_else(const std::vector<T>& preferred, const std::vector<T>& fallback) {
  return preferred.empty() ? fallback : preferred;
}

}  // namespace

template <class T>
Solution<T>::Solution(std::shared_ptr<const detail::SolutionState<T>> state)
    : state_(std::move(state)) {}

template <class T>
const PointCloud<T>& Solution<T>::geometry() const {
  return state_->geometry;
}
template <class T>
const Marginals& Solution<T>::marginals() const {
  return state_->marginals;
}
template <class T>
const SinkhornReport& Solution<T>::report() const {
  return state_->report;
}
template <class T>
double Solution<T>::multiplier() const {
  return state_->multiplier;
}
template <class T>
std::span<const T> Solution<T>::f() const {
  return state_->f;
}
template <class T>
std::span<const T> Solution<T>::g() const {
  return state_->g;
}
template <class T>
std::span<const T> Solution<T>::f_grad() const {
  return state_->f_grad;
}
template <class T>
std::span<const T> Solution<T>::g_grad() const {
  return state_->g_grad;
}
template <class T>
std::span<const T> Solution<T>::a() const {
  return state_->a.w;
}
template <class T>
std::span<const T> Solution<T>::b() const {
  return state_->b.w;
}

namespace {

// out = P v (transpose: P^T v) for a (rows of the other side, k) operand v named `name`.
template <class T>
void apply_plan(const detail::SolutionState<T>& s, MatrixView<const T> v, MatrixView<T> out,
                bool transpose, const char* name) {
  const std::int64_t rows = transpose ? s.geometry.m() : s.geometry.n();
  const std::int64_t cols = transpose ? s.geometry.n() : s.geometry.m();
  require(v.rows == cols, name,
          "must have " + std::to_string(cols) +
              (transpose ? " rows (one per point of x)" : " rows (one per point of y)"));
  require(out.rows == rows && out.cols == v.cols, "out",
          transpose ? "must have shape (m, k)" : "must have shape (n, k)");
  check_finite(v, name);
  std::vector<T> res(static_cast<std::size_t>(out.rows * v.cols));
  const auto x = s.x(), y = s.y();
  product(xy_pass(s, x, y, transpose), contiguous(v), v.cols, res.data());
  for (std::int64_t i = 0; i < out.rows; ++i)
    std::copy_n(res.begin() + i * v.cols, v.cols, out.row(i));
}

}  // namespace

namespace {

// The float64 solution a float32 one was solved as (SolutionState::wide), or null.
template <class T>
const Solution<double>* wide_of(const detail::SolutionState<T>& s) {
  if constexpr (std::is_same_v<T, float>) return s.wide.get();
  return nullptr;
}

template <class T>
std::vector<T> narrowed(const std::vector<double>& v) {
  return {v.begin(), v.end()};
}

template <class T>
Gradients<T> narrowed(const Gradients<double>& g) {
  return {narrowed<T>(g.x), narrowed<T>(g.y), narrowed<T>(g.a), narrowed<T>(g.b)};
}

// out = P v (or P^T v) through the float64 solution: v widened, the rows rounded back.
template <class T>
void apply_wide(const Solution<double>& wide, MatrixView<const T> v, MatrixView<T> out,
                bool transpose) {
  std::vector<double> vw(static_cast<std::size_t>(v.rows * v.cols));
  for (std::int64_t i = 0; i < v.rows; ++i)
    for (std::int64_t k = 0; k < v.cols; ++k)
      vw[static_cast<std::size_t>(i * v.cols + k)] = static_cast<double>(v(i, k));
  std::vector<double> ow(static_cast<std::size_t>(out.rows * out.cols));
  const MatrixView<const double> vv(vw.data(), v.rows, v.cols);
  const MatrixView<double> ov(ow.data(), out.rows, out.cols);
  if (transpose)
    wide.apply_transpose(vv, ov);
  else
    wide.apply(vv, ov);
  for (std::int64_t i = 0; i < out.rows; ++i)
    for (std::int64_t k = 0; k < out.cols; ++k)
      out.row(i)[k] = static_cast<T>(ow[static_cast<std::size_t>(i * out.cols + k)]);
}

}  // namespace

template <class T>
void Solution<T>::apply(MatrixView<const T> v, MatrixView<T> out) const {
  if (const auto* wide = wide_of(*state_)) return apply_wide(*wide, v, out, false);
  apply_plan(*state_, v, out, false, "v");
}

template <class T>
void Solution<T>::apply_transpose(MatrixView<const T> u, MatrixView<T> out) const {
  if (const auto* wide = wide_of(*state_)) return apply_wide(*wide, u, out, true);
  apply_plan(*state_, u, out, true, "u");
}

template <class T>
std::vector<T> Solution<T>::row_marginal() const {
  if (const auto* wide = wide_of(*state_)) return narrowed<T>(wide->row_marginal());
  const auto& s = *state_;
  std::vector<T> mass;
  const auto x = s.x(), y = s.y();
  product<T>(xy_pass(s, x, y, false), {}, 0, nullptr, &mass);
  return mass;
}

template <class T>
std::vector<T> Solution<T>::col_marginal() const {
  if (const auto* wide = wide_of(*state_)) return narrowed<T>(wide->col_marginal());
  const auto& s = *state_;
  std::vector<T> mass;
  const auto x = s.x(), y = s.y();
  product<T>(xy_pass(s, x, y, true), {}, 0, nullptr, &mass);
  return mass;
}

template <class T>
std::vector<T> Solution<T>::barycentric_map() const {
  if (const auto* wide = wide_of(*state_)) return narrowed<T>(wide->barycentric_map());
  const auto& s = *state_;
  const std::int64_t n = s.geometry.n(), m = s.geometry.m(), d = s.geometry.dim();
  const auto centre = s.geometry.centre();
  const auto scale = s.geometry.y_scale();
  if (!scale.empty()) {
    // A feature map (cosine): the average of the points y_j = (v_j + c) scale_j themselves.
    std::vector<T> y(static_cast<std::size_t>(m * d));
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t k = 0; k < d; ++k)
        y[static_cast<std::size_t>(j * d + k)] = static_cast<T>(
            (static_cast<double>(s.geometry.y()(j, k)) + centre[static_cast<std::size_t>(k)]) *
            scale[static_cast<std::size_t>(j)]);
    LseOut<T> o;
    const auto xs = s.x(), ys = s.y();
    xy_pass(s, xs, ys, false).run(o, y.data(), d);
    std::vector<T> bar(static_cast<std::size_t>(n * d));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < d; ++k)
        bar[static_cast<std::size_t>(i * d + k)] =
            o.values[static_cast<std::size_t>(i * d + k)] / o.sum[static_cast<std::size_t>(i)];
    return bar;
  }
  const auto xs = s.x(), ys = s.y();
  auto bar = barycentres(xy_pass(s, xs, ys, false));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < d; ++k)
      bar[static_cast<std::size_t>(i * d + k)] +=
          static_cast<T>(centre[static_cast<std::size_t>(k)]);
  return bar;
}

template <class T>
std::vector<T> Solution<T>::dense_plan() const {
  if (const auto* wide = wide_of(*state_)) return narrowed<T>(wide->dense_plan());
  const auto& s = *state_;
  const std::int64_t n = s.geometry.n(), m = s.geometry.m(), d = s.geometry.dim();
  const double eps = s.report.epsilon;
  const auto& cost = s.geometry.cost();
  const auto x = s.geometry.x(), y = s.geometry.y();
  const auto xs = s.x(), ys = s.y();
  std::vector<T> p(static_cast<std::size_t>(n * m));
  std::vector<double> u(static_cast<std::size_t>(d)), v(u.size());
  for (std::int64_t i = 0; i < n; ++i) {
    std::copy_n(x.row(i), d, u.begin());
    for (std::int64_t j = 0; j < m; ++j) {
      std::copy_n(y.row(j), d, v.begin());
      const double c = cost->feature_cost(u.data(), v.data(), d) + detail::label_cost(xs, ys, i, j);
      const double a = s.a.w[static_cast<std::size_t>(i)], b = s.b.w[static_cast<std::size_t>(j)];
      p[static_cast<std::size_t>(i * m + j)] =
          static_cast<T>(a * b *
                         std::exp((static_cast<double>(s.f[static_cast<std::size_t>(i)]) +
                                   static_cast<double>(s.g[static_cast<std::size_t>(j)]) - c) /
                                  eps));
    }
  }
  return p;
}

template <class T>
Gradients<T> Solution<T>::gradients() const {
  if (const auto* wide = wide_of(*state_)) return narrowed<T>(wide->gradients());
  const auto& s = *state_;
  const detail::MarginalPolicy policy(s.marginals);
  const double eps = s.report.epsilon;
  const auto x = s.x(), y = s.y();
  Gradients<T> out;
  out.x.assign(static_cast<std::size_t>(x.n * x.d), T(0));
  out.y.assign(static_cast<std::size_t>(y.n * y.d), T(0));
  out.a.assign(static_cast<std::size_t>(x.n), T(0));
  out.b.assign(static_cast<std::size_t>(y.n), T(0));
  if (policy.partial_mass()) {
    // Partial OT (envelope theorem on the Lagrangian, docs/partial.md): the plan's marginals
    // r replace the weights in the point gradients, and d loss / d a_i = f_i - eps r_i / a_i
    // with f the row multiplier (the stored potential minus lambda); likewise for b.
    const auto dx = densities(xy_pass(s, x, y, false));
    const auto dy = densities(xy_pass(s, x, y, true));
    std::vector<double> rx(dx.size()), ry(dy.size());
    for (std::size_t i = 0; i < dx.size(); ++i) {
      rx[i] = static_cast<double>(x.weights[i]) * dx[i];
      out.a[i] = static_cast<T>(static_cast<double>(s.f[i]) - s.multiplier - eps * dx[i]);
    }
    for (std::size_t j = 0; j < dy.size(); ++j) {
      ry[j] = static_cast<double>(y.weights[j]) * dy[j];
      out.b[j] = static_cast<T>(static_cast<double>(s.g[j]) - eps * dy[j]);
    }
    add_point_gradient<T>(s, policy, Axis::X, Axis::Y, s.f, s.g, 1.0, out.x, &rx);
    add_point_gradient<T>(s, policy, Axis::Y, Axis::X, s.g, s.f, 1.0, out.y, &ry);
    return out;
  }
  add_point_gradient<T>(s, policy, Axis::X, Axis::Y, s.f, or_else(s.g_grad, s.g), 1.0, out.x);
  add_point_gradient<T>(s, policy, Axis::Y, Axis::X, s.g, or_else(s.f_grad, s.f), 1.0, out.y);
  policy.add_weight_gradient<T>(Axis::X, s.f, eps, 1.0, out.a);
  policy.add_weight_gradient<T>(Axis::Y, s.g, eps, 1.0, out.b);
  return out;
}

template <class T>
DivergenceSolution<T>::DivergenceSolution(std::shared_ptr<const detail::DivergenceState<T>> state)
    : state_(std::move(state)) {}

template <class T>
double DivergenceSolution<T>::loss() const {
  return state_->loss;
}
template <class T>
const Solution<T>& DivergenceSolution<T>::xy() const {
  return state_->xy;
}
template <class T>
std::span<const T> DivergenceSolution<T>::f_aa() const {
  return state_->f_aa;
}
template <class T>
std::span<const T> DivergenceSolution<T>::g_bb() const {
  return state_->g_bb;
}
template <class T>
std::span<const T> DivergenceSolution<T>::f_aa_grad() const {
  return state_->f_aa_grad;
}
template <class T>
std::span<const T> DivergenceSolution<T>::g_bb_grad() const {
  return state_->g_bb_grad;
}

template <class T>
Gradients<T> DivergenceSolution<T>::gradients() const {
  if constexpr (std::is_same_v<T, float>)
    if (state_->wide) return narrowed<T>(state_->wide->gradients());
  const auto& d = *state_;
  const auto& s = d.xy.state();
  Gradients<T> out = d.xy.gradients();
  const detail::MarginalPolicy policy(s.marginals);
  const auto self_x = policy.self(Axis::X), self_y = policy.self(Axis::Y);
  const double eps = s.report.epsilon;
  add_point_gradient<T>(s, self_x, Axis::X, Axis::X, d.f_aa, or_else(d.f_aa_grad, d.f_aa), -1.0,
                        out.x);
  add_point_gradient<T>(s, self_y, Axis::Y, Axis::Y, d.g_bb, or_else(d.g_bb_grad, d.g_bb), -1.0,
                        out.y);
  self_x.add_weight_gradient<T>(Axis::X, d.f_aa, eps, -1.0, out.a);
  self_y.add_weight_gradient<T>(Axis::Y, d.g_bb, eps, -1.0, out.b);
  return out;
}

template class Solution<float>;
template class Solution<double>;
template class DivergenceSolution<float>;
template class DivergenceSolution<double>;

}  // namespace birkhoff::transport
