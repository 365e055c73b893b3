#pragma once

#include <optional>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/transport/problem.hpp"
#include "birkhoff/transport/solution.hpp"

namespace birkhoff::transport {

/// How the two potentials are updated. Symmetric: GeomLoss's averaged (Jacobi) sweeps with
/// epsilon-scaling and a final extrapolation [feydy2019]. Alternating: OTT's Gauss-Seidel
/// iteration at a fixed epsilon, f first [cuturi2013].
enum class Update { Symmetric, Alternating };

/// Solver settings; the problem's epsilon is the final one.
struct SinkhornOptions {
  /// Ratio between successive blurs (sqrt(epsilon)) of the epsilon-scaling schedule, in (0, 1).
  double scaling = 0.5;
  /// Start of the schedule (a length, like blur); default: the geometry's diameter.
  std::optional<double> diameter;
  /// Explicit epsilon schedule (cost units); when non-empty it replaces scaling, and its last
  /// value must be the problem's epsilon.
  std::vector<double> epsilons;
  /// When > 0: this many iterations at the problem's epsilon, without annealing.
  int iterations = 0;
  Update update = Update::Symmetric;
  /// Symmetric schedule only: a last full (unaveraged) sweep at the final epsilon.
  bool last_extrapolation = true;
  /// Early stopping for fixed-epsilon runs (`iterations` or `epsilons`): stop once
  /// max |f - f_prev|, |g - g_prev| (cost units) over `check_every` iterations at the final
  /// epsilon falls below tol. Unset: run the whole schedule.
  std::optional<double> tol;
  int check_every = 5;
  /// The report says converged = (marginal_error <= marginal_tol).
  double marginal_tol = 1e-3;
  /// OpenMP threads; 0 = default. Results do not depend on it.
  int num_threads = 0;
  /// Called once per iteration with stage "sinkhorn"; return false to cancel.
  ProgressCallback progress;
};

/// Entropic OT between two point clouds with the stabilised log-domain Sinkhorn iteration,
/// each update a streamed row-wise LogSumExp of biased dot products: memory O((n + m) d),
/// the n x m cost is never formed. Source: [flashsinkhorn2026] §2-3; GeomLoss's symmetric
/// schedule [feydy2019] Alg. 3.5.
/// @return the solution: potentials f (n), g (m) in GeomLoss's convention
///         P_ij = a_i b_j exp((f_i + g_j - C_ij) / epsilon), the report, and the plan's
///         streamed products.
/// @throws InvalidInput as validate(problem, options); Cancelled when the progress callback
///         returns false.
template <class T>
Solution<T> sinkhorn(const OtProblem<T>& problem, const SinkhornOptions& options = {});

/// The debiased Sinkhorn divergence S = OT(a,b) - OT(a,a)/2 - OT(b,b)/2 [feydy2019] eq. (9),
/// GeomLoss style: one epsilon schedule, the self terms updated in the same loop. An
/// unbalanced problem needs both reaches (or neither).
/// @throws as sinkhorn().
template <class T>
DivergenceSolution<T> sinkhorn_divergence(const OtProblem<T>& problem,
                                          const SinkhornOptions& options = {});

/// The epsilon schedule of `options` for a final epsilon and a start `diameter` (GeomLoss's
/// epsilon_schedule with p = 2): [D^2, D^2, (D s)^2, ..., epsilon]; or the explicit one; or
/// `iterations` copies of epsilon.
std::vector<double> epsilon_schedule(const SinkhornOptions& options, double epsilon,
                                     double diameter);

/// validate(problem), then the options against it: throws InvalidInput naming `scaling`,
/// `diameter`, `epsilons`, `iterations`, `check_every`, `tol`, `marginal_tol` or
/// `num_threads`, and `epsilon` when a schedule value is below what T resolves.
template <class T>
void validate(const OtProblem<T>& problem, const SinkhornOptions& options);

}  // namespace birkhoff::transport
