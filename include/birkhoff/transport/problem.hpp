#pragma once

#include <optional>
#include <span>
#include <variant>

#include "birkhoff/transport/geometry.hpp"

namespace birkhoff::transport {

/// Both marginals are hard constraints: P 1 = a, P^T 1 = b (equal masses).
struct Balanced {};

/// Unbalanced OT [sejourne2019]: a relaxed side replaces its constraint by the penalty
/// rho KL(P 1 | a) with rho = reach^2 (cost units); an unset side stays a hard constraint
/// (semi-unbalanced). At least one reach must be set.
struct Unbalanced {
  std::optional<double> reach_a;
  std::optional<double> reach_b;
};

/// Partial OT [benamou2015] §5.2, [chapel2020]: both marginals are upper bounds, P 1 <= a,
/// P^T 1 <= b, and the plan carries exactly `mass` (cost units of weight), 0 < mass <=
/// min(|a|, |b|). Only the most similar mass is moved; the rest of each side stays put. Solved
/// by block-coordinate ascent on the dual with capped potentials (docs/partial.md).
struct Partial {
  double mass = 0;
};

/// How the plan's marginals are constrained: one type for every policy, so a solver, a
/// solution and the front ends carry one value. The arithmetic of each policy (the update
/// of a potential from its soft c-transform, the value, the weight gradient, which marginal
/// errors count) lives in one place, src/transport/marginals.*.
using Marginals = std::variant<Balanced, Unbalanced, Partial>;

/// Balanced when both reaches are unset, else Unbalanced{reach_a, reach_b}.
Marginals marginals_from_reach(std::optional<double> reach_a, std::optional<double> reach_b);

/// The reach of one side: unset for a hard constraint.
std::optional<double> reach_a(const Marginals& marginals);
std::optional<double> reach_b(const Marginals& marginals);

/// An entropic OT problem on a point-cloud geometry:
///   min_P <P, C> + epsilon KL(P | a x b) subject to the marginal policy.
///
/// a (n), b (m): non-negative finite weights with positive total mass; empty means uniform
/// (1/n, 1/m). Zero weights are allowed. Balanced problems need equal masses (relative 1e-5).
/// The weights are borrowed until the solver returns (the solution keeps its own copy).
/// epsilon > 0 in cost units (GeomLoss's blur^2) is the regularisation of the answer; an
/// annealing schedule may pass through larger values on the way. Source: [flashsinkhorn2026]
/// §1, [feydy2019] §3.
template <class T>
struct OtProblem {
  PointCloud<T> geometry;
  std::span<const T> a;
  std::span<const T> b;
  double epsilon = 0.0025;
  Marginals marginals = Balanced{};
};

/// Diagonal of the bounding box of the points that carry weight (a zero weight changes no
/// value, so it must not move the epsilon schedule either); the geometry's diameter when every
/// weight is positive.
template <class T>
double support_diameter(const OtProblem<T>& problem);

/// The largest magnitude (cost units) of the terms the kernels add up in a logit: the cost's
/// bound at R_x + R_y, the largest distances of the weighted features from the centre the
/// geometry subtracted. The rounding floors of the arithmetic scale with it; it is at most the
/// cost's bound at the bounding-box diagonal, and far below it for high-dimensional data (the
/// box's diagonal grows with d faster than the clouds' radii).
template <class T>
double logit_scale(const OtProblem<T>& problem);

/// Checks a problem; throws birkhoff::InvalidInput naming the argument (`geometry`, `a`, `b`,
/// `reach_a`, `reach_b`, `mass`, `epsilon`). Every entry point calls it first, so C++, the CLI and
/// Python report the same errors. Epsilon must also be resolvable in T: above ~2^-18 L in
/// float32 and 2^-47 L in float64, L = logit_scale(problem). sinkhorn() and
/// sinkhorn_divergence() solve a float32 problem below the float32 limit in float64 instead.
template <class T>
void validate(const OtProblem<T>& problem);

}  // namespace birkhoff::transport
