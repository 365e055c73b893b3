#include "birkhoff/graph/gromov.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "birkhoff/kernels/gemm.hpp"
#include "birkhoff/kernels/lse.hpp"
#include "birkhoff/kernels/sparse.hpp"
#include "gromov_inner.hpp"

namespace birkhoff::graph {
namespace {

using detail::Inner;

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Column sums add one partial sum per fixed block of rows, in block order: the same bits for
// every thread count.
constexpr std::int64_t kRowBlock = 64;
// Rows of one dense product block (shortest paths).
constexpr std::int64_t kGemmRows = 256;

std::string shape(std::int64_t n, std::int64_t m) {
  std::string out = "(";
  out += std::to_string(n);
  out += ", ";
  out += std::to_string(m);
  return out + ")";
}

void check_graph(const AttributedGraph& g, const char* name, Structure s) {
  require(g.num_nodes > 0, name, "has no nodes");
  require(!g.directed, name,
          "is directed; Gromov-Wasserstein here needs symmetric inner costs (an undirected "
          "graph)");
  if (s == Structure::ShortestPath)
    for (double w : g.weights)
      require(std::isfinite(w) && w > 0, name,
              "shortest paths read the edge weights as lengths, which must be positive; got " +
                  std::to_string(w));
}

std::vector<double> weights_or_uniform(std::span<const double> w, std::int64_t n, const char* name,
                                       const char* graph, double* mass) {
  std::vector<double> out;
  if (w.empty()) {
    out.assign(static_cast<std::size_t>(n), 1.0 / static_cast<double>(n));
  } else {
    require(static_cast<std::int64_t>(w.size()) == n, name,
            "has " + std::to_string(w.size()) + " entries but " + graph + " has " +
                std::to_string(n) + " nodes");
    out.assign(w.begin(), w.end());
  }
  double total = 0;
  for (double v : out) {
    require(std::isfinite(v) && v >= 0, name,
            "weights must be finite and non-negative, got " + std::to_string(v));
    total += v;
  }
  require(total > 0, name, "the weights sum to zero");
  *mass = total;
  return out;
}

void check(const AttributedGraph& g1, const AttributedGraph& g2, double epsilon,
           const GraphGromovOptions& o, MatrixView<const double> init) {
  check_graph(g1, "graph1", o.structure);
  check_graph(g2, "graph2", o.structure);
  const std::int64_t n = g1.num_nodes, m = g2.num_nodes;
  check_plan_size(n, m);
  if (o.structure == Structure::ShortestPath)
    require(n <= 20000 && m <= 20000, n > 20000 ? "graph1" : "graph2",
            "shortest paths are stored dense (n^2 entries); at most 20000 nodes, got " +
                std::to_string(std::max(n, m)) + "; use structure=adjacency");
  const bool f1 = g1.dim() > 0, f2 = g2.dim() > 0;
  if (f1 && f2)
    require(g1.dim() == g2.dim(), "x2",
            "dimension mismatch: x1 has " + std::to_string(g1.dim()) + " columns, x2 " +
                std::to_string(g2.dim()));
  require(std::isfinite(epsilon) && epsilon > 0, "epsilon",
          "must be positive and finite, got " + std::to_string(epsilon));
  if (init.rows != 0 || init.cols != 0) {
    require(init.rows == n && init.cols == m, "init",
            "must have shape (n, m) = " + shape(n, m) + ", got " + shape(init.rows, init.cols));
    double total = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        require(std::isfinite(init(i, j)) && init(i, j) >= 0, "init",
                "a plan has finite, non-negative entries");
        total += init(i, j);
      }
    require(total > 0, "init", "the plan is zero");
  }
  require(std::isfinite(o.alpha) && o.alpha >= 0 && o.alpha <= 1, "alpha", "must lie in [0, 1]");
  require(o.max_iter >= 1, "max_iter", "must be >= 1");
  require(std::isfinite(o.tol) && o.tol >= 0, "tol", "must be >= 0");
  require(std::isfinite(o.marginal_tol) && o.marginal_tol >= 0, "marginal_tol", "must be >= 0");
  require(o.inner_max_iter >= 1, "inner_max_iter", "must be >= 1");
  require(o.num_threads >= 0, "num_threads", "must be >= 0");
}

class GraphGromov {
 public:
  GraphGromov(const AttributedGraph& g1, const AttributedGraph& g2, std::span<const double> a,
              std::span<const double> b, double epsilon, const GraphGromovOptions& o)
      : n_(g1.num_nodes),
        m_(g2.num_nodes),
        eps_(epsilon),
        o_(o),
        threads_(resolve_threads(o.num_threads)),
        c1_(g1, o.structure, threads_),
        c2_(g2, o.structure, threads_) {
    a_ = weights_or_uniform(a, n_, "a", "graph1", &mass_);
    double mass_b = 0;
    b_ = weights_or_uniform(b, m_, "b", "graph2", &mass_b);
    require(std::abs(mass_ - mass_b) <= 1e-5 * std::max(mass_, mass_b), "b",
            "Gromov-Wasserstein needs equal masses; sum(a) = " + std::to_string(mass_) +
                ", sum(b) = " + std::to_string(mass_b));
    fused_ = g1.dim() > 0 && g2.dim() > 0;
    w_ = fused_ ? o.alpha : 1.0;
    if (fused_) {
      x1_ = features(g1.x, &sq1_);
      x2_ = features(g2.x, &sq2_);
    }
    row_term_ = c1_.squared_times(a_);
    col_term_ = c2_.squared_times(b_);
    const auto nm = static_cast<std::size_t>(n_ * m_);
    cost_.resize(nm);
    kernel_.resize(nm);
    plan_.resize(nm);
    f_.assign(static_cast<std::size_t>(n_), 0.0);
    g_.assign(static_cast<std::size_t>(m_), 0.0);
    for (std::int64_t i = 0; i < n_; ++i)
      if (a_[static_cast<std::size_t>(i)] == 0) f_[static_cast<std::size_t>(i)] = -kInf;
    for (std::int64_t j = 0; j < m_; ++j)
      if (b_[static_cast<std::size_t>(j)] == 0) g_[static_cast<std::size_t>(j)] = -kInf;
  }

