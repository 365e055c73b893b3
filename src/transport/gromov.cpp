#include "birkhoff/transport/gromov.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "birkhoff/transport/sliced.hpp"
#include "checks.hpp"
#include "inner.hpp"
#include "monotone.hpp"

namespace birkhoff::transport {
namespace {

using Matrix = std::vector<double>;  // row-major, the shape kept beside it
using detail::InnerPlan;

// A cloud with the lifted features of its squared Euclidean inner cost,
// C_ik = |z_i - z_k|^2 = lift_i . dual_k with lift = [|z|^2, 1, -2 z], dual = [1, |z|^2, z].
struct Lifted {
  std::int64_t n = 0, d = 0, e = 0;  // e = d + 2
  MatrixView<const double> z;
  Matrix lift, dual;
  std::vector<double> w;  // the weights (uniform filled in)
  bool uniform = false;   // no weights given

  Lifted(MatrixView<const double> points, std::span<const double> weights)
      : n(points.rows), d(points.cols), e(points.cols + 2), z(points) {
    lift.resize(static_cast<std::size_t>(n * e));
    dual.resize(static_cast<std::size_t>(n * e));
    w.assign(static_cast<std::size_t>(n), 1.0 / static_cast<double>(n));
    if (!weights.empty()) w.assign(weights.begin(), weights.end());
    uniform = weights.empty();
    for (std::int64_t i = 0; i < n; ++i) {
      const double* zi = z.row(i);
      double s = 0;
      for (std::int64_t k = 0; k < d; ++k) s += zi[k] * zi[k];
      double* l = &lift[static_cast<std::size_t>(i * e)];
      double* u = &dual[static_cast<std::size_t>(i * e)];
      l[0] = s, l[1] = 1, u[0] = 1, u[1] = s;
      for (std::int64_t k = 0; k < d; ++k) l[2 + k] = -2 * zi[k], u[2 + k] = zi[k];
    }
  }
  double sq(std::int64_t i) const { return lift[static_cast<std::size_t>(i * e)]; }
};

// The moments of weights c over a cloud that the quartic terms need.
struct Moments {
  double c0 = 0, cs = 0, css = 0;  // sum c, sum c s, sum c s^2 (s = |z|^2)
  std::vector<double> m1, ms;      // sum c z, sum c s z
  std::vector<double> s2;          // sum c z z^T (d x d)

