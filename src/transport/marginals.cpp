#include "transport/marginals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "birkhoff/core/error.hpp"

namespace birkhoff::transport {

Marginals marginals_from_reach(std::optional<double> reach_a, std::optional<double> reach_b) {
  if (!reach_a && !reach_b) return Balanced{};
  return Unbalanced{reach_a, reach_b};
}

std::optional<double> reach_a(const Marginals& marginals) {
  if (const auto* u = std::get_if<Unbalanced>(&marginals)) return u->reach_a;
  return std::nullopt;
}

std::optional<double> reach_b(const Marginals& marginals) {
  if (const auto* u = std::get_if<Unbalanced>(&marginals)) return u->reach_b;
  return std::nullopt;
}

namespace detail {
namespace {

int index(Axis axis) { return static_cast<int>(axis); }

}  // namespace

MarginalPolicy::MarginalPolicy(const Marginals& marginals)
    : reach_{reach_a(marginals), reach_b(marginals)} {
  if (const auto* p = std::get_if<Partial>(&marginals)) mass_ = p->mass;
}

double MarginalPolicy::cap(Axis axis, double lambda) const {
  if (!mass_) return std::numeric_limits<double>::infinity();
  return axis == Axis::X ? lambda : 0.0;
}

MarginalPolicy MarginalPolicy::self(Axis axis) const {
  MarginalPolicy p;
  p.reach_ = {reach_[index(axis)], reach_[index(axis)]};
  p.mass_ = mass_;
  return p;
}

bool MarginalPolicy::hard(Axis axis) const { return !reach_[index(axis)].has_value() && !mass_; }

template <class T>
void MarginalPolicy::update(Axis axis, std::vector<T>& h, const std::vector<T>& candidate,
                            const T* offset, double eps, double w, double multiplier) const {
  if (mass_) {
    const double cap = this->cap(axis, multiplier);
    for (std::size_t i = 0; i < h.size(); ++i) {
      const double target = std::min(static_cast<double>(candidate[i]), cap - offset[i]);
      h[i] = static_cast<T>((1.0 - w) * h[i] + w * target);
    }
    return;
  }
  const auto& reach = reach_[index(axis)];
  const double lambda = reach ? 1.0 / (1.0 + eps / (*reach * *reach)) : 1.0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const double target = lambda * candidate[i] - (1.0 - lambda) * offset[i];
    h[i] = static_cast<T>((1.0 - w) * h[i] + w * target);
  }
}

template <class T>
double MarginalPolicy::value(std::span<const T> f, std::span<const T> g, std::span<const T> wa,
                             std::span<const T> wb, double eps, double multiplier) const {
  if (mass_) {
    double value = multiplier * *mass_;
    for (std::size_t i = 0; i < f.size(); ++i)
      if (wa[i] != 0)
        value += static_cast<double>(wa[i]) * (static_cast<double>(f[i]) - multiplier);
    for (std::size_t j = 0; j < g.size(); ++j)
      if (wb[j] != 0) value += static_cast<double>(wb[j]) * static_cast<double>(g[j]);
    return value;
  }
  // For unit masses this is the dual objective at the optimum; otherwise it differs from the
  // KL-regularised primal by a constant in the masses (docs/transport.md). expm1 keeps a large
  // reach from cancelling.
  const bool both = reach_[0] && reach_[1];
  double value = 0;
  for (int side = 0; side < 2; ++side) {
    const auto& h = side == 0 ? f : g;
    const auto& weights = side == 0 ? wa : wb;
    const auto& reach = reach_[side];
    for (std::size_t i = 0; i < h.size(); ++i) {
      const double w = weights[i];
      if (w == 0) continue;
      if (reach) {
        const double rho = *reach * *reach;
        value +=
            (rho + (both ? 0.5 * eps : 0.0)) * w * -std::expm1(-static_cast<double>(h[i]) / rho);
      } else {
        value += w * static_cast<double>(h[i]);
      }
    }
  }
  return value;
}

template <class T>
void MarginalPolicy::add_weight_gradient(Axis axis, std::span<const T> h, double eps, double factor,
                                         std::vector<T>& out) const {
  const auto& reach = reach_[index(axis)];
  const bool other_relaxed = reach_[1 - index(axis)].has_value();
  for (std::size_t i = 0; i < h.size(); ++i) {
    double v = static_cast<double>(h[i]);
    if (reach) {
      const double rho = *reach * *reach;
      const double x = -static_cast<double>(h[i]) / rho;
      v = -rho * std::expm1(x) - eps * std::exp(x) + (other_relaxed ? 0.5 * eps : 0.0);
    }
    out[i] += static_cast<T>(factor * v);
  }
}

double MarginalPolicy::target_mass(Axis axis, double w, double h) const {
  const auto& reach = reach_[index(axis)];
  return reach ? w * std::exp(-h / (*reach * *reach)) : w;
}

double MarginalPolicy::inverse_damping(Axis axis, double eps) const {
  const auto& reach = reach_[index(axis)];
  return reach ? 1.0 + eps / (*reach * *reach) : 1.0;
}

template <class T>
std::pair<double, double> MarginalPolicy::residual(Axis axis, const std::vector<T>& h,
                                                   const std::vector<T>& candidate, const T* offset,
                                                   const T* weights, double eps,
                                                   double multiplier) const {
  double diff = 0, total = 0;
  if (mass_) {
    const double cap = this->cap(axis, multiplier);
    for (std::size_t i = 0; i < h.size(); ++i) {
      const double w = weights[i];
      if (!(w > 0)) continue;
      const double r = w * std::exp((static_cast<double>(h[i]) - candidate[i]) / eps);
      const double t = std::min(w, w * std::exp((cap - offset[i] - candidate[i]) / eps));
      diff += std::abs(r - t);
      total += t;
    }
    return {diff, total};
  }
  for (std::size_t i = 0; i < h.size(); ++i) {
    const double w = weights[i];
    if (!(w > 0)) continue;
    const double r = w * std::exp((static_cast<double>(h[i]) - candidate[i]) / eps);
    const double t = target_mass(axis, w, static_cast<double>(h[i]) + offset[i]);
    diff += std::abs(r - t);
    total += t;
  }
  return {diff, total};
}

template <class T>
std::pair<double, double> MarginalPolicy::mass_shift(const std::vector<T>& h,
                                                     const std::vector<T>& candidate,
                                                     const T* weights, double eps) const {
  double total = 0;
  for (std::size_t j = 0; j < h.size(); ++j)
    if (weights[j] > 0)
      total += weights[j] * std::exp((static_cast<double>(h[j]) - candidate[j]) / eps);
  return {eps * std::log(*mass_ / total), std::abs(total - *mass_) / *mass_};
}

#define BIRKHOFF_INSTANTIATE(T)                                                                 \
  template void MarginalPolicy::update(Axis, std::vector<T>&, const std::vector<T>&, const T*,  \
                                       double, double, double) const;                           \
  template double MarginalPolicy::value(std::span<const T>, std::span<const T>,                 \
                                        std::span<const T>, std::span<const T>, double, double) \
      const;                                                                                    \
  template std::pair<double, double> MarginalPolicy::mass_shift(                                \
      const std::vector<T>&, const std::vector<T>&, const T*, double) const;                    \
  template void MarginalPolicy::add_weight_gradient(Axis, std::span<const T>, double, double,   \
                                                    std::vector<T>&) const;                     \
  template std::pair<double, double> MarginalPolicy::residual(                                  \
      Axis, const std::vector<T>&, const std::vector<T>&, const T*, const T*, double, double)   \
      const;
BIRKHOFF_INSTANTIATE(float)
BIRKHOFF_INSTANTIATE(double)
#undef BIRKHOFF_INSTANTIATE

}  // namespace detail
}  // namespace birkhoff::transport