  GraphGromovResult solve(MatrixView<const double> init) {
    if (init.rows != 0) {
      for (std::int64_t i = 0; i < n_; ++i)
        std::copy(init.row(i), init.row(i) + m_, &plan_[static_cast<std::size_t>(i * m_)]);
    } else {
      for (std::int64_t i = 0; i < n_; ++i)
        for (std::int64_t j = 0; j < m_; ++j)
          plan_[static_cast<std::size_t>(i * m_ + j)] =
              a_[static_cast<std::size_t>(i)] * b_[static_cast<std::size_t>(j)] / mass_;
    }
    GraphGromovResult out;
    out.n = n_, out.m = m_, out.epsilon = eps_;
    linearise(&out);
    bool inner_converged = false;
    for (int k = 1; k <= o_.max_iter; ++k) {
      const auto [iters, converged] = sinkhorn();
      out.inner_iterations += iters;
      inner_converged = converged;
      const double change = write_plan(&out);
      out.iterations = k;
      linearise(&out);
      report_progress(o_.progress, ProgressInfo{"gromov", k, o_.max_iter, eps_, change});
      if (change <= o_.tol) {
        out.converged = inner_converged;
        break;
      }
    }
    require(std::isfinite(out.loss), "epsilon",
            "the solve did not stay finite at epsilon = " + std::to_string(eps_) +
                "; use a larger epsilon");
    // Below the cost's rounding (epsilon tiny against its entries) no Sinkhorn solve holds the
    // marginals: an error, not a plan.
    require(out.marginal_error <= 0.1, "epsilon",
            "the Sinkhorn solve lost the marginals (relative error " +
                std::to_string(out.marginal_error) + ") at epsilon = " + std::to_string(eps_) +
                ", too small for the size of the costs; use a larger epsilon or rescale the "
                "edge weights and features");
    out.converged = out.converged && out.marginal_error <= 2 * o_.marginal_tol + 1e-12;
    out.plan = std::move(plan_);
    return out;
  }

 private:
  static std::vector<double> features(MatrixView<const float> x, std::vector<double>* sq) {
    std::vector<double> out(static_cast<std::size_t>(x.rows * x.cols));
    sq->assign(static_cast<std::size_t>(x.rows), 0.0);
    for (std::int64_t i = 0; i < x.rows; ++i)
      for (std::int64_t c = 0; c < x.cols; ++c) {
        const double v = x(i, c);
        out[static_cast<std::size_t>(i * x.cols + c)] = v;
        (*sq)[static_cast<std::size_t>(i)] += v * v;
      }
    return out;
  }

