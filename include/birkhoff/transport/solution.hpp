#pragma once

#include <memory>
#include <span>
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

/// How a solve went.
struct SinkhornReport {
  double epsilon = 0;  ///< final epsilon (cost units)
  /// The value (cost units), GeomLoss's formula: balanced <a,f> + <b,g>; a relaxed side
  /// contributes (rho [+ eps/2 when both are relaxed]) <w, 1 - exp(-h/rho)>. For unit masses
  /// this is the dual objective at the optimum.
  double loss = 0;
  double transport_cost = 0;   ///< <P, C> of the plan built from (f, g)
  int iterations = 0;          ///< Sinkhorn sweeps (symmetric) or f/g iterations (alternating)
  bool converged = false;      ///< marginal_error <= options.marginal_tol (and finite)
  bool stopped_early = false;  ///< the tol criterion fired
  /// Relative L1 marginal violation of the plan: max(|P1 - a|_1 / |a|_1, |P^T 1 - b|_1 / |b|_1)
  /// over the hard constraints (relaxed sides are not counted).
  double marginal_error = 0;
  std::vector<double> errors;  ///< the tol quantity at each check
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
  /// masses a_i exp(-f_i / rho) replace a_i.
  Gradients<T> gradients() const;

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
