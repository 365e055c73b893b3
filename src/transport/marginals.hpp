// PRIVATE: the arithmetic of each marginal policy, in one place. The solver, the value, the
// gradients and the plan statistics ask this class, never the policy type, so a new policy
// (partial OT) is added here and in include/birkhoff/transport/problem.hpp only.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "birkhoff/transport/problem.hpp"

namespace birkhoff::transport::detail {

/// Which side of the problem: the rows (x, a, f) or the columns (y, b, g).
enum class Axis { X = 0, Y = 1 };

class MarginalPolicy {
 public:
  explicit MarginalPolicy(const Marginals& marginals);

  /// The policy of the self problem OT(w, w) of one side (both of its sides relax alike).
  MarginalPolicy self(Axis axis) const;

  /// True when the side's marginal is a hard constraint (it counts in marginal_error).
  bool hard(Axis axis) const;

  /// The transported mass of partial OT; unset for the other policies.
  std::optional<double> partial_mass() const { return mass_; }

  /// Whether each update is the exact maximiser of the dual over one side's potential and a
  /// multiplier (partial OT): the solver then runs them alternating, unrelaxed and unmixed.
  bool exact_blocks() const { return mass_.has_value(); }

  /// Throws InvalidInput (naming `mass`) when the policy has no debiased divergence.
  void check_divergence() const;

  /// Partial OT keeps the potentials f + lambda (rows) and g (columns), f, g <= 0 the
  /// multipliers of P1 <= a, P^T 1 <= b and lambda the one of the mass: the cap of a side's
  /// standard potential, lambda for X and 0 for Y (+inf for the other policies).
  double cap(Axis axis, double lambda) const;

  /// The averaged update of a shifted potential h (= standard - offset) from its soft
  /// c-transform candidate (same form): h <- (1 - w) h + w target, where target is the
  /// candidate itself for a hard side and its damped version lambda cand - (1 - lambda) offset,
  /// lambda = 1 / (1 + eps / rho), for a relaxed one ([sejourne2019]; [flashsinkhorn2026]
  /// §2.5: the offset term makes the damping act on the standard potential).
  /// Partial OT: `multiplier` is the level mu of level(): rows h <- min(mu - offset, cand),
  /// columns h <- min(-offset, cand - mu) (the row potential then shifts by mu). Each is the
  /// exact maximiser of the dual over one side's potential and the mass multiplier jointly
  /// (docs/partial.md); w is not used.
  template <class T>
  void update(Axis axis, std::vector<T>& h, const std::vector<T>& candidate, const T* offset,
              double eps, double w, double multiplier = 0) const;

  /// Partial OT: the mu with sum_k w_k min(1, exp((mu - c_k) / eps)) = mass, c the standard
  /// candidate (candidate + offset) of a side: the new row cap lambda (rows) or the shift of
  /// lambda (columns) that makes the plan carry the mass with that side feasible. 0 for the
  /// other policies (they have no level).
  template <class T>
  double level(const std::vector<T>& candidate, const T* offset, const T* weights,
               double eps) const;

  /// The mass multiplier after a side's update with level mu, the row potential `rows` moved
  /// with it: partial OT sets lambda = mu after the rows' update and, after the columns',
  /// shifts the rows by mu and adds it to lambda. The other policies keep both as they are.
  template <class T>
  double after_update(Axis axis, std::vector<T>& rows, double lambda, double mu) const;

  /// The value of standard potentials f, g with weights wa, wb (GeomLoss's formula,
  /// [flashsinkhorn2026] §1.4, §4.3): a hard side contributes <w, h>; a relaxed side (rho +
  /// eps/2 if the other side is relaxed too, else rho) <w, 1 - exp(-h/rho)>.
  /// Partial OT: <a, f - lambda> + <b, g> + lambda mass, the primal <P, C> + eps sum P log(P /
  /// (a x b)) at the optimum (complementary slackness).
  template <class T>
  double value(std::span<const T> f, std::span<const T> g, std::span<const T> wa,
               std::span<const T> wb, double eps, double multiplier = 0) const;

  /// d value / d w_i at the optimum (envelope theorem): h_i on a hard side; on a relaxed
  /// side rho (1 - e) - eps e, plus eps/2 when the other side is relaxed too, e = exp(-h_i/rho).
  template <class T>
  void add_weight_gradient(Axis axis, std::span<const T> h, double eps, double factor,
                           std::vector<T>& out) const;

  /// The marginal the optimum has on a side, for a point of weight w and standard potential h:
  /// w on a hard side, w exp(-h / rho) on a relaxed one (the target of marginal_error and the
  /// row mass of the point gradient).
  double target_mass(Axis axis, double w, double h) const;

  /// The side's marginal error of the plan built from the potential h before an update, read
  /// off its candidate: the plan's marginal there is r_i = w_i exp((h_i - cand_i) / eps) (both
  /// shifted alike). Returns {sum_i |r_i - t_i|, sum_i t_i}, t = target_mass.
  /// Partial OT: t_i is the marginal the update with level mu = multiplier would give,
  /// w_i min(1, exp((mu - offset_i - cand_i) / eps)): zero exactly at the fixed point.
  template <class T>
  std::pair<double, double> residual(Axis axis, const std::vector<T>& h,
                                     const std::vector<T>& candidate, const T* offset,
                                     const T* weights, double eps, double multiplier = 0) const;

  /// 1 / lambda = 1 + eps / rho on a relaxed side, 1 on a hard one: the factor by which the
  /// side's block of the dual Hessian exceeds its plan marginal ([flashsinkhorn2026] §7.2).
  double inverse_damping(Axis axis, double eps) const;

 private:
  friend class MarginalCheck;
  MarginalPolicy() = default;
  std::array<std::optional<double>, 2> reach_{};
  std::optional<double> mass_;
};

/// The relative marginal error of a plan (the report's marginal_error), point by point: add()
/// each point's plan marginal with its weight and standard potential, then error(). A hard
/// side counts |mass - w| over every point and is normalised by the side's mass; a relaxed side
/// counts the points with weight against target_mass(); partial OT counts each point with
/// weight against the marginal its capped update gives, min(w, mass exp((cap - h) / eps)), and
/// the plan's total against the mass.
class MarginalCheck {
 public:
  MarginalCheck(const MarginalPolicy& policy, double lambda, double eps, double mass_x,
                double mass_y)
      : policy_(policy), lambda_(lambda), eps_(eps), side_mass_{mass_x, mass_y} {}
  void add(Axis axis, double w, double mass, double h);
  /// The relative error; NaN when any term was not finite.
  double error() const;

 private:
  const MarginalPolicy& policy_;
  double lambda_, eps_;
  std::array<double, 2> side_mass_, err_{}, target_{};
  double total_ = 0;  // the plan's mass, summed over the rows
};

}  // namespace birkhoff::transport::detail