  Moments(const Lifted& p, std::span<const double> c) {
    const auto d = static_cast<std::size_t>(p.d);
    m1.assign(d, 0), ms.assign(d, 0), s2.assign(d * d, 0);
    for (std::int64_t i = 0; i < p.n; ++i) {
      const double ci = c[static_cast<std::size_t>(i)], s = p.sq(i);
      const double* zi = p.z.row(i);
      c0 += ci, cs += ci * s, css += ci * s * s;
      for (std::size_t k = 0; k < d; ++k) {
        m1[k] += ci * zi[k];
        ms[k] += ci * s * zi[k];
        for (std::size_t l = 0; l < d; ++l) s2[k * d + l] += ci * zi[k] * zi[l];
      }
    }
  }
  // sum_k c_k |z_i - z_k|^4, expanded in the moments.
  double quartic(const Lifted& p, std::int64_t i) const {
    const double s = p.sq(i);
    const double* zi = p.z.row(i);
    const auto d = static_cast<std::size_t>(p.d);
    double zm1 = 0, zms = 0, zs2z = 0;
    for (std::size_t k = 0; k < d; ++k) {
      zm1 += zi[k] * m1[k];
      zms += zi[k] * ms[k];
      for (std::size_t l = 0; l < d; ++l) zs2z += zi[k] * s2[k * d + l] * zi[l];
    }
    return c0 * s * s + css + 4 * zs2z + 2 * s * cs - 4 * s * zm1 - 4 * zms;
  }
  // sum_k c_k |z_i - z_k|^2 (z_i - z_k), added to out (d) times `scale`.
  void cubic(const Lifted& p, std::int64_t i, double scale, double* out) const {
    const double s = p.sq(i);
    const double* zi = p.z.row(i);
    const auto d = static_cast<std::size_t>(p.d);
    double zm1 = 0;
    for (std::size_t k = 0; k < d; ++k) zm1 += zi[k] * m1[k];
    for (std::size_t k = 0; k < d; ++k) {
      double s2z = 0;
      for (std::size_t l = 0; l < d; ++l) s2z += s2[k * d + l] * zi[l];
      out[k] += scale * (zi[k] * (s * c0 + cs - 2 * zm1) - (s * m1[k] + ms[k] - 2 * s2z));
    }
  }
};

// out (rows_a.e x rows_b.e) = A^T B for A (r, ea), B (r, eb) row-major with row strides.
Matrix inner(const double* a, std::int64_t ea, std::int64_t sa, const double* b, std::int64_t eb,
             std::int64_t sb, std::int64_t rows) {
  Matrix out(static_cast<std::size_t>(ea * eb), 0.0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t i = 0; i < ea; ++i)
      for (std::int64_t j = 0; j < eb; ++j)
        out[static_cast<std::size_t>(i * eb + j)] += a[r * sa + i] * b[r * sb + j];
  return out;
}

double frobenius(const Matrix& m) {
  double s = 0;
  for (double v : m) s += v * v;
  return std::sqrt(s);
}

void check(MatrixView<const double> x, MatrixView<const double> y, std::span<const double> a,
           std::span<const double> b, double epsilon, const GromovOptions& o,
           MatrixView<const double> fx, MatrixView<const double> fy,
           MatrixView<const double> init) {
  detail::check_points(x, "x");
  detail::check_points(y, "y");
  const double ma = detail::check_weights(a, x.rows, "a", "x");
  const double mb = detail::check_weights(b, y.rows, "b", "y");
  detail::check_equal_masses(ma, mb, "Gromov-Wasserstein needs equal masses");
  require(std::isfinite(epsilon) && epsilon > 0, "epsilon",
          "must be positive and finite, got " + std::to_string(epsilon));
  const bool fused = fx.rows != 0 || fy.rows != 0;
  if (fused) {
    require(fx.rows != 0, "features_x", "fused GW needs features_x and features_y");
    require(fy.rows != 0, "features_y", "fused GW needs features_x and features_y");
    detail::check_points(fx, "features_x");
    detail::check_points(fy, "features_y");
    require(fx.rows == x.rows, "features_x",
            "has " + std::to_string(fx.rows) + " rows but x has " + std::to_string(x.rows));
    require(fy.rows == y.rows, "features_y",
            "has " + std::to_string(fy.rows) + " rows but y has " + std::to_string(y.rows));
    require(fx.cols == fy.cols, "features_y",
            "dimension mismatch: features_x has " + std::to_string(fx.cols) +
                " columns, features_y " + std::to_string(fy.cols));
  }
  if (init.rows != 0) {
    require(init.rows == x.rows && init.cols == y.rows, "init",
            "must have shape (n, m) = (" + std::to_string(x.rows) + ", " + std::to_string(y.rows) +
                ")");
    detail::check_points(init, "init");
    double total = 0;
    for (std::int64_t i = 0; i < init.rows; ++i)
      for (std::int64_t j = 0; j < init.cols; ++j) {
        require(init(i, j) >= 0, "init", "a plan has no negative entries");
        total += init(i, j);
      }
    require(total > 0, "init", "the plan is zero");
  }
  require(std::isfinite(o.alpha) && o.alpha >= 0 && o.alpha <= 1, "alpha", "must lie in [0, 1]");
  require(o.max_iter >= 1, "max_iter", "must be >= 1");
  require(std::isfinite(o.tol) && o.tol >= 0, "tol", "must be >= 0");
  require(o.n_init >= 1, "n_init", "must be >= 1");
  require(std::isfinite(o.marginal_tol) && o.marginal_tol >= 0, "marginal_tol", "must be >= 0");
  require(o.inner_max_iter >= 1, "inner_max_iter", "must be >= 1");
  require(o.num_threads >= 0, "num_threads", "must be >= 0");
}

// sum_i z_i (d).
std::vector<double> column_sums(MatrixView<const double> z) {
  std::vector<double> sums(static_cast<std::size_t>(z.cols), 0.0);
  for (std::int64_t i = 0; i < z.rows; ++i)
    for (std::int64_t c = 0; c < z.cols; ++c) sums[static_cast<std::size_t>(c)] += z(i, c);
  return sums;
}

// (z_i - centre) / scale, row-major.
std::vector<double> normalised(MatrixView<const double> z, const std::vector<double>& centre,
                               double scale) {
  std::vector<double> out(static_cast<std::size_t>(z.rows * z.cols));
  for (std::int64_t i = 0; i < z.rows; ++i)
    for (std::int64_t c = 0; c < z.cols; ++c)
      out[static_cast<std::size_t>(i * z.cols + c)] =
          (z(i, c) - centre[static_cast<std::size_t>(c)]) / scale;
  return out;
}

// The largest |z_i - centre|.
double radius(MatrixView<const double> z, const std::vector<double>& centre) {
  double r = 0;
  for (std::int64_t i = 0; i < z.rows; ++i) {
    double s = 0;
    for (std::int64_t c = 0; c < z.cols; ++c)
      s += (z(i, c) - centre[static_cast<std::size_t>(c)]) *
           (z(i, c) - centre[static_cast<std::size_t>(c)]);
    r = std::max(r, s);
  }
  return std::sqrt(r);
}

// The problem's fixed parts, and one run of the outer loop from an initial linearisation.
class Gromov {
 public:
  Gromov(MatrixView<const double> x, MatrixView<const double> y, std::span<const double> a,
         std::span<const double> b, double epsilon, const GromovOptions& o,
         MatrixView<const double> fx, MatrixView<const double> fy)
      : px_(x, a), py_(y, b), eps_(epsilon), o_(o), fx_(fx), fy_(fy) {
    fused_ = fx.rows != 0;
    w_ = fused_ ? o.alpha : 1.0;
    const Moments mx(px_, px_.w), my(py_, py_.w);
    alpha_.resize(static_cast<std::size_t>(px_.n));
    beta_.resize(static_cast<std::size_t>(py_.n));
    for (std::int64_t i = 0; i < px_.n; ++i)
      alpha_[static_cast<std::size_t>(i)] = mx.quartic(px_, i);
    for (std::int64_t j = 0; j < py_.n; ++j)
      beta_[static_cast<std::size_t>(j)] = my.quartic(py_, j);
    df_ = fused_ ? fx.cols : 0;
    // Columns the plan is applied to: [Omega | X | beta | 1 | features_y | |features_y|^2].
    vcols_ = 2 * py_.e + 2 + df_ + (fused_ ? 1 : 0);
    v_.assign(static_cast<std::size_t>(py_.n * vcols_), 0.0);
    for (std::int64_t j = 0; j < py_.n; ++j) {
      double* r = &v_[static_cast<std::size_t>(j * vcols_)];
      std::copy_n(&py_.dual[static_cast<std::size_t>(j * py_.e)], py_.e, r);
      std::copy_n(&py_.lift[static_cast<std::size_t>(j * py_.e)], py_.e, r + py_.e);
      r[2 * py_.e] = beta_[static_cast<std::size_t>(j)];
      r[2 * py_.e + 1] = 1;
      if (fused_) {
        double s = 0;
        for (std::int64_t k = 0; k < df_; ++k)
          r[2 * py_.e + 2 + k] = fy(j, k), s += fy(j, k) * fy(j, k);
        r[2 * py_.e + 2 + df_] = s;
      }
    }
    const std::int64_t e = df_ + px_.e;
    const double sf = std::sqrt(1 - w_), sg = std::sqrt(2 * w_);
    u_.resize(static_cast<std::size_t>(px_.n * e));
    for (std::int64_t i = 0; i < px_.n; ++i) {
      double* row = &u_[static_cast<std::size_t>(i * e)];
      for (std::int64_t c = 0; c < df_; ++c) row[c] = sf * fx(i, c);
      for (std::int64_t c = 0; c < px_.e; ++c)
        row[df_ + c] = sg * px_.lift[static_cast<std::size_t>(i * px_.e + c)];
    }
    if (o.dtype == InnerDtype::Float32) {
      // Uniform weights stay implicit: 1/n rounded to float32 would leave the two masses
      // unequal by about 1e-8, a floor under the float64 finish's marginal error.
      u32_.assign(u_.begin(), u_.end());
      if (!px_.uniform) w32x_.assign(px_.w.begin(), px_.w.end());
      if (!py_.uniform) w32y_.assign(py_.w.begin(), py_.w.end());
    }
  }