  // cost_ = the linearised cost at plan_, w 2 L + (1 - w) F, and the losses at plan_.
  void linearise(GraphGromovResult* out) {
    const std::int64_t n = n_, m = m_;
    if (fused_) {
      const std::int64_t d = static_cast<std::int64_t>(x1_.size()) / n;
      kernels::gemm(false, true, n, m, d, -2.0, x1_.data(), d, x2_.data(), d, 0.0, cost_.data(), m);
    }
    double gw = 0, feat = 0;
    if (c1_.sparse()) {
#pragma omp parallel num_threads(threads_) reduction(+ : gw, feat)
      {
        std::vector<double> z(static_cast<std::size_t>(m)), p(static_cast<std::size_t>(m));
#pragma omp for schedule(dynamic, 16)
        for (std::int64_t i = 0; i < n; ++i) {
          std::fill(z.begin(), z.end(), 0.0);
          for (std::int64_t q = c1_.g.indptr[i]; q < c1_.g.indptr[i + 1]; ++q) {
            const double c = c1_.values[static_cast<std::size_t>(q)];
            const double* t =
                &plan_[static_cast<std::size_t>(c1_.g.indices[static_cast<std::size_t>(q)] * m)];
            for (std::int64_t j = 0; j < m; ++j) z[static_cast<std::size_t>(j)] += c * t[j];
          }
          std::fill(p.begin(), p.end(), 0.0);
          kernels::csr_gather(c2_.g.indptr.data(), c2_.g.indices.data(), c2_.values.data(), m,
                              z.data(), 1.0, p.data());
          finish_row(i, p.data(), &gw, &feat);
        }
      }
    } else {
      std::vector<double> zb(static_cast<std::size_t>(kGemmRows * std::max(n, m)));
      std::vector<double> pb(static_cast<std::size_t>(kGemmRows * m));
      for (std::int64_t i0 = 0; i0 < n; i0 += kGemmRows) {
        const std::int64_t rows = std::min(kGemmRows, n - i0);
        kernels::gemm(false, false, rows, m, n, 1.0, &c1_.dense[static_cast<std::size_t>(i0 * n)],
                      n, plan_.data(), m, 0.0, zb.data(), m);
        kernels::gemm(false, false, rows, m, m, 1.0, zb.data(), m, c2_.dense.data(), m, 0.0,
                      pb.data(), m);
        double gw_b = 0, feat_b = 0;
#pragma omp parallel for num_threads(threads_) reduction(+ : gw_b, feat_b)
        for (std::int64_t r = 0; r < rows; ++r)
          finish_row(i0 + r, &pb[static_cast<std::size_t>(r * m)], &gw_b, &feat_b);
        gw += gw_b, feat += feat_b;
      }
    }
    out->gw_loss = gw;
    out->feature_loss = feat;
    out->loss = fused_ ? w_ * gw + (1 - w_) * feat : gw;
  }

  // Row i of the cost from p = (C1 T C2)_i (and, fused, the -2 x1 x2^T already in cost_);
  // adds row i's terms of GW(T) and F(T).
  void finish_row(std::int64_t i, const double* p, double* gw, double* feat) {
    const std::int64_t m = m_;
    double* cost = &cost_[static_cast<std::size_t>(i * m)];
    const double* t = &plan_[static_cast<std::size_t>(i * m)];
    const double u = row_term_[static_cast<std::size_t>(i)];
    double gw_row = 0, feat_row = 0;
    if (fused_) {
      const double s1 = sq1_[static_cast<std::size_t>(i)];
      for (std::int64_t j = 0; j < m; ++j) {
        const double lin = u + col_term_[static_cast<std::size_t>(j)] - 2 * p[j];
        const double f = std::max(0.0, cost[j] + s1 + sq2_[static_cast<std::size_t>(j)]);
        gw_row += lin * t[j];
        feat_row += f * t[j];
        cost[j] = w_ * 2 * lin + (1 - w_) * f;
      }
    } else {
      for (std::int64_t j = 0; j < m; ++j) {
        const double lin = u + col_term_[static_cast<std::size_t>(j)] - 2 * p[j];
        gw_row += lin * t[j];
        cost[j] = 2 * lin;
      }
    }
    *gw += gw_row;
    *feat += feat_row;
  }

