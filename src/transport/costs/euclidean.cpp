// |x - y|^p for p >= 1 (p = 1: the Euclidean distance, GeomLoss's p = 1 cost): the tile forms
// the squared distances by the dot-product kernel and raises them to p/2.
#include <cmath>
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

std::shared_ptr<const GroundCost> make_euclidean(double p, double scale) {
  if (p == 0) p = 1;
  require(std::isfinite(p) && p >= 1, "p", "the euclidean cost |x - y|^p needs p >= 1");
  require(scale == 1, "scale", "only the sqeuclidean cost takes a scale");
  return std::make_shared<Euclidean>(p);
}

}  // namespace birkhoff::transport::costs
