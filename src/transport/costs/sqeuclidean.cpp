// scale |x - y|^2: the dot-product form on the centred points themselves.
#include <cmath>
#include <optional>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/cost.hpp"

namespace birkhoff::transport::costs {
namespace {

class SqEuclidean final : public GroundCost {
 public:
  explicit SqEuclidean(double scale) : scale_(scale) {}
  std::string name() const override { return "sqeuclidean"; }
  CostForm form() const override { return CostForm::DotProduct; }
  double kappa() const override { return 2.0 * scale_; }
  double exponent() const override { return 2.0; }
  bool box_bound() const override { return true; }
  bool second_order() const override { return true; }

 private:
  double scale_;
};

}  // namespace

std::shared_ptr<const GroundCost> make_sqeuclidean(std::optional<double> p, double scale) {
  require(!p || *p == 2, "p",
          "the sqeuclidean cost is scale |x - y|^2; for |x - y|^p use cost euclidean with p");
  require(std::isfinite(scale) && scale > 0, "scale", "must be finite and > 0");
  return std::make_shared<SqEuclidean>(scale);
}

}  // namespace birkhoff::transport::costs
