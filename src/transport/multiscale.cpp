// The multiscale backend: the coarse solve on block centroids, the jump, the fine solve on
// block-sparse passes, the certificate, and the solution's plan in the caller's order.
#include "transport/multiscale.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "transport/solver.hpp"
#include "transport/state.hpp"

namespace birkhoff::transport::detail {
namespace {

// Points per column sub-block: the smallest power of two from 8 up that holds twice the d + 1
// values an affine bound fits (fewer leave the fitted slope, and so the bound, loose), when it
// divides the block size. Smaller column blocks follow the plan's support more closely: at
// 1e5 points in 3-D, blur 0.01, 8 keep 0.71 % of the pairs against 1.12 % for 32.
std::int64_t column_block(std::int64_t block_size, std::int64_t d) {
  std::int64_t sub = 8;
  while (sub < 2 * (d + 1)) sub *= 2;
  return sub < block_size && block_size % sub == 0 ? sub : block_size;
}

}  // namespace

template <class T>
BlockOrder<T>::BlockOrder(const OtProblem<T>& problem, std::int64_t block_size, double delta,
                          int threads, std::shared_ptr<const RowShare<T>> share)
    : sub(column_block(block_size, problem.geometry.dim())),
      bx(make_blocks(problem.geometry.x(), problem.a, block_size, sub)),
      by(make_blocks(problem.geometry.y(), problem.b, block_size, sub)),
      cx(sub_blocks(bx, problem.geometry.x(), problem.a, sub)),
      cy(sub_blocks(by, problem.geometry.y(), problem.b, sub)),
      geometry(problem.geometry.permuted(bx.order, by.order)),
      a(problem.a.empty() ? std::vector<T>() : gather_rows(problem.a.data(), 1, bx.order)),
      b(problem.b.empty() ? std::vector<T>() : gather_rows(problem.b.data(), 1, by.order)),
      wa(make_weights(std::span<const T>(a), geometry.n())),
      wb(make_weights(std::span<const T>(b), geometry.m())),
      passes(std::make_unique<BlockSparsePasses<T>>(x_side(geometry, wa), y_side(geometry, wb), bx,
                                                    by, 0.5 * geometry.cost()->kappa(), delta,
                                                    threads, &cx, &cy)) {
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
// The relative mass of a row that the kept lists may leave out.
double truncation_delta(const SinkhornOptions& options) { return 1e-2 * options.marginal_tol; }

template <class T>
struct FineRun {
  std::shared_ptr<BlockOrder<T>> order;
  std::unique_ptr<Solver<T>> solver;
  std::vector<LevelReport> coarse;
};

template <class T>
FineRun<T> run_multiscale(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias,
                          std::shared_ptr<const RowShare<T>> share, double recurse_pairs) {
  validate(problem, options);
  const auto& geom = problem.geometry;
  const int threads = resolve_threads(options.num_threads);
  const double cs = 0.5 * geom.cost()->kappa();
  FineRun<T> run;
  run.order = std::make_shared<BlockOrder<T>>(problem, options.block_size,
                                              truncation_delta(options), threads, std::move(share));
  // float64 solves iterate on block-local float32 logits first (the solver finishes them).
  run.order->passes->set_local_float32(true);
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
  Marginals coarse_marginals = problem.marginals;
  if (auto* partial = std::get_if<Partial>(&coarse_marginals)) {
    // The blocks' masses in T may sum a rounding below the points' weights.
    const double total = std::min(std::accumulate(ac.begin(), ac.end(), 0.0),
                                  std::accumulate(bc.begin(), bc.end(), 0.0));
    partial->mass = std::min(partial->mass, total);
  }
  OtProblem<T> coarse{
      PointCloud<T>({xc.data(), bx.count, d}, {yc.data(), by.count, d}, geom.cost()), ac, bc,
      eps_jump, coarse_marginals};
  SinkhornOptions co;
  co.schedule = Schedule::Converge;
  co.backend = Backend::Dense;
  co.scaling = options.scaling;
  co.diameter = options.diameter;
  co.marginal_tol = 1e-2;
  co.max_iter = 500;
  co.num_threads = options.num_threads;
  co.progress = options.progress;
  // A coarse problem of many centroids is itself solved on blocks of its centroids (one level
  // more); dense passes would cost it bx.count * by.count pairs per pass. Each rank of a
  // distributed run solves it whole, so its bits do not depend on the number of ranks.
  const bool deeper =
      static_cast<double>(bx.count) * static_cast<double>(by.count) >= recurse_pairs &&
      bx.count > 2 * options.block_size && by.count > 2 * options.block_size;
  if (deeper) {
    co.backend = Backend::Multiscale;
    co.block_size = options.block_size;
  }
  const std::string why = "coarse level";
  std::optional<DivergenceSolution<T>> coarse_div;
  std::optional<Solution<T>> coarse_sol;
  if (debias)
    coarse_div = deeper ? multiscale_divergence<T>(coarse, co, why, nullptr, recurse_pairs)
                        : dense_backend<T>().divergence(coarse, co, why);
  else
    coarse_sol = deeper ? multiscale_sinkhorn<T>(coarse, co, why, nullptr, recurse_pairs)
                        : dense_backend<T>().solve(coarse, co, why);
  const Solution<T> cs_sol = debias ? coarse_div->xy() : *coarse_sol;
  // The coarse levels of a deeper coarse solve come first, then its own solve.
  for (const LevelReport& lv : cs_sol.report().levels)
    if (lv.name == "coarse") run.coarse.push_back(lv);
  run.coarse.push_back(
      {"coarse",
       cs_sol.report().levels.empty() ? eps_jump : cs_sol.report().levels.front().epsilon_start,
       eps_jump, cs_sol.report().iterations, cs_sol.report().kept_fraction});

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
    // Partial OT: the level that makes this side carry the mass (0 for other problems).
    const double level = pol.level(cand, rows.sqnorm, rows.weights, eps_jump);
    pol.update(axis, h, cand, rows.sqnorm, eps_jump, 1.0, level);
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
// A capped update (partial OT: h = min(cap, candidate)) errs only by what the dropped pairs add
// to the plan at h itself: its bound reads min(h, candidate), which is the candidate elsewhere.
template <class T>
double certificate(BlockSparsePasses<T>& passes, Axis rows, Axis cols, const std::vector<T>& rh,
                   const std::vector<T>& ch, double eps, bool capped = false) {
  LseOut<T> out;
  std::vector<T> cand;
  softmin(passes, rows, cols, rh, ch, eps, out, cand);
  if (capped)
    for (std::size_t i = 0; i < cand.size(); ++i) cand[i] = std::min(cand[i], rh[i]);
  return passes.certify(rows, cols, cand, ch, eps);
}

// The fraction of pairs a truncation of single entries would keep, estimated on kIdealRows
// rows spread evenly over x: pair (i, j) counts when its plan entry is at least delta / m of
// its row's weight, b_j exp((f_i + g_j - C_ij) / eps) >= delta / m, so the entries left out
// carry at most delta of each row, the budget the kept block lists spend on whole blocks.
template <class T>
double ideal_fraction(const OtProblem<T>& problem, std::span<const T> f, std::span<const T> g,
                      double delta, int threads) {
  constexpr std::int64_t kIdealRows = 256;
  const auto& geom = problem.geometry;
  const std::int64_t n = geom.n(), m = geom.m(), d = geom.dim();
  const auto x = geom.x(), y = geom.y();
  const double cs = 0.5 * geom.cost()->kappa(), eps = problem.epsilon;
  const Weights<T> b = make_weights(problem.b, m);
  const std::int64_t rows = std::min(n, kIdealRows);
  std::vector<double> log_bg(static_cast<std::size_t>(m));
  for (std::int64_t j = 0; j < m; ++j) {
    const double bj = b.w.empty() ? 1.0 / static_cast<double>(m)
                                  : static_cast<double>(b.w[static_cast<std::size_t>(j)]);
    log_bg[static_cast<std::size_t>(j)] =
        std::log(bj) + static_cast<double>(g[static_cast<std::size_t>(j)]) / eps;
  }
  const double floor = std::log(delta / static_cast<double>(m));
  std::int64_t kept = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : kept) schedule(static)
  for (std::int64_t k = 0; k < rows; ++k) {
    const std::int64_t i = k * n / rows;
    const double fi = static_cast<double>(f[static_cast<std::size_t>(i)]) / eps;
    for (std::int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (std::int64_t c = 0; c < d; ++c) {
        const double t = static_cast<double>(x(i, c)) - static_cast<double>(y(j, c));
        s += t * t;
      }
      if (fi + log_bg[static_cast<std::size_t>(j)] - cs * s / eps >= floor) ++kept;
    }
  }
  return static_cast<double>(kept) / static_cast<double>(rows * m);
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
                 scatter<T>(st.f_grad, ox),
                 scatter<T>(st.g_grad, oy),
                 st.report,
                 sorted.multiplier()};
  SinkhornReport& r = found.report;
  r.backend = "multiscale";
  r.working_dtype = sizeof(T) == 4 ? "float32" : "float64";
  r.backend_reason = reason;
  r.truncation_bound = bound;
  r.kept_fraction = run.order->passes->kept_fraction();
  r.ideal_fraction = ideal_fraction<T>(problem, found.f, found.g, truncation_delta(options),
                                       resolve_threads(options.num_threads));
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
                                const std::string& reason, std::shared_ptr<const RowShare<T>> share,
                                double recurse_pairs) {
  FineRun<T> run = run_multiscale(problem, options, false, std::move(share), recurse_pairs);
  const Solution<T> sorted = run.solver->result();
  const auto& st = sorted.state();
  auto& passes = *run.order->passes;
  const double eps = problem.epsilon;
  const bool capped = std::holds_alternative<Partial>(problem.marginals);
  const double bound =
      std::max(certificate(passes, Axis::X, Axis::Y, st.f_hat, st.g_hat, eps, capped),
               certificate(passes, Axis::Y, Axis::X, st.g_hat, st.f_hat, eps, capped));
  // The solution's products are local, on lists of the final potentials.
  passes.set_share(nullptr);
  passes.reset_lists();
  return in_caller_order(problem, options, run, sorted, reason, bound);
}

template <class T>
DivergenceSolution<T> multiscale_divergence(const OtProblem<T>& problem,
                                            const SinkhornOptions& options,
                                            const std::string& reason,
                                            std::shared_ptr<const RowShare<T>> share,
                                            double recurse_pairs) {
  FineRun<T> run = run_multiscale(problem, options, true, std::move(share), recurse_pairs);
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
  s->f_aa_grad = scatter<T>(sorted.f_aa_grad(), run.order->bx.order);
  s->g_bb_grad = scatter<T>(sorted.g_bb_grad(), run.order->by.order);
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

template struct BlockOrder<float>;
template struct BlockOrder<double>;
template class BlockOrderPasses<float>;
template class BlockOrderPasses<double>;
template DivergenceSolution<float> multiscale_divergence(const OtProblem<float>&,
                                                         const SinkhornOptions&, const std::string&,
                                                         std::shared_ptr<const RowShare<float>>,
                                                         double);
template DivergenceSolution<double> multiscale_divergence(const OtProblem<double>&,
                                                          const SinkhornOptions&,
                                                          const std::string&,
                                                          std::shared_ptr<const RowShare<double>>,
                                                          double);
template std::shared_ptr<const BackendImpl<float>> multiscale_backend(
    std::shared_ptr<const RowShare<float>>);
template std::shared_ptr<const BackendImpl<double>> multiscale_backend(
    std::shared_ptr<const RowShare<double>>);
template Solution<float> multiscale_sinkhorn(const OtProblem<float>&, const SinkhornOptions&,
                                             const std::string&,
                                             std::shared_ptr<const RowShare<float>>, double);
template Solution<double> multiscale_sinkhorn(const OtProblem<double>&, const SinkhornOptions&,
                                              const std::string&,
                                              std::shared_ptr<const RowShare<double>>, double);

}  // namespace birkhoff::transport::detail