  // K of the product plan a b^T: (Psi^T a)(Omega^T b)^T.
  Matrix product_start() const {
    const Matrix pa = inner(px_.dual.data(), px_.e, px_.e, px_.w.data(), 1, 1, px_.n);
    const Matrix qb = inner(py_.dual.data(), py_.e, py_.e, py_.w.data(), 1, 1, py_.n);
    return outer(pa, qb);
  }
  // K of a given dense plan.
  Matrix plan_start(MatrixView<const double> t) const {
    Matrix tw(static_cast<std::size_t>(px_.n * py_.e), 0.0);  // T Omega
    for (std::int64_t i = 0; i < px_.n; ++i)
      for (std::int64_t j = 0; j < py_.n; ++j)
        for (std::int64_t k = 0; k < py_.e; ++k)
          tw[static_cast<std::size_t>(i * py_.e + k)] +=
              t(i, j) * py_.dual[static_cast<std::size_t>(j * py_.e + k)];
    return inner(px_.dual.data(), px_.e, px_.e, tw.data(), py_.e, py_.e, px_.n);
  }
  // K of the monotone coupling of the clouds projected on random directions.
  Matrix random_start(std::int64_t draw) const {
    // Two streams per draw, derived from the seed in unsigned arithmetic (any seed is valid).
    const auto key =
        static_cast<std::uint64_t>(o_.seed) * 7919u + 2u * static_cast<std::uint64_t>(draw);
    const auto tx = random_directions<double>(px_.d, 1, static_cast<std::int64_t>(key));
    const auto ty = random_directions<double>(py_.d, 1, static_cast<std::int64_t>(key + 1));
    auto line = [](const Lifted& p, const std::vector<double>& theta) {
      detail::SortedLine s(static_cast<std::size_t>(p.n));
      for (std::int64_t i = 0; i < p.n; ++i) {
        double v = 0;
        for (std::int64_t k = 0; k < p.d; ++k) v += p.z(i, k) * theta[static_cast<std::size_t>(k)];
        s[static_cast<std::size_t>(i)] = {v, i};
      }
      std::sort(s.begin(), s.end());
      return s;
    };
    const auto sx = line(px_, tx), sy = line(py_, ty);
    Matrix k(static_cast<std::size_t>(px_.e * py_.e), 0.0);
    detail::monotone_coupling(
        sx, sy, [&](std::int64_t i) { return px_.w[static_cast<std::size_t>(i)]; },
        [&](std::int64_t j) { return py_.w[static_cast<std::size_t>(j)]; },
        [&](std::int64_t i, std::int64_t j, double mass) {
          const double* u =
              &px_.dual[static_cast<std::size_t>(sx[static_cast<std::size_t>(i)].second * px_.e)];
          const double* v =
              &py_.dual[static_cast<std::size_t>(sy[static_cast<std::size_t>(j)].second * py_.e)];
          for (std::int64_t r = 0; r < px_.e; ++r)
            for (std::int64_t c = 0; c < py_.e; ++c)
              k[static_cast<std::size_t>(r * py_.e + c)] += mass * u[r] * v[c];
        });
    return k;
  }

