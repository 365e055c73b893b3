#include "birkhoff/transport/cost.hpp"

#include <cmath>

namespace birkhoff::transport {

double GroundCost::feature(std::span<double>, const char*, std::int64_t) const { return 1.0; }

void GroundCost::pullback(std::span<const double>, double, std::span<double>) const {}

double GroundCost::feature_cost(const double* u, const double* v, std::int64_t d) const {
  double s = 0;
  for (std::int64_t k = 0; k < d; ++k) s += (u[k] - v[k]) * (u[k] - v[k]);
  if (form() == CostForm::DotProduct) return 0.5 * kappa() * s;
  return kappa() * std::pow(s, 0.5 * exponent());
}

void GroundCost::feature_gradient(const double* u, const double* v, std::int64_t d,
                                  double* out) const {
  double w = kappa();
  if (form() == CostForm::DistancePower) {
    double s = 0;
    for (std::int64_t k = 0; k < d; ++k) s += (u[k] - v[k]) * (u[k] - v[k]);
    // d/du |u - v|^p = p |u - v|^(p - 2) (u - v); 0 at u = v (its subgradient of least norm).
    w = s > 0 ? kappa() * exponent() * std::pow(s, 0.5 * exponent() - 1.0) : 0.0;
  }
  for (std::int64_t k = 0; k < d; ++k) out[k] = w * (u[k] - v[k]);
}

double GroundCost::bound(double diameter) const {
  if (form() == CostForm::DotProduct) return 0.5 * kappa() * diameter * diameter;
  return kappa() * std::pow(diameter, exponent());
}

Cost::Cost() : Cost(sqeuclidean()) {}

Cost::Cost(std::shared_ptr<const GroundCost> model) : model_(std::move(model)) {}

Cost Cost::sqeuclidean(double scale) { return named("sqeuclidean", {}, scale); }

bool Cost::operator==(const Cost& other) const {
  return model_->name() == other.model_->name() && model_->kappa() == other.model_->kappa() &&
         model_->exponent() == other.model_->exponent();
}

}  // namespace birkhoff::transport
