#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"

namespace birkhoff::transport {

/// Ground cost between points. SqEuclidean is |x - y|^2 (cs = 1, the FlashSinkhorn and OTT
/// default); HalfSqEuclidean is |x - y|^2 / 2 (cs = 1/2, GeomLoss's p = 2 cost).
enum class Cost { SqEuclidean, HalfSqEuclidean };

/// How the two potentials are updated. Symmetric: GeomLoss's averaged (Jacobi) sweeps with
/// epsilon-scaling and a final extrapolation [feydy2019]. Alternating: OTT's Gauss-Seidel
/// iteration at a fixed epsilon, f first [cuturi2013].
enum class Update { Symmetric, Alternating };

/// An entropic OT problem between two weighted point clouds.
///
/// x (n, d) and y (m, d): row-major points (float32 or float64), finite, n, m >= 1.
/// a (n), b (m): non-negative finite weights with positive total mass; empty means uniform
/// (1/n, 1/m). Zero weights are allowed. Balanced problems need equal masses (relative 1e-5).
/// reach_a, reach_b: unbalanced OT; the marginal penalty is rho = reach^2 (cost units) with
/// a KL divergence on that side; unset means that marginal is a hard constraint.
template <class T>
struct OtProblem {
  MatrixView<const T> x;
  MatrixView<const T> y;
  std::span<const T> a;
  std::span<const T> b;
  Cost cost = Cost::SqEuclidean;
  std::optional<double> reach_a;
  std::optional<double> reach_b;
};

/// Solver settings. Epsilon (cost units) is blur^2 whatever the cost scale [feydy2019].
struct SinkhornOptions {
  /// Final blur; epsilon = blur^2. Must be > 0 and finite.
  double blur = 0.05;
  /// Ratio between successive blurs of the epsilon-scaling schedule, in (0, 1).
  double scaling = 0.5;
  /// Start of the schedule; default: diagonal of the joint bounding box of x and y.
  std::optional<double> diameter;
  /// Explicit epsilon schedule (cost units); when non-empty it replaces blur/scaling.
  std::vector<double> epsilons;
  /// When > 0: this many iterations at epsilon = blur^2, without annealing.
  int iterations = 0;
  Update update = Update::Symmetric;
  /// Symmetric schedule only: a last full (unaveraged) sweep at the final epsilon.
  bool last_extrapolation = true;
  /// Early stopping for fixed-epsilon runs (`iterations` or `epsilons`): stop once
  /// max |f - f_prev|, |g - g_prev| (cost units) over `check_every` iterations at the final
  /// epsilon falls below tol. Unset: run the whole schedule.
  std::optional<double> tol;
  int check_every = 5;
  /// The result reports converged = (marginal_error <= marginal_tol).
  double marginal_tol = 1e-3;
  /// OpenMP threads; 0 = default. Results do not depend on it.
  int num_threads = 0;
  /// Called once per iteration with stage "sinkhorn"; return false to cancel.
  ProgressCallback progress;
};

/// The output of sinkhorn(). Potentials use GeomLoss's convention:
/// P_ij = a_i b_j exp((f_i + g_j - C_ij) / epsilon).
template <class T>
struct SinkhornResult {
  std::vector<T> f;  ///< (n) final potential of x, cost units
  std::vector<T> g;  ///< (m) final potential of y
  /// (n), (m): the potentials the gradients use, from before the last extrapolation; empty
  /// when there is none (the gradients then use f and g).
  std::vector<T> f_grad, g_grad;
  double epsilon = 0;  ///< final epsilon (cost units)
  /// The value (cost units), GeomLoss's formula: balanced <a,f> + <b,g>; a relaxed side
  /// contributes (rho [+ eps/2 when both are relaxed]) <w, 1 - exp(-h/rho)>. For unit masses
  /// this is the dual objective at the optimum.
  double loss = 0;
  double transport_cost = 0;   ///< <P, C> of the plan built from (f, g)
  int iterations = 0;          ///< Sinkhorn sweeps (symmetric) or f/g iterations (alternating)
  bool converged = false;      ///< marginal_error <= options.marginal_tol
  bool stopped_early = false;  ///< the tol criterion fired
  /// Relative L1 marginal violation of the plan: max(|P1 - a|_1 / |a|_1, |P^T 1 - b|_1 / |b|_1)
  /// for hard constraints (relaxed sides are not counted).
  double marginal_error = 0;
  std::vector<double> errors;  ///< the tol quantity at each check
};

/// Entropic OT between two point clouds with the stabilised log-domain Sinkhorn iteration,
/// each update a streamed row-wise LogSumExp of biased dot products: memory O((n + m) d),
/// the n x m cost is never formed. Source: FlashSinkhorn (arXiv 2602.03067) §2-3;
/// GeomLoss's symmetric schedule [feydy2019] Alg. 3.5.
/// @throws InvalidInput for empty clouds, dimension mismatch, wrong weight length, NaN/inf,
///         negative weights, zero mass, unequal masses when balanced, bad options, and an
///         epsilon too small for the precision (below ~2^-18 D^2 in float32, 2^-47 D^2 in
///         float64, D the data's bounding-box diagonal).
/// @throws Cancelled when the progress callback returns false.
template <class T>
SinkhornResult<T> sinkhorn(const OtProblem<T>& problem, const SinkhornOptions& options = {});

/// The debiased Sinkhorn divergence S = OT(a,b) - OT(a,a)/2 - OT(b,b)/2 [feydy2019] eq. (9),
/// GeomLoss style: one epsilon schedule and the self terms updated in the same loop.
template <class T>
struct DivergenceResult {
  double loss = 0;            ///< the divergence (cost units)
  SinkhornResult<T> xy;       ///< the cross problem (potentials f_ab, g_ab)
  std::vector<T> f_aa, g_bb;  ///< self potentials (final)
  std::vector<T> f_aa_grad, g_bb_grad;
};

/// @throws as sinkhorn().
template <class T>
DivergenceResult<T> sinkhorn_divergence(const OtProblem<T>& problem,
                                        const SinkhornOptions& options = {});

/// The epsilon schedule that `options` gives for `diameter` (GeomLoss's epsilon_schedule with
/// p = 2): [D^2, D^2, (D s)^2, ..., blur^2]; or the explicit / fixed schedule.
std::vector<double> epsilon_schedule(const SinkhornOptions& options, double diameter);

/// Diagonal of the joint axis-aligned bounding box of x and y.
template <class T>
double bounding_diameter(MatrixView<const T> x, MatrixView<const T> y);

/// Checks a problem and options; throws InvalidInput naming the argument. Every entry point
/// calls it first, so C++, the CLI and Python report the same errors.
template <class T>
void validate(const OtProblem<T>& problem, const SinkhornOptions& options);

}  // namespace birkhoff::transport