  struct Run {
    InnerPlan plan;
    std::vector<double> column_terms;  // |v_j|^2 of the plan's solve
    Matrix applied;                    // P V (n x vcols)
    double loss = 0, gw = 0, feature = 0;
    int iterations = 0, inner_iterations = 0;
    bool converged = false;
  };

  Run run(Matrix k, int index, int runs) const {
    Run r;
    for (int it = 0; it < o_.max_iter; ++it) {
      r.plan = solve(k, it > 0 ? &r.plan : nullptr, r.column_terms);
      r.inner_iterations += r.plan.report().iterations;
      ++r.iterations;
      r.applied.assign(static_cast<std::size_t>(px_.n * vcols_), 0.0);
      r.plan.apply({v_.data(), py_.n, vcols_}, {r.applied.data(), px_.n, vcols_});
      Matrix next = inner(px_.dual.data(), px_.e, px_.e, r.applied.data(), py_.e, vcols_, px_.n);
      evaluate(next, r);
      const double change = frobenius(minus(next, k)) / std::max(frobenius(next), 1e-300);
      k = std::move(next);
      ProgressInfo info{"gromov", static_cast<std::int64_t>(index) * o_.max_iter + it + 1,
                        static_cast<std::int64_t>(runs) * o_.max_iter, eps_, change};
      report_progress(o_.progress, info);
      if (change <= o_.tol) {
        r.converged = r.plan.converged();
        break;
      }
    }
    return r;
  }

