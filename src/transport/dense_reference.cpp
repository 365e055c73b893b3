// Dense float64 twin of the streaming solver, written independently of it (no shifted
// potentials, no kernels): every update is -eps * logsumexp_j(log w_j + (h_j - C_ij) / eps).
#include <algorithm>
#include <cmath>
#include <limits>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/reference.hpp"

namespace birkhoff::transport::reference {

namespace {

// C_ij between the rows of two feature matrices.
std::vector<double> feature_costs(MatrixView<const double> u, MatrixView<const double> v,
                                  const Cost& cost) {
  std::vector<double> c(static_cast<std::size_t>(u.rows * v.rows));
  for (std::int64_t i = 0; i < u.rows; ++i)
    for (std::int64_t j = 0; j < v.rows; ++j)
      c[static_cast<std::size_t>(i * v.rows + j)] = cost->feature_cost(u.row(i), v.row(j), u.cols);
  return c;
}

// The cost's features of the rows of p (the rows themselves for the identity map).
std::vector<double> features_of(MatrixView<const double> p, const Cost& cost, const char* name) {
  std::vector<double> out(static_cast<std::size_t>(p.rows * p.cols));
  for (std::int64_t i = 0; i < p.rows; ++i) {
    std::copy_n(p.row(i), p.cols, out.begin() + i * p.cols);
    cost->feature({out.data() + i * p.cols, static_cast<std::size_t>(p.cols)}, name, i);
  }
  return out;
}

}  // namespace

std::vector<double> cost_matrix(MatrixView<const double> x, MatrixView<const double> y,
                                const Cost& cost) {
  const auto u = features_of(x, cost, "x"), v = features_of(y, cost, "y");
  return feature_costs({u.data(), x.rows, x.cols}, {v.data(), y.rows, y.cols}, cost);
}

namespace {

// Adds weight * table[l_i, l_j] to a cost matrix (the label-augmented cost).
void add_labels(std::vector<double>& c, std::span<const std::int32_t> lr,
                std::span<const std::int32_t> lc, std::span<const double> table, std::int64_t v) {
  for (std::size_t i = 0; i < lr.size(); ++i)
    for (std::size_t j = 0; j < lc.size(); ++j) c[i * lc.size() + j] += table[lr[i] * v + lc[j]];
}

}  // namespace

std::vector<double> cost_matrix(const PointCloud<double>& geometry) {
  auto c = feature_costs(geometry.x(), geometry.y(), geometry.cost());
  if (geometry.num_labels() > 0)
    add_labels(c, geometry.x_labels(), geometry.y_labels(), geometry.label_cost(),
               geometry.num_labels());
  return c;
}

namespace {

struct Side {
  std::vector<double> w, logw;
  double mass = 0;
  std::optional<double> reach;
};

Side make_side(std::span<const double> w, std::int64_t n, std::optional<double> reach) {
  Side s;
  s.reach = reach;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = w.empty() ? 1.0 / static_cast<double>(n) : w[static_cast<std::size_t>(i)];
    s.w.push_back(v);
    s.logw.push_back(v > 0 ? std::log(v) : -std::numeric_limits<double>::infinity());
    s.mass += v;
  }
  return s;
}

// out_i = lambda * (-eps * LSE_j(logw_j + (h_j - C_ij) / eps)); C given row-major (rows x cols)
// or transposed.
std::vector<double> softmin(const std::vector<double>& c, std::int64_t rows, std::int64_t cols,
                            bool transposed, const Side& col, const std::vector<double>& h,
                            double eps, double lambda) {
  std::vector<double> out(static_cast<std::size_t>(rows));
  std::vector<double> z(static_cast<std::size_t>(cols));
  for (std::int64_t i = 0; i < rows; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < cols; ++j) {
      const double cij = transposed ? c[static_cast<std::size_t>(j * rows + i)]
                                    : c[static_cast<std::size_t>(i * cols + j)];
      z[static_cast<std::size_t>(j)] =
          col.logw[static_cast<std::size_t>(j)] + (h[static_cast<std::size_t>(j)] - cij) / eps;
      mx = std::max(mx, z[static_cast<std::size_t>(j)]);
    }
    double s = 0;
    for (double v : z) s += std::exp(v - mx);
    out[static_cast<std::size_t>(i)] = -lambda * eps * (mx + std::log(s));
  }
  return out;
}

double lambda_of(const Side& s, double eps) {
  return s.reach ? 1.0 / (1.0 + eps / (*s.reach * *s.reach)) : 1.0;
}

