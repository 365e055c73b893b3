#include "birkhoff/transport/plan.hpp"

#include <cmath>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "transport/geometry.hpp"

namespace birkhoff::transport {
namespace {

using detail::Cloud;
using detail::LseOut;

template <class T>
std::vector<T> shifted(std::span<const T> h, const Cloud<T>& c) {
  std::vector<T> out(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) out[i] = h[i] - c.sqnorm[i];
  return out;
}

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

// Everything a streamed product needs: centred clouds and shifted potentials.
template <class T>
struct Streams {
  Cloud<T> x, y;
  std::vector<T> fh, gh;
  std::vector<double> centre;
  double kappa = 2;
  Streams(const OtProblem<T>& p, std::span<const T> f, std::span<const T> g) {
    const double cs = detail::cost_scale(p.cost);
    kappa = 2 * cs;
    centre = detail::joint_centre(p.x, p.y);
    x = detail::make_cloud(p.x, p.a, centre, cs);
    y = detail::make_cloud(p.y, p.b, centre, cs);
    fh = shifted(f, x);
    gh = shifted(g, y);
  }
};

// out_i = sum_j P_ij v_j for rows `r` (potential rh) against columns `c` (potential ch).
template <class T>
void product(const Cloud<T>& r, const std::vector<T>& rh, const Cloud<T>& c,
             const std::vector<T>& ch, double eps, double kappa, int threads,
             const std::vector<T>& v, std::int64_t k, T* out, std::vector<T>* mass = nullptr) {
  LseOut<T> o;
  detail::lse_pass(r, c, ch.data(), eps, kappa, threads, o, k ? v.data() : nullptr, k);
  if (mass) mass->resize(static_cast<std::size_t>(r.n));
  for (std::int64_t i = 0; i < r.n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const double factor = detail::plan_row_factor(r, rh, si, eps, o.max[si]);
    for (std::int64_t q = 0; q < k; ++q)
      out[i * k + q] = static_cast<T>(factor * o.values[static_cast<std::size_t>(i * k + q)]);
    if (mass) (*mass)[si] = static_cast<T>(factor * o.sum[si]);
  }
}

// Row-normalised barycentre of the columns: bar_i = sum_j pi_ij c_j with pi the softmax of
// log w_j + (h_j - C_ij) / eps over j (centred coordinates).
template <class T>
std::vector<T> barycentres(const Cloud<T>& r, const Cloud<T>& c, const std::vector<T>& ch,
                           double eps, double kappa, int threads) {
  LseOut<T> o;
  detail::lse_pass(r, c, ch.data(), eps, kappa, threads, o, c.points.data(), c.d);
  std::vector<T> bar(static_cast<std::size_t>(r.n * r.d));
  for (std::int64_t i = 0; i < r.n; ++i)
    for (std::int64_t k = 0; k < r.d; ++k)
      bar[static_cast<std::size_t>(i * r.d + k)] =
          o.values[static_cast<std::size_t>(i * r.d + k)] / o.sum[static_cast<std::size_t>(i)];
  return bar;
}

}  // namespace

template <class T>
TransportPlan<T>::TransportPlan(const OtProblem<T>& problem, std::span<const T> f,
                                std::span<const T> g, double epsilon, int num_threads)
    : problem_(problem),
      n_(problem.x.rows),
      m_(problem.y.rows),
      d_(problem.x.cols),
      f_(f.begin(), f.end()),
      g_(g.begin(), g.end()),
      epsilon_(epsilon),
      threads_(resolve_threads(num_threads)) {
  require(static_cast<std::int64_t>(f.size()) == n_, "f",
          "length must equal the number of rows of x");
  require(static_cast<std::int64_t>(g.size()) == m_, "g",
          "length must equal the number of rows of y");
  require(std::isfinite(epsilon) && epsilon > 0, "epsilon", "must be positive and finite");
}

template <class T>
TransportPlan<T>::TransportPlan(const OtProblem<T>& problem, const SinkhornResult<T>& result,
                                int num_threads)
    : TransportPlan(problem, std::span<const T>(result.f), std::span<const T>(result.g),
                    result.epsilon, num_threads) {}

template <class T>
void TransportPlan<T>::apply(MatrixView<const T> v, MatrixView<T> out) const {
  product_into(false, v, out);
}

template <class T>
void TransportPlan<T>::apply_transpose(MatrixView<const T> u, MatrixView<T> out) const {
  product_into(true, u, out);
}

template <class T>
void TransportPlan<T>::product_into(bool transpose, MatrixView<const T> v,
                                    MatrixView<T> out) const {
  const char* name = transpose ? "u" : "v";
  const std::int64_t in_rows = transpose ? n_ : m_, out_rows = transpose ? m_ : n_;
  require(v.rows == in_rows, name,
          "must have " + std::to_string(in_rows) + " rows (one per point of " +
              (transpose ? "x)" : "y)"));
  require(out.rows == out_rows && out.cols == v.cols, "out",
          transpose ? "must have shape (m, k)" : "must have shape (n, k)");
  check_finite(v, name);
  Streams<T> s(problem_, f_, g_);
  std::vector<T> res(static_cast<std::size_t>(out_rows * v.cols));
  if (transpose) {
    product(s.y, s.gh, s.x, s.fh, epsilon_, s.kappa, threads_, contiguous(v), v.cols, res.data());
  } else {
    product(s.x, s.fh, s.y, s.gh, epsilon_, s.kappa, threads_, contiguous(v), v.cols, res.data());
  }
  for (std::int64_t i = 0; i < out_rows; ++i)
    std::copy_n(res.begin() + i * v.cols, v.cols, out.row(i));
}

template <class T>
std::vector<T> TransportPlan<T>::row_marginal() const {
  Streams<T> s(problem_, f_, g_);
  std::vector<T> mass;
  product<T>(s.x, s.fh, s.y, s.gh, epsilon_, s.kappa, threads_, {}, 0, nullptr, &mass);
  return mass;
}

template <class T>
std::vector<T> TransportPlan<T>::col_marginal() const {
  Streams<T> s(problem_, f_, g_);
  std::vector<T> mass;
  product<T>(s.y, s.gh, s.x, s.fh, epsilon_, s.kappa, threads_, {}, 0, nullptr, &mass);
  return mass;
}

template <class T>
std::vector<T> TransportPlan<T>::barycentric_map() const {
  Streams<T> s(problem_, f_, g_);
  auto bar = barycentres(s.x, s.y, s.gh, epsilon_, s.kappa, threads_);
  for (std::int64_t i = 0; i < n_; ++i)
    for (std::int64_t k = 0; k < d_; ++k)
      bar[static_cast<std::size_t>(i * d_ + k)] +=
          static_cast<T>(s.centre[static_cast<std::size_t>(k)]);
  return bar;
}

template <class T>
std::vector<T> TransportPlan<T>::dense() const {
  const double cs = detail::cost_scale(problem_.cost);
  std::vector<T> p(static_cast<std::size_t>(n_ * m_));
  for (std::int64_t i = 0; i < n_; ++i)
    for (std::int64_t j = 0; j < m_; ++j) {
      double c = 0;
      for (std::int64_t k = 0; k < d_; ++k) {
        const double diff = static_cast<double>(problem_.x(i, k)) - problem_.y(j, k);
        c += diff * diff;
      }
      const double a = problem_.a.empty() ? 1.0 / static_cast<double>(n_)
                                          : problem_.a[static_cast<std::size_t>(i)];
      const double b = problem_.b.empty() ? 1.0 / static_cast<double>(m_)
                                          : problem_.b[static_cast<std::size_t>(j)];
      p[static_cast<std::size_t>(i * m_ + j)] =
          static_cast<T>(a * b *
                         std::exp((static_cast<double>(f_[static_cast<std::size_t>(i)]) +
                                   g_[static_cast<std::size_t>(j)] - cs * c) /
                                  epsilon_));
    }
  return p;
}

namespace {

// d/dx_i of an OT value: kappa r_i (x_i - bar_i) with r_i the row mass (a_i when the side is a
// hard constraint, a_i exp(-f_i / rho) when relaxed): the envelope theorem, FlashSinkhorn §4.4
// and §5.2. `self` doubles it for a self term, where x sits on both sides.
template <class T>
void add_point_gradient(const Cloud<T>& r, const Cloud<T>& c, std::span<const T> f,
                        std::span<const T> h_grad, const std::optional<double>& reach, double eps,
                        double kappa, int threads, double factor, std::vector<T>& out) {
  const auto ch = shifted(h_grad, c);
  const auto bar = barycentres(r, c, ch, eps, kappa, threads);
  for (std::int64_t i = 0; i < r.n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    double mass = r.weights[si];
    if (reach) mass *= std::exp(-static_cast<double>(f[si]) / (*reach * *reach));
    for (std::int64_t k = 0; k < r.d; ++k) {
      const auto idx = static_cast<std::size_t>(i * r.d + k);
      out[idx] += static_cast<T>(factor * kappa * mass * (r.points[idx] - bar[idx]));
    }
  }
}

// d/dw_i of the value formula at the optimum (envelope theorem): a hard side gives h_i; a
// relaxed side rho (1 - e) - eps e, plus eps/2 when the other side is relaxed too, with
// e = exp(-h_i / rho).
template <class T>
void add_weight_gradient(std::span<const T> h, const std::optional<double>& reach,
                         bool other_relaxed, double eps, double factor, std::vector<T>& out) {
  for (std::size_t i = 0; i < h.size(); ++i) {
    double v = static_cast<double>(h[i]);
    if (reach) {
      const double rho = *reach * *reach;
      const double x = -static_cast<double>(h[i]) / rho;
      v = -rho * std::expm1(x) - eps * std::exp(x) + (other_relaxed ? 0.5 * eps : 0.0);
    }
    out[i] += static_cast<T>(factor * v);
  }
}

}  // namespace

template <class T>
Gradients<T> gradients(const OtProblem<T>& problem, const SinkhornResult<T>& result,
                       int num_threads) {
  const int threads = resolve_threads(num_threads);
  Streams<T> s(problem, result.f, result.g);
  Gradients<T> out;
  out.x.assign(static_cast<std::size_t>(s.x.n * s.x.d), T(0));
  out.y.assign(static_cast<std::size_t>(s.y.n * s.y.d), T(0));
  out.a.assign(static_cast<std::size_t>(s.x.n), T(0));
  out.b.assign(static_cast<std::size_t>(s.y.n), T(0));
  const double eps = result.epsilon;
  const auto& f_grad = result.f_grad.empty() ? result.f : result.f_grad;
  const auto& g_grad = result.g_grad.empty() ? result.g : result.g_grad;
  add_point_gradient<T>(s.x, s.y, result.f, g_grad, problem.reach_a, eps, s.kappa, threads, 1.0,
                        out.x);
  add_point_gradient<T>(s.y, s.x, result.g, f_grad, problem.reach_b, eps, s.kappa, threads, 1.0,
                        out.y);
  add_weight_gradient<T>(result.f, problem.reach_a, problem.reach_b.has_value(), eps, 1.0, out.a);
  add_weight_gradient<T>(result.g, problem.reach_b, problem.reach_a.has_value(), eps, 1.0, out.b);
  return out;
}

template <class T>
Gradients<T> gradients(const OtProblem<T>& problem, const DivergenceResult<T>& result,
                       int num_threads) {
  const int threads = resolve_threads(num_threads);
  Gradients<T> out = gradients(problem, result.xy, num_threads);
  Streams<T> s(problem, result.xy.f, result.xy.g);
  const double eps = result.xy.epsilon;
  // -1/2 d OT(a,a): x sits on both sides, so the two halves give one full self gradient.
  add_point_gradient<T>(s.x, s.x, result.f_aa,
                        result.f_aa_grad.empty() ? result.f_aa : result.f_aa_grad, problem.reach_a,
                        eps, s.kappa, threads, -1.0, out.x);
  add_point_gradient<T>(s.y, s.y, result.g_bb,
                        result.g_bb_grad.empty() ? result.g_bb : result.g_bb_grad, problem.reach_b,
                        eps, s.kappa, threads, -1.0, out.y);
  add_weight_gradient<T>(result.f_aa, problem.reach_a, true, eps, -1.0, out.a);
  add_weight_gradient<T>(result.g_bb, problem.reach_b, true, eps, -1.0, out.b);
  return out;
}

template class TransportPlan<float>;
template class TransportPlan<double>;
template Gradients<float> gradients(const OtProblem<float>&, const SinkhornResult<float>&, int);
template Gradients<double> gradients(const OtProblem<double>&, const SinkhornResult<double>&, int);
template Gradients<float> gradients(const OtProblem<float>&, const DivergenceResult<float>&, int);
template Gradients<double> gradients(const OtProblem<double>&, const DivergenceResult<double>&,
                                     int);

}  // namespace birkhoff::transport