  // log2 of sum_j exp((f_i + g_j - cost_ij) / eps), through `buf` (m).
  double row_log2_sum(std::int64_t i, double fi, double* buf) const {
    const std::int64_t m = m_;
    const double c = kLog2e / eps_;
    const double* cost = &cost_[static_cast<std::size_t>(i * m)];
    double top = -kInf;
    for (std::int64_t j = 0; j < m; ++j) {
      buf[j] = (fi + g_[static_cast<std::size_t>(j)] - cost[j]) * c;
      top = std::max(top, buf[j]);
    }
    if (top == -kInf) return -kInf;
    for (std::int64_t j = 0; j < m; ++j) buf[j] -= top;
    kernels::exp2_nonpositive(buf, buf, m);
    double s = 0;
    for (std::int64_t j = 0; j < m; ++j) s += buf[j];
    return top + std::log2(s);
  }

  // One log-domain Sinkhorn iteration on cost_: the rows, then the columns, made exact
  // whatever the potentials (cold starts, underflowed kernels). Returns the rows' L1 error
  // before their update.
  double log_round() {
    const std::int64_t n = n_, m = m_;
    double err = 0;
#pragma omp parallel num_threads(threads_) reduction(+ : err)
    {
      std::vector<double> buf(static_cast<std::size_t>(m));
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) {
        const double ai = a_[static_cast<std::size_t>(i)];
        if (ai == 0) continue;
        const double l = row_log2_sum(i, f_[static_cast<std::size_t>(i)], buf.data());
        err += std::abs(std::exp2(l) - ai);
        f_[static_cast<std::size_t>(i)] += eps_ * kLn2 * (std::log2(ai) - l);
      }
    }
    const std::int64_t blocks = (n + kRowBlock - 1) / kRowBlock;
    std::vector<double> partial(static_cast<std::size_t>(blocks * m));
    std::vector<double> col(static_cast<std::size_t>(m));
    column_pass(kLog2e / eps_, std::log2(*std::max_element(a_.begin(), a_.end())), blocks, &partial,
                &col);
    return err;
  }

