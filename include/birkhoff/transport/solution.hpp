#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/core/view.hpp"
#include "birkhoff/transport/problem.hpp"

namespace birkhoff::transport {

namespace detail {
template <class T>
struct SolutionState;
template <class T>
struct DivergenceState;
}  // namespace detail

/// One stage of a solve: the coarse epsilon-scaling on block centroids, the block-sparse
/// annealing on the points, or the iterations at the final epsilon.
struct LevelReport {
  /// "coarse" (one per coarse level, coarsest first), "anneal", "final, block-local float32"
  /// (a multiscale float64 solve's iterations on block-local float32 passes) or "final"; a
  /// float32 stage finished in float64 lists its levels first, named "float32 ...".
  std::string name;
  double epsilon_start = 0;  ///< first epsilon of the stage (cost units)
  double epsilon_end = 0;    ///< last epsilon of the stage
  int iterations = 0;        ///< alternating iterations (f and g updates) in the stage
  double kept_fraction = 1;  ///< pairs evaluated per pass / (n m) at the end of the stage
};

/// How a solve went.
struct SinkhornReport {
  double epsilon = 0;  ///< final epsilon (cost units)
  /// The value (cost units), GeomLoss's formula: balanced <a,f> + <b,g>; a relaxed side
  /// contributes (rho [+ eps/2 when both are relaxed]) <w, 1 - exp(-h/rho)>. For unit masses
  /// this is the dual objective at the optimum. Partial OT: <a, f - lambda> + <b, g> + lambda
  /// mass = <P, C> + eps sum P log(P / (a x b)) at the optimum (docs/partial.md).
  double loss = 0;
  double transport_cost = 0;   ///< <P, C> of the plan built from (f, g)
  int iterations = 0;          ///< Sinkhorn sweeps (symmetric) or f/g iterations (alternating)
  bool converged = false;      ///< marginal_error <= options.marginal_tol (and finite)
  bool stopped_early = false;  ///< the tol criterion fired
  /// Relative L1 marginal violation of the plan: max over the two sides of |P1 - t|_1 / |t|_1,
  /// where the target t is a for a hard constraint and, for a relaxed side, the marginal the
  /// fixed point has, a exp(-f / rho) (so 0 means the potentials solve the problem). Partial
  /// OT: the violation of its optimality conditions (P1 = a where f < lambda, P1 <= a at the
  /// cap, likewise for the columns, total = mass), over the mass.
  double marginal_error = 0;
  std::vector<double> errors;  ///< GeomLoss schedule: the tol quantity at each check
  /// Converge schedule: the estimate of the marginal error after each iteration at the final
  /// epsilon (free by-product of the updates).
  std::vector<double> marginal_errors;
  /// Converge schedule: the iteration budget (max_iter) ran out before marginal_tol was met.
  bool budget_exhausted = false;
  /// Converge schedule: the error estimate stopped improving (by 1 % in 200 iterations) above
  /// marginal_tol, the floor of the arithmetic or of the truncation.
  bool stalled = false;
  std::string schedule;        ///< "converge" or "geomloss"
  std::string backend;         ///< "dense" or "multiscale"
  std::string backend_reason;  ///< why the automatic choice took it
  std::string acceleration;    ///< "none", "over-relaxation" or "anderson"
  /// The arithmetic of the solve: the input's, or "float64 (why)" when float32 input at an
  /// epsilon below what float32 logits resolve to marginal_tol was solved in float64.
  std::string working_dtype;
  /// Largest certified error (cost units) of a truncated update at the final epsilon:
  /// |f_exact - f_truncated| <= truncation_bound for every point; 0 for the dense backend.
  double truncation_bound = 0;
  /// Pairs evaluated per pass / (n m) at the final epsilon (1 for the dense backend).
  double kept_fraction = 1;
  /// Multiscale: the fraction of pairs a truncation of single entries would keep at the final
  /// potentials (plan entry at least delta / m of its row's weight, delta the kept lists' row
  /// budget, 1e-2 marginal_tol), estimated on 256 rows spread over x; kept_fraction /
  /// ideal_fraction is what whole blocks cost. 0 for the dense backend (not computed).
  double ideal_fraction = 0;
  std::vector<LevelReport> levels;
};

/// Gradients of a solution's value (envelope theorem; [flashsinkhorn2026] §5,
/// [feydy2019] Prop. 2). All row-major, the element type of the problem.
template <class T>
struct Gradients {
  std::vector<T> x;  ///< (n, d)  d loss / d x
  std::vector<T> y;  ///< (m, d)  d loss / d y
  std::vector<T> a;  ///< (n)     d loss / d a
  std::vector<T> b;  ///< (m)     d loss / d b
};

/// The output of sinkhorn(): the potentials with the prepared geometry, the weights and the
/// marginal policy they solve, so that every product with the plan
///     P_ij = a_i b_j exp((f_i + g_j - C_ij) / epsilon)
/// is one streamed pass over the n x m pairs (O((n + m)(d + k)) memory) with nothing rebuilt
/// per call. Copies share the state. Source: [flashsinkhorn2026] §5-6.
template <class T>
class Solution {
 public:
  Solution() = default;
  explicit Solution(std::shared_ptr<const detail::SolutionState<T>> state);

