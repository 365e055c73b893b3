// 1 - <x, y> / (|x| |y|): half the squared distance between the unit vectors x / |x| and
// y / |y|, so the dot-product form on normalised features, and the chain rule of the
// normalisation takes the gradient back to the points.
#include <cmath>
#include <optional>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/cost.hpp"

namespace birkhoff::transport::costs {
namespace {

class Cosine final : public GroundCost {
 public:
  std::string name() const override { return "cosine"; }
  CostForm form() const override { return CostForm::DotProduct; }
  double kappa() const override { return 1.0; }
  double exponent() const override { return 2.0; }
  bool identity_features() const override { return false; }

  double feature(std::span<double> point, const char* name, std::int64_t row) const override {
    double s = 0;
    for (double v : point) s += v * v;
    const double norm = std::sqrt(s);
    require(norm > 0, name,
            "row " + std::to_string(row) + " is the zero vector: the cosine cost is undefined");
    for (double& v : point) v /= norm;
    return norm;
  }

  // u = x / |x|: J^T g = (g - <u, g> u) / |x|.
  void pullback(std::span<const double> u, double norm, std::span<double> grad) const override {
    double dot = 0;
    for (std::size_t k = 0; k < u.size(); ++k) dot += u[k] * grad[k];
    for (std::size_t k = 0; k < u.size(); ++k) grad[k] = (grad[k] - dot * u[k]) / norm;
  }
};

}  // namespace

std::shared_ptr<const GroundCost> make_cosine(std::optional<double> p, double scale) {
  require(!p, "p", "the cosine cost takes no p");
  require(scale == 1, "scale", "only the sqeuclidean cost takes a scale");
  return std::make_shared<Cosine>();
}

}  // namespace birkhoff::transport::costs