  // kernel_ = exp((f_i + g_j - cost_ij) / eps): the scalings u, v then start at 1.
  void fill_kernel() {
    const std::int64_t n = n_, m = m_;
    const double c = kLog2e / eps_;
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const double fi = f_[static_cast<std::size_t>(i)];
      const double* cost = &cost_[static_cast<std::size_t>(i * m)];
      double* k = &kernel_[static_cast<std::size_t>(i * m)];
      for (std::int64_t j = 0; j < m; ++j)
        k[j] = fi == -kInf ? -kInf
                           : std::min(1000.0, (fi + g_[static_cast<std::size_t>(j)] - cost[j]) * c);
      kernels::exp2_nonpositive(k, k, m);
    }
  }

  // f += eps log u, g += eps log v where the scalings are finite and positive (the others are
  // left to the next log-domain round).
  void absorb(const std::vector<double>& u, const std::vector<double>& v) {
    for (std::size_t i = 0; i < u.size(); ++i)
      if (a_[i] > 0 && u[i] > 0 && std::isfinite(u[i])) f_[i] += eps_ * std::log(u[i]);
    for (std::size_t j = 0; j < v.size(); ++j)
      if (b_[j] > 0 && v[j] > 0 && std::isfinite(v[j])) g_[j] += eps_ * std::log(v[j]);
  }

  // Sinkhorn on cost_ from the current potentials, log-stabilised [schmitzer2019]: one
  // log-domain round, then scaling iterations u = a / K v, v = b / K^T u on the absorbed
  // kernel K (two BLAS matrix-vector products, no exponential), absorbed into f, g and
  // recomputed whenever a scaling leaves [1e-100, 1e100] or a row or column underflows. It
  // stops after a row update once the rows were within marginal_tol (relative L1) before it,
  // the columns being exact. Returns (iterations, converged).
  std::pair<int, bool> sinkhorn() {
    const std::int64_t n = n_, m = m_;
    std::vector<double> u(static_cast<std::size_t>(n), 1.0), v(static_cast<std::size_t>(m), 1.0);
    std::vector<double> s(static_cast<std::size_t>(n)), t(static_cast<std::size_t>(m));
    log_round();
    fill_kernel();
    auto in_range = [](double x) { return x == 0 || (x > 1e-280 && x < 1e280); };
    for (int it = 1; it < o_.inner_max_iter; ++it) {
      kernels::gemv(false, n, m, 1.0, kernel_.data(), m, v.data(), 0.0, s.data());
      double err = 0;
      bool reset = false;
      for (std::int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(i);
        if (a_[k] == 0) continue;
        err += std::abs(u[k] * s[k] - a_[k]);
        u[k] = a_[k] / s[k];
        reset = reset || !in_range(u[k]);
      }
      if (err / mass_ <= o_.marginal_tol && !reset) {
        absorb(u, v);
        return {it, true};
      }
      if (!reset) {
        kernels::gemv(true, n, m, 1.0, kernel_.data(), m, u.data(), 0.0, t.data());
        for (std::int64_t j = 0; j < m; ++j) {
          const auto k = static_cast<std::size_t>(j);
          if (b_[k] == 0) continue;
          v[k] = b_[k] / t[k];
          reset = reset || !in_range(v[k]);
        }
      }
      if (reset) {
        absorb(u, v);
        log_round();
        fill_kernel();
        std::fill(u.begin(), u.end(), 1.0);
        std::fill(v.begin(), v.end(), 1.0);
      }
    }
    absorb(u, v);
    return {o_.inner_max_iter, false};
  }

  void column_pass(double c, double shift, std::int64_t blocks, std::vector<double>* partial,
                   std::vector<double>* col) {
    const std::int64_t n = n_, m = m_;
#pragma omp parallel num_threads(threads_)
    {
      std::vector<double> buf(static_cast<std::size_t>(m));
#pragma omp for schedule(static)
      for (std::int64_t blk = 0; blk < blocks; ++blk) {
        double* sum = &(*partial)[static_cast<std::size_t>(blk * m)];
        std::fill(sum, sum + m, 0.0);
        for (std::int64_t i = blk * kRowBlock; i < std::min(n, (blk + 1) * kRowBlock); ++i) {
          const double fi = f_[static_cast<std::size_t>(i)];
          if (fi == -kInf) continue;
          const double* cost = &cost_[static_cast<std::size_t>(i * m)];
          for (std::int64_t j = 0; j < m; ++j)
            buf[static_cast<std::size_t>(j)] =
                std::min(0.0, (fi + g_[static_cast<std::size_t>(j)] - cost[j]) * c - shift);
          kernels::exp2_nonpositive(buf.data(), buf.data(), m);
          for (std::int64_t j = 0; j < m; ++j) sum[j] += buf[static_cast<std::size_t>(j)];
        }
      }
    }
    std::fill(col->begin(), col->end(), 0.0);
    for (std::int64_t blk = 0; blk < blocks; ++blk)
      for (std::int64_t j = 0; j < m; ++j)
        (*col)[static_cast<std::size_t>(j)] += (*partial)[static_cast<std::size_t>(blk * m + j)];
    // Columns whose sum fell below the normal range get a max-stabilised pass of their own.
    std::vector<std::int64_t> small;
    for (std::int64_t j = 0; j < m; ++j)
      if (b_[static_cast<std::size_t>(j)] > 0 && (*col)[static_cast<std::size_t>(j)] < 1e-280)
        small.push_back(j);
    std::vector<double> log2_col(static_cast<std::size_t>(m));
    for (std::int64_t j = 0; j < m; ++j)
      log2_col[static_cast<std::size_t>(j)] =
          std::log2((*col)[static_cast<std::size_t>(j)]) + shift;
    if (!small.empty()) stabilised_columns(small, c, &log2_col);
    for (std::int64_t j = 0; j < m; ++j) {
      const double bj = b_[static_cast<std::size_t>(j)];
      if (bj == 0) continue;
      g_[static_cast<std::size_t>(j)] +=
          eps_ * kLn2 * (std::log2(bj) - log2_col[static_cast<std::size_t>(j)]);
    }
  }

  void stabilised_columns(const std::vector<std::int64_t>& cols, double c,
                          std::vector<double>* log2_col) const {
    const std::int64_t n = n_, m = m_;
    for (const std::int64_t j : cols) {
      const double gj = g_[static_cast<std::size_t>(j)];
      double top = -kInf;
      for (std::int64_t i = 0; i < n; ++i)
        top = std::max(top, (f_[static_cast<std::size_t>(i)] + gj -
                             cost_[static_cast<std::size_t>(i * m + j)]) *
                                c);
      double s = 0;
      if (top != -kInf)
        for (std::int64_t i = 0; i < n; ++i)
          s += std::exp2(
              (f_[static_cast<std::size_t>(i)] + gj - cost_[static_cast<std::size_t>(i * m + j)]) *
                  c -
              top);
      (*log2_col)[static_cast<std::size_t>(j)] = top + std::log2(s);
    }
  }

  // plan_ = the Sinkhorn plan; returns sum |T_new - T_old| / mass and sets the marginal error
  // and the matching.
  double write_plan(GraphGromovResult* out) {
    const std::int64_t n = n_, m = m_;
    const double c = kLog2e / eps_;
    const std::int64_t blocks = (n + kRowBlock - 1) / kRowBlock;
    std::vector<double> partial(static_cast<std::size_t>(blocks * m), 0.0);
    out->matching.assign(static_cast<std::size_t>(n), 0);
    double change = 0, row_err = 0;
#pragma omp parallel num_threads(threads_) reduction(+ : change, row_err)
    {
      std::vector<double> buf(static_cast<std::size_t>(m));
#pragma omp for schedule(static)
      for (std::int64_t blk = 0; blk < blocks; ++blk) {
        double* sum = &partial[static_cast<std::size_t>(blk * m)];
        for (std::int64_t i = blk * kRowBlock; i < std::min(n, (blk + 1) * kRowBlock); ++i) {
          const double fi = f_[static_cast<std::size_t>(i)];
          const double* cost = &cost_[static_cast<std::size_t>(i * m)];
          double* t = &plan_[static_cast<std::size_t>(i * m)];
          for (std::int64_t j = 0; j < m; ++j)
            buf[static_cast<std::size_t>(j)] =
                fi == -kInf ? -kInf : (fi + g_[static_cast<std::size_t>(j)] - cost[j]) * c;
          kernels::exp2_nonpositive(buf.data(), buf.data(), m);
          double row = 0, best = -1;
          std::int64_t arg = 0;
          for (std::int64_t j = 0; j < m; ++j) {
            const double v = buf[static_cast<std::size_t>(j)];
            change += std::abs(v - t[j]);
            t[j] = v;
            row += v;
            sum[j] += v;
            if (v > best) best = v, arg = j;
          }
          row_err += std::abs(row - a_[static_cast<std::size_t>(i)]);
          out->matching[static_cast<std::size_t>(i)] = arg;
        }
      }
    }
    double col_err = 0;
    for (std::int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (std::int64_t blk = 0; blk < blocks; ++blk)
        s += partial[static_cast<std::size_t>(blk * m + j)];
      col_err += std::abs(s - b_[static_cast<std::size_t>(j)]);
    }
    out->marginal_error = std::max(row_err, col_err) / mass_;
    return change / mass_;
  }

  std::int64_t n_, m_;
  double eps_;
  const GraphGromovOptions& o_;
  int threads_;
  Inner c1_, c2_;
  std::vector<double> a_, b_;
  double mass_ = 0;
  bool fused_ = false;
  double w_ = 1;
  std::vector<double> x1_, x2_, sq1_, sq2_;
  std::vector<double> row_term_, col_term_;
  std::vector<double> cost_, plan_, kernel_, f_, g_;
};

}  // namespace

void check_plan_size(std::int64_t n, std::int64_t m) {
  require(m <= 0 || n <= kMaxGraphPlanEntries / m, "graph2",
          "the plan is stored dense and n m = " + std::to_string(n) + " x " + std::to_string(m) +
              " exceeds the limit of " + std::to_string(kMaxGraphPlanEntries) +
              " entries (10^4 x 10^4); coarsen the graphs first (birkhoff.coarsen)");
}

GraphGromovResult graph_gromov_wasserstein(const AttributedGraph& g1, const AttributedGraph& g2,
                                           std::span<const double> a, std::span<const double> b,
                                           double epsilon, const GraphGromovOptions& options,
                                           MatrixView<const double> init) {
  check(g1, g2, epsilon, options, init);
  GraphGromov problem(g1, g2, a, b, epsilon, options);
  return problem.solve(init);
}

}  // namespace birkhoff::graph