  const PointCloud<T>& geometry() const;
  const Marginals& marginals() const;
  const SinkhornReport& report() const;
  double epsilon() const { return report().epsilon; }
  double loss() const { return report().loss; }
  bool converged() const { return report().converged; }
  std::int64_t n() const { return geometry().n(); }
  std::int64_t m() const { return geometry().m(); }

  /// (n), (m) final potentials, cost units.
  std::span<const T> f() const;
  std::span<const T> g() const;
  /// (n), (m) the potentials the gradients use: from before the symmetric schedule's last
  /// extrapolation; empty when there is none (the gradients then use f and g).
  std::span<const T> f_grad() const;
  std::span<const T> g_grad() const;
  /// (n), (m) the weights solved for (the uniform ones filled in).
  std::span<const T> a() const;
  std::span<const T> b() const;

  /// out (n, k) = P v for v (m, k).   @throws InvalidInput on shape mismatch or non-finite v.
  void apply(MatrixView<const T> v, MatrixView<T> out) const;
  /// out (m, k) = P^T u for u (n, k). @throws InvalidInput on shape mismatch or non-finite u.
  void apply_transpose(MatrixView<const T> u, MatrixView<T> out) const;
  /// (n) row sums P 1 and (m) column sums P^T 1.
  std::vector<T> row_marginal() const;
  std::vector<T> col_marginal() const;
  /// (n, d) row-major: the barycentric map x_i -> sum_j P_ij y_j / sum_j P_ij.
  std::vector<T> barycentric_map() const;
  /// (n * m) row-major dense plan; for small problems and tests.
  std::vector<T> dense_plan() const;
  /// Gradients of loss() with respect to x, y, a, b, streamed. With unbalanced OT the row
  /// masses a_i exp(-f_i / rho) replace a_i; with partial OT the plan's marginals, and d/da_i
  /// = f_i - lambda - eps (P1)_i / a_i (the mass held fixed).
  Gradients<T> gradients() const;
  /// Partial OT: the multiplier lambda of the mass constraint (d loss / d mass = lambda +
  /// epsilon, the entropy's derivative adding epsilon); the row
  /// potential f holds f + lambda, so P_ij = a_i b_j exp((f_i + g_j - C_ij) / eps) still holds.
  /// 0 for the other policies.
  double multiplier() const;

  /// The shared state (for the bindings and the divergence).
  const detail::SolutionState<T>& state() const { return *state_; }

 private:
  std::shared_ptr<const detail::SolutionState<T>> state_;
};

/// The output of sinkhorn_divergence(): the cross solution and the two self potentials.
template <class T>
class DivergenceSolution {
 public:
  DivergenceSolution() = default;
  explicit DivergenceSolution(std::shared_ptr<const detail::DivergenceState<T>> state);

  /// The divergence OT(a,b) - OT(a,a)/2 - OT(b,b)/2 (cost units).
  double loss() const;
  /// The cross problem OT(a, b): its potentials, report and products.
  const Solution<T>& xy() const;
  /// (n), (m) self potentials of OT(a, a) and OT(b, b), and their pre-extrapolation copies
  /// (empty when none).
  std::span<const T> f_aa() const;
  std::span<const T> g_bb() const;
  std::span<const T> f_aa_grad() const;
  std::span<const T> g_bb_grad() const;
  /// Gradients of loss() with respect to x, y, a, b.
  Gradients<T> gradients() const;

 private:
  std::shared_ptr<const detail::DivergenceState<T>> state_;
};

}  // namespace birkhoff::transport