  // grad_x, grad_y (and the features') of the loss at the run's plan held fixed.
  void gradients(const Run& r, GromovResult& out) const {
    const std::int64_t n = px_.n, m = py_.n, ex = px_.e, ey = py_.e;
    // T^T applied to [Phi | Psi | 1 | features_x].
    const std::int64_t ucols = 2 * ex + 1 + df_;
    Matrix u(static_cast<std::size_t>(n * ucols), 0.0), tu(static_cast<std::size_t>(m * ucols));
    for (std::int64_t i = 0; i < n; ++i) {
      double* row = &u[static_cast<std::size_t>(i * ucols)];
      std::copy_n(&px_.lift[static_cast<std::size_t>(i * ex)], ex, row);
      std::copy_n(&px_.dual[static_cast<std::size_t>(i * ex)], ex, row + ex);
      row[2 * ex] = 1;
      for (std::int64_t k = 0; k < df_; ++k) row[2 * ex + 1 + k] = fx_(i, k);
    }
    r.plan.apply_transpose({u.data(), n, ucols}, {tu.data(), m, ucols});
    std::vector<double> rows(static_cast<std::size_t>(n)), cols(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < n; ++i)
      rows[static_cast<std::size_t>(i)] =
          r.applied[static_cast<std::size_t>(i * vcols_ + 2 * ey + 1)];
    for (std::int64_t j = 0; j < m; ++j)
      cols[static_cast<std::size_t>(j)] = tu[static_cast<std::size_t>(j * ucols + 2 * ex)];
    // T Chi and T Omega (rows of P V), T^T Phi and T^T Psi (rows of P^T U).
    out.grad_x = side_gradient(px_, rows, r.applied, vcols_, ey);
    out.grad_y = side_gradient(py_, cols, tu, ucols, ex);
    if (fused_) {
      const double s = 2 * (1 - w_);
      out.grad_features_x.resize(static_cast<std::size_t>(n * df_));
      out.grad_features_y.resize(static_cast<std::size_t>(m * df_));
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t k = 0; k < df_; ++k)
          out.grad_features_x[static_cast<std::size_t>(i * df_ + k)] =
              s * (rows[static_cast<std::size_t>(i)] * fx_(i, k) -
                   r.applied[static_cast<std::size_t>(i * vcols_ + 2 * ey + 2 + k)]);
      for (std::int64_t j = 0; j < m; ++j)
        for (std::int64_t k = 0; k < df_; ++k)
          out.grad_features_y[static_cast<std::size_t>(j * df_ + k)] =
              s * (cols[static_cast<std::size_t>(j)] * fy_(j, k) -
                   tu[static_cast<std::size_t>(j * ucols + 2 * ex + 1 + k)]);
    }
  }

