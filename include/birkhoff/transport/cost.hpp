#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace birkhoff::transport {

/// How the kernels form a tile of costs from the prepared features u_i (of x) and v_j (of y).
enum class CostForm {
  /// C_ij = alpha_i + beta_j - kappa <u_i, v_j> with alpha_i = kappa/2 |u_i|^2 and
  /// beta_j = kappa/2 |v_j|^2: the row and column terms fold into the potentials, a tile is a
  /// scaled matrix product (FlashSinkhorn's form, [flashsinkhorn2026] §2.1).
  DotProduct,
  /// C_ij = kappa |u_i - v_j|^p: the tile forms the squared distances from the same matrix
  /// product and raises them to p/2 before the exponential.
  DistancePower,
};

/// A ground cost c(x, y) between points of R^d, as the engine uses it: a feature map
/// x -> u (identity, or a normalisation), a tile form over the features, and the chain rule
/// back to the points. Every feature space cost is translation invariant, so the features are
/// centred on the joint bounding box (float cancellation, not the answer, depends on that).
///
/// A new cost is one subclass in src/transport/costs/ and one line in its registry
/// (costs/registry.cpp); see docs/architecture.md.
class GroundCost {
 public:
  virtual ~GroundCost() = default;
  /// The name every front end uses ("sqeuclidean", "euclidean", "cosine").
  virtual std::string name() const = 0;
  virtual CostForm form() const = 0;
  /// kappa of the form (DotProduct: twice the factor of |u - v|^2; DistancePower: the factor).
  virtual double kappa() const = 0;
  /// p: the cost grows as distance^p, so epsilon = blur^p (GeomLoss's convention) and the
  /// annealing starts at diameter^p. DistancePower raises the distance to this power.
  virtual double exponent() const = 0;
  /// Maps one point to its feature in place (length d) and returns its scale for pullback
  /// (the identity returns 1). Throws birkhoff::InvalidInput (naming `name`, the row) for a
  /// point the cost is not defined at.
  virtual double feature(std::span<double> point, const char* name, std::int64_t row) const;
  /// Whether feature() is the identity (then the features are the points).
  virtual bool identity_features() const { return true; }
  /// grad_x = J(x)^T grad_u in place: the chain rule through feature() at the point whose
  /// feature is `feature` (uncentred) and scale `scale`. The identity leaves grad as is.
  virtual void pullback(std::span<const double> feature, double scale,
                        std::span<double> grad) const;
  /// C(u, v) between two features (the dense references and tests).
  double feature_cost(const double* u, const double* v, std::int64_t d) const;
  /// dC/du at (u, v) into out (length d).
  void feature_gradient(const double* u, const double* v, std::int64_t d, double* out) const;
  /// An upper bound of C over features inside a box of diagonal `diameter`.
  double bound(double diameter) const;
  /// Whether the multiscale backend's box-to-box lower bound of kappa/2 |u - v|^2 holds.
  virtual bool box_bound() const { return false; }
  /// Whether the second-order products (HVP) are implemented for this cost.
  virtual bool second_order() const { return false; }
};

/// A ground cost as a value: cheap to copy (the model is shared and immutable).
class Cost {
 public:
  /// |x - y|^2 (the FlashSinkhorn and OTT default).
  Cost();
  explicit Cost(std::shared_ptr<const GroundCost> model);
  /// scale |x - y|^2; scale 1/2 is GeomLoss's p = 2 cost.
  static Cost sqeuclidean(double scale = 1.0);
  /// A cost of the registry by name ("sqeuclidean", "euclidean", "cosine"); `p` is the power
  /// of "euclidean" (|x - y|^p, p >= 1; unset: 1), `scale` the factor of "sqeuclidean".
  /// @throws birkhoff::InvalidInput naming `cost`, `p` (a p the cost does not take, or out of
  /// its range) or `scale`.
  static Cost named(std::string_view name, std::optional<double> p = {}, double scale = 1.0);
  const GroundCost& model() const { return *model_; }
  const GroundCost* operator->() const { return model_.get(); }
  std::string name() const { return model_->name(); }
  /// Same cost and parameters.
  bool operator==(const Cost& other) const;

 private:
  std::shared_ptr<const GroundCost> model_;
};

/// The names of the registry, in its order (for help texts and errors).
std::vector<std::string> cost_names();

}  // namespace birkhoff::transport