double dual(const std::vector<double>& f, const std::vector<double>& g, const Side& a,
            const Side& b, const std::vector<double>& c, double eps) {
  // Exact dual objective: sum of the marginal terms minus eps <a x b, exp((f+g-C)/eps) - 1>.
  double value = 0;
  auto term = [](const std::vector<double>& h, const Side& s) {
    double v = 0;
    for (std::size_t i = 0; i < h.size(); ++i) {
      if (s.w[i] == 0) continue;
      if (s.reach) {
        const double rho = *s.reach * *s.reach;
        v += rho * s.w[i] * (1 - std::exp(-h[i] / rho));
      } else {
        v += s.w[i] * h[i];
      }
    }
    return v;
  };
  value = term(f, a) + term(g, b);
  double mass = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    for (std::size_t j = 0; j < g.size(); ++j)
      mass += a.w[i] * b.w[j] * std::exp((f[i] + g[j] - c[i * g.size() + j]) / eps);
  return value - eps * (mass - a.mass * b.mass);
}

}  // namespace

DenseResult sinkhorn_dense(const OtProblem<double>& problem, const SinkhornOptions& options,
                           bool debias) {
  validate(problem, options);
  require(!std::holds_alternative<Partial>(problem.marginals), "mass",
          "the dense reference solves balanced and unbalanced OT only");
  const auto& geom = problem.geometry;
  const std::int64_t n = geom.n(), m = geom.m();
  const auto ra = reach_a(problem.marginals), rb = reach_b(problem.marginals);
  const Side a = make_side(problem.a, n, ra);
  const Side b = make_side(problem.b, m, rb);
  const Side aa = make_side(problem.a, n, ra);
  const Side bb = make_side(problem.b, m, rb);
  const auto cxy = cost_matrix(geom);
  auto cxx = feature_costs(geom.x(), geom.x(), geom.cost());
  auto cyy = feature_costs(geom.y(), geom.y(), geom.cost());
  if (geom.num_labels() > 0) {
    add_labels(cxx, geom.x_labels(), geom.x_labels(), geom.label_cost(), geom.num_labels());
    add_labels(cyy, geom.y_labels(), geom.y_labels(), geom.label_cost(), geom.num_labels());
  }
  const double p = geom.cost()->exponent();
  const double diameter = options.diameter.value_or(std::max(
      geom.diameter(), p == 2 ? std::sqrt(problem.epsilon) : std::pow(problem.epsilon, 1.0 / p)));
  const auto eps_list = epsilon_schedule(options, problem.epsilon, diameter, p);
  std::vector<double> f(static_cast<std::size_t>(n), 0.0), g(static_cast<std::size_t>(m), 0.0);
  std::vector<double> faa = f, gbb = g;
  const bool alternating = options.update == Update::Alternating;
  auto avg = [](std::vector<double>& u, const std::vector<double>& v, double w) {
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = (1 - w) * u[i] + w * v[i];
  };
  auto sweep = [&](double eps, double w) {
    const double la = lambda_of(a, eps), lb = lambda_of(b, eps);
    const auto ft = softmin(cxy, n, m, false, b, g, eps, la);
    if (alternating) avg(f, ft, w);
    const auto gt = softmin(cxy, m, n, true, a, f, eps, lb);
    if (!alternating) avg(f, ft, w);
    avg(g, gt, w);
    if (debias) {
      const double ws = alternating ? 0.5 : w;
      const auto fa = softmin(cxx, n, n, false, aa, faa, eps, la);
      const auto gb = softmin(cyy, m, m, false, bb, gbb, eps, lb);
      avg(faa, fa, ws);
      avg(gbb, gb, ws);
    }
  };
  if (!alternating) sweep(eps_list.front(), 1.0);
  for (double eps : eps_list) sweep(eps, alternating ? 1.0 : 0.5);
  if (!alternating && options.last_extrapolation) sweep(eps_list.back(), 1.0);
  DenseResult r;
  r.epsilon = eps_list.back();
  r.f = f;
  r.g = g;
  r.loss = dual(f, g, a, b, cxy, r.epsilon);
  if (debias) {
    r.f_aa = faa;
    r.g_bb = gbb;
    r.loss -=
        0.5 * dual(faa, faa, aa, aa, cxx, r.epsilon) + 0.5 * dual(gbb, gbb, bb, bb, cyy, r.epsilon);
  }
  return r;
}

}  // namespace birkhoff::transport::reference