  std::int64_t df() const { return df_; }

 private:
  static Matrix outer(const Matrix& p, const Matrix& q) {
    Matrix k(p.size() * q.size());
    for (std::size_t i = 0; i < p.size(); ++i)
      for (std::size_t j = 0; j < q.size(); ++j) k[i * q.size() + j] = p[i] * q[j];
    return k;
  }
  static Matrix minus(const Matrix& p, const Matrix& q) {
    Matrix d(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) d[i] = p[i] - q[i];
    return d;
  }

  // The plan of the linearised cost at K: sqeuclidean between u_i = [sqrt(1 - w) fx_i,
  // sqrt(2 w) phi_i] and v_j = [sqrt(1 - w) fy_j, sqrt(2 w) K chi_j], which differs from
  // (1 - w) |fx_i - fy_j|^2 + 2 w M_ij by terms of i alone and j alone: the same plan. Warm
  // started from `warm`'s potentials when given; `column_terms` holds the |v_j|^2 of the
  // previous solve and receives this one's.
  InnerPlan solve(const Matrix& k, const InnerPlan* warm, std::vector<double>& column_terms) const {
    const std::int64_t m = py_.n, ex = px_.e, ey = py_.e, e = df_ + ex;
    const double sf = std::sqrt(1 - w_), sg = std::sqrt(2 * w_);
    Matrix v(static_cast<std::size_t>(m * e));
    std::vector<double> terms(static_cast<std::size_t>(m), 0.0);  // |v_j|^2
    for (std::int64_t j = 0; j < m; ++j) {
      double* row = &v[static_cast<std::size_t>(j * e)];
      for (std::int64_t c = 0; c < df_; ++c) row[c] = sf * fy_(j, c);
      const double* chi = &py_.lift[static_cast<std::size_t>(j * ey)];
      for (std::int64_t r = 0; r < ex; ++r) {
        double s = 0;
        for (std::int64_t c = 0; c < ey; ++c) s += k[static_cast<std::size_t>(r * ey + c)] * chi[c];
        row[df_ + r] = sg * s;
      }
      for (std::int64_t c = 0; c < e; ++c) terms[static_cast<std::size_t>(j)] += row[c] * row[c];
    }
    // g moved by the change of its column terms |v_j|^2 (which the plan does not see): what is
    // left to iterate is the change of <u_i, v_j>.
    std::vector<double> shift;
    if (warm != nullptr)
      for (std::size_t j = 0; j < terms.size(); ++j) shift.push_back(terms[j] - column_terms[j]);
    column_terms = std::move(terms);
    if (o_.dtype == InnerDtype::Float32)
      return inner_solve<float>(u32_, {v.begin(), v.end()}, w32x_, w32y_, warm, shift);
    return inner_solve<double>(u_, v, px_.w, py_.w, warm, shift);
  }

  // One inner Sinkhorn in arithmetic T between rows u (n, e) and columns v (m, e), warm
  // started from `warm` with `shift` added to its column potential.
  template <class T>
  InnerPlan inner_solve(const std::vector<T>& u, const std::vector<T>& v, std::span<const T> a,
                        std::span<const T> b, const InnerPlan* warm,
                        const std::vector<double>& shift) const {
    const std::int64_t e = df_ + px_.e;
    OtProblem<T> problem;
    problem.geometry =
        PointCloud<T>({u.data(), px_.n, e}, {v.data(), py_.n, e}, Cost::sqeuclidean());
    problem.a = a;
    problem.b = b;
    problem.epsilon = eps_;
    SinkhornOptions so = detail::inner_options(o_.marginal_tol, o_.inner_max_iter, o_.num_threads,
                                               warm ? warm->get<T>() : nullptr, o_.backend);
    for (std::size_t j = 0; j < so.init_g.size(); ++j) so.init_g[j] += shift[j];
    return InnerPlan(sinkhorn(problem, so));
  }

