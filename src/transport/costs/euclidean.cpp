// |x - y|^p for p >= 1 (p = 1: the Euclidean distance, GeomLoss's p = 1 cost): the tile forms
// the squared distances by the dot-product kernel and raises them to p/2.
#include <cmath>
#include <optional>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/cost.hpp"

namespace birkhoff::transport::costs {
namespace {

class Euclidean final : public GroundCost {
 public:
  explicit Euclidean(double p) : p_(p) {}
  std::string name() const override { return "euclidean"; }
  CostForm form() const override { return CostForm::DistancePower; }
  double kappa() const override { return 1.0; }
  double exponent() const override { return p_; }

 private:
  double p_;
};

}  // namespace

std::shared_ptr<const GroundCost> make_euclidean(std::optional<double> p, double scale) {
  const double power = p.value_or(1.0);
  require(std::isfinite(power) && power >= 1, "p",
          "the euclidean cost |x - y|^p needs p >= 1, got " + std::to_string(power));
  require(scale == 1, "scale", "only the sqeuclidean cost takes a scale");
  return std::make_shared<Euclidean>(power);
}

}  // namespace birkhoff::transport::costs
