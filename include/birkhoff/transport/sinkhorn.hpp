#pragma once

#include <optional>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/transport/problem.hpp"
#include "birkhoff/transport/solution.hpp"

namespace birkhoff::transport {

/// How the two potentials are updated in the GeomLoss schedule. Symmetric: GeomLoss's averaged
/// (Jacobi) sweeps with epsilon-scaling and a final extrapolation [feydy2019]. Alternating:
/// OTT's Gauss-Seidel iteration, f first [cuturi2013].
enum class Update { Symmetric, Alternating };

/// What a solve runs.
enum class Schedule {
  /// Converge unless `iterations` or `epsilons` ask for the GeomLoss schedule.
  Auto,
  /// Epsilon-scaling down to the problem's epsilon (one alternating update per value), then
  /// alternating updates at that epsilon, accelerated, until the plan's marginal error is
  /// within marginal_tol or max_iter iterations have run: a converged answer by default.
  Converge,
  /// GeomLoss's schedule: one sweep per epsilon of the annealing (or `iterations` at a fixed
  /// epsilon, or the explicit `epsilons`), then an extrapolation; what SamplesLoss computes.
  GeomLoss,
};

/// How the pairs are visited.
enum class Backend {
  /// Multiscale when it pays (low dimension, many points, epsilon small against the spread),
  /// else dense; the report says which was used and why.
  Auto,
  /// Every pair in every pass, streamed in tiles.
  Dense,
  /// Space-filling-curve blocks, a coarse epsilon-scaling on block centroids, then block-sparse
  /// passes over the kept block pairs with a certified truncation bound (docs/transport.md).
  Multiscale,
};

/// Acceleration of the iterations at the final epsilon (Schedule::Converge).
enum class Acceleration {
  None,
  /// f <- (1 - w) f + w f_new with w in [1, 2), adapted from the observed contraction rate
  /// [thibault2021].
  OverRelaxation,
  /// Anderson extrapolation of the column potential from a window of past iterates.
  Anderson,
};

/// Solver settings; the problem's epsilon is the final one.
struct SinkhornOptions {
  Schedule schedule = Schedule::Auto;
  Backend backend = Backend::Auto;
  /// Ratio between successive blurs (sqrt(epsilon)) of the epsilon-scaling schedule, in (0, 1).
  double scaling = 0.5;
  /// Start of the schedule (a length, like blur); default: the diameter of the points that
  /// carry weight.
  std::optional<double> diameter;
  /// GeomLoss schedule: an explicit epsilon schedule (cost units) replacing scaling; its last
  /// value must be the problem's epsilon.
  std::vector<double> epsilons;
  /// GeomLoss schedule: when > 0, this many iterations at the problem's epsilon, no annealing.
  int iterations = 0;
  /// GeomLoss schedule: how the potentials are updated.
  Update update = Update::Symmetric;
  /// GeomLoss schedule, symmetric update: a last full (unaveraged) sweep at the final epsilon.
  bool last_extrapolation = true;
  /// GeomLoss schedule, fixed-epsilon runs (`iterations` or `epsilons`): stop once
  /// max |f - f_prev|, |g - g_prev| (cost units) over `check_every` iterations at the final
  /// epsilon falls below tol. Unset: run the whole schedule.
  std::optional<double> tol;
  int check_every = 5;
  /// Converge schedule: the budget of iterations at the final epsilon.
  int max_iter = 20000;
  /// Converge schedule: acceleration at the final epsilon.
  Acceleration acceleration = Acceleration::OverRelaxation;
  /// The report says converged = (marginal_error <= marginal_tol, and the truncation bound
  /// within epsilon * marginal_tol); the Converge schedule iterates until it holds.
  double marginal_tol = 1e-3;
  /// Multiscale: points per row block (a multiple of 16 in [16, 4096]); columns are kept by
  /// sub-blocks of 8 points (16 from d = 4, whole blocks from d = 8).
  int block_size = 32;
  /// OpenMP threads; 0 = default. Results do not depend on it.
  int num_threads = 0;
  /// Converge schedule, dense backend: a warm start from potentials f (n) and g (m) in the
  /// solution's convention (a previous solve's f() and g(), or those of a nearby problem):
  /// the annealing is skipped and the iterations start at the problem's epsilon. Both or
  /// neither.
  std::vector<double> init_f, init_g;
  /// Called once per iteration with stage "sinkhorn", the epsilon and the latest marginal error
  /// estimate; return false to cancel.
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
/// epsilon_schedule for a cost of exponent p, GroundCost::exponent): [D^p, D^p, (D s)^p, ...,
/// epsilon]; or the explicit one; or `iterations` copies of epsilon.
std::vector<double> epsilon_schedule(const SinkhornOptions& options, double epsilon,
                                     double diameter, double p = 2);

/// validate(problem), then the options against it: throws InvalidInput naming `scaling`,
/// `diameter`, `epsilons`, `iterations`, `check_every`, `tol`, `max_iter`, `marginal_tol`,
/// `block_size`, `schedule`, `backend`, `num_threads` or `init_f`/`init_g`, and `epsilon` when a
/// schedule value is below what T resolves.
template <class T>
void validate(const OtProblem<T>& problem, const SinkhornOptions& options);

}  // namespace birkhoff::transport