  // The objective at the plan whose products are r.applied and whose K is `k`.
  void evaluate(const Matrix& k, Run& r) const {
    const std::int64_t n = px_.n, ey = py_.e;
    const Matrix k2 = inner(px_.lift.data(), px_.e, px_.e, r.applied.data() + ey, ey, vcols_, n);
    double cross = 0, marg = 0, feat = 0;
    for (std::size_t i = 0; i < k.size(); ++i) cross += k[i] * k2[i];
    for (std::int64_t i = 0; i < n; ++i) {
      const double* row = &r.applied[static_cast<std::size_t>(i * vcols_)];
      marg += alpha_[static_cast<std::size_t>(i)] * row[2 * ey + 1] + row[2 * ey];
      if (fused_) {
        double fx2 = 0, dot = 0;
        for (std::int64_t c = 0; c < df_; ++c)
          fx2 += fx_(i, c) * fx_(i, c), dot += fx_(i, c) * row[2 * ey + 2 + c];
        feat += fx2 * row[2 * ey + 1] + row[2 * ey + 2 + df_] - 2 * dot;
      }
    }
    r.gw = marg - 2 * cross;
    r.feature = feat;
    r.loss = fused_ ? w_ * r.gw + (1 - w_) * r.feature : r.gw;
  }

  // d loss / d z of one side: w (4 sum_k C_ik (r_i c_k + c_i r_k)(z_i - z_k)
  // - 8 sum_k H_ik (z_i - z_k)), with H_ik = (T lift_other)_i . (T dual_other)_k read from
  // `prod` (rows of the plan applied to [dual_other | lift_other | ...]).
  std::vector<double> side_gradient(const Lifted& p, const std::vector<double>& marg,
                                    const Matrix& prod, std::int64_t stride,
                                    std::int64_t e_other) const {
    const std::int64_t n = p.n, d = p.d;
    const Moments mw(p, p.w), mr(p, marg);
    // Q1 = sum_k q_k, Q2 = sum_k q_k z_k^T, q_k = (T dual_other)_k.
    std::vector<double> q1(static_cast<std::size_t>(e_other), 0.0),
        q2(static_cast<std::size_t>(e_other * d), 0.0);
    for (std::int64_t k = 0; k < n; ++k) {
      const double* q = &prod[static_cast<std::size_t>(k * stride)];
      for (std::int64_t c = 0; c < e_other; ++c) {
        q1[static_cast<std::size_t>(c)] += q[c];
        for (std::int64_t l = 0; l < d; ++l)
          q2[static_cast<std::size_t>(c * d + l)] += q[c] * p.z(k, l);
      }
    }
    std::vector<double> g(static_cast<std::size_t>(n * d), 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
      double* gi = &g[static_cast<std::size_t>(i * d)];
      mw.cubic(p, i, 4 * w_ * marg[static_cast<std::size_t>(i)], gi);
      mr.cubic(p, i, 4 * w_ * p.w[static_cast<std::size_t>(i)], gi);
      const double* pl = &prod[static_cast<std::size_t>(i * stride + e_other)];  // T lift_other
      double pq = 0;
      for (std::int64_t c = 0; c < e_other; ++c) pq += pl[c] * q1[static_cast<std::size_t>(c)];
      for (std::int64_t l = 0; l < d; ++l) {
        double pq2 = 0;
        for (std::int64_t c = 0; c < e_other; ++c)
          pq2 += pl[c] * q2[static_cast<std::size_t>(c * d + l)];
        gi[l] -= 8 * w_ * (p.z(i, l) * pq - pq2);
      }
    }
    return g;
  }

  Lifted px_, py_;
  double eps_;
  const GromovOptions& o_;
  MatrixView<const double> fx_, fy_;
  bool fused_ = false;
  double w_ = 1;
  std::int64_t df_ = 0, vcols_ = 0;
  std::vector<double> alpha_, beta_;
  Matrix v_;  // the columns the plan is applied to
  Matrix u_;  // the row features of every inner solve: [sqrt(1 - w) fx_i, sqrt(2 w) phi_i]
  std::vector<float> u32_, w32x_, w32y_;  // u_ and the weights in float32 (dtype float32)
};

}  // namespace

GromovResult gromov_wasserstein(MatrixView<const double> x, MatrixView<const double> y,
                                std::span<const double> a, std::span<const double> b,
                                double epsilon, const GromovOptions& options,
                                MatrixView<const double> features_x,
                                MatrixView<const double> features_y, MatrixView<const double> init,
                                bool gradients, bool plan) {
  check(x, y, a, b, epsilon, options, features_x, features_y, init);
  // GW sees only distances: each cloud is centred and both are scaled by one length s (the
  // features by s^2, about their common centre), so that the lifted features are O(1) and the
  // quartic terms do not cancel at large coordinates. Values scale back by s^4.
  auto mean = [](MatrixView<const double> z) {
    auto m = column_sums(z);
    for (double& v : m) v /= static_cast<double>(z.rows);
    return m;
  };
  const auto cx = mean(x), cy = mean(y);
  double scale = std::max(radius(x, cx), radius(y, cy));
  if (!(scale > 0)) scale = 1;  // every point at its cloud's centre: GW is 0 at any scale
  const double s2 = scale * scale, s4 = s2 * s2;
  std::vector<double> fxs, fys;
  if (features_x.rows != 0) {
    auto cf = column_sums(features_x);
    const auto sy = column_sums(features_y);
    for (std::size_t c = 0; c < cf.size(); ++c)
      cf[c] = (cf[c] + sy[c]) / static_cast<double>(features_x.rows + features_y.rows);
    fxs = normalised(features_x, cf, s2);
    fys = normalised(features_y, cf, s2);
  }
  const std::vector<double> xs = normalised(x, cx, scale), ys = normalised(y, cy, scale);
  const Gromov problem({xs.data(), x.rows, x.cols}, {ys.data(), y.rows, y.cols}, a, b, epsilon / s4,
                       options, {fxs.data(), features_x.rows, features_x.cols},
                       {fys.data(), features_y.rows, features_y.cols});
  GromovResult out;
  out.n = x.rows, out.m = y.rows, out.dx = x.cols, out.dy = y.cols, out.df = problem.df();
  out.epsilon = epsilon;
  Gromov::Run best;
  for (int s = 0; s < options.n_init; ++s) {
    Matrix k = s > 0            ? problem.random_start(s)
               : init.rows != 0 ? problem.plan_start(init)
                                : problem.product_start();
    Gromov::Run r = problem.run(std::move(k), s, options.n_init);
    out.losses.push_back(r.loss);
    out.inner_iterations += r.inner_iterations;
    if (s == 0 || r.loss < best.loss) {
      best = std::move(r);
      out.best_init = s;
    }
  }
  for (double& l : out.losses) l *= s4;
  out.loss = s4 * best.loss, out.gw_loss = s4 * best.gw, out.feature_loss = s4 * best.feature;
  out.iterations = best.iterations;
  out.converged = best.converged;
  out.marginal_error = best.plan.report().marginal_error;
  out.backend = best.plan.report().backend;
  out.working_dtype = best.plan.report().working_dtype;
  require(std::isfinite(out.loss), "epsilon",
          "the solve overflowed (loss " + std::to_string(out.loss) + "): raise epsilon");
  if (gradients) {
    problem.gradients(best, out);
    for (auto* g : {&out.grad_x, &out.grad_y})
      for (double& v : *g) v *= s4 / scale;
    for (auto* g : {&out.grad_features_x, &out.grad_features_y})
      for (double& v : *g) v *= s2;
  }
  if (plan) out.plan = best.plan.dense_plan();
  return out;
}

}  // namespace birkhoff::transport
