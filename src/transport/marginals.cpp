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
    // The level mu is the row cap (rows) or the shift of the columns against the row
    // potential's coming shift (columns); see level().
    const double cap = axis == Axis::X ? multiplier : 0.0;
    const double shift = axis == Axis::X ? 0.0 : multiplier;
    for (std::size_t i = 0; i < h.size(); ++i)
      h[i] = static_cast<T>(
          std::min(cap - offset[i],
                   (1.0 - w) * (h[i] - shift) + w * (static_cast<double>(candidate[i]) - shift)));
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
    for (std::size_t i = 0; i < h.size(); ++i) {
      const double w = weights[i];
      if (!(w > 0)) continue;
      const double r = w * std::exp((static_cast<double>(h[i]) - candidate[i]) / eps);
      const double t = w * std::exp(std::min(0.0, (multiplier - offset[i] - candidate[i]) / eps));
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
double MarginalPolicy::level(const std::vector<T>& candidate, const T* offset, const T* weights,
                             double eps) const {
  if (!mass_) return 0.0;
  // phi(mu) = sum_k w_k min(1, exp((mu - c_k) / eps)) is continuous and increasing: on
  // [c_(k-1), c_(k)) (sorted) it is W_k + exp(mu / eps + L_k), W_k the weight below and L_k
  // the log-sum-exp of log w_i - c_i / eps above, so each piece is solved in closed form.
  std::vector<std::pair<double, double>> c;  // (c_k, log w_k)
  c.reserve(candidate.size());
  for (std::size_t k = 0; k < candidate.size(); ++k)
    if (weights[k] > 0)
      c.emplace_back(static_cast<double>(candidate[k]) + offset[k],
                     std::log(static_cast<double>(weights[k])));
  std::sort(c.begin(), c.end());
  const std::size_t n = c.size();
  std::vector<double> suffix(n + 1, -std::numeric_limits<double>::infinity());
  for (std::size_t k = n; k-- > 0;) {
    const double v = c[k].second - c[k].first / eps, u = suffix[k + 1];
    const double hi = std::max(u, v);
    suffix[k] = hi + std::log1p(std::exp(std::min(u, v) - hi));
  }
  double below = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (*mass_ > below) {
      const double mu = eps * (std::log(*mass_ - below) - suffix[k]);
      if (mu <= c[k].first) return mu;
    }
    below += std::exp(c[k].second);
  }
  return c.back().first;  // the mass is everything: every point saturated
}

void MarginalPolicy::check_divergence() const {
  require(!mass_, "mass",
          "partial OT has no debiased divergence: use sinkhorn (the self terms would move all "
          "the mass of each side)");
}

template <class T>
double MarginalPolicy::after_update(Axis axis, std::vector<T>& rows, double lambda,
                                    double mu) const {
  if (!mass_) return lambda;
  if (axis == Axis::X) return mu;
  for (auto& v : rows) v = static_cast<T>(v + mu);
  return lambda + mu;
}

void MarginalCheck::add(Axis axis, double w, double mass, double h) {
  const auto k = static_cast<std::size_t>(axis);
  if (axis == Axis::X) total_ += mass;
  if (policy_.mass_) {
    if (w > 0) {
      const double cap = policy_.cap(axis, lambda_);
      err_[k] += std::abs(mass - std::min(w, mass * std::exp((cap - h) / eps_)));
    }
  } else if (policy_.hard(axis)) {
    err_[k] += std::abs(mass - w);
  } else if (w > 0) {
    const double t = policy_.target_mass(axis, w, h);
    err_[k] += std::abs(mass - t);
    target_[k] += t;
  }
}

double MarginalCheck::error() const {
  if (!std::isfinite(err_[0]) || !std::isfinite(err_[1]))
    return std::numeric_limits<double>::quiet_NaN();
  if (policy_.mass_) {
    const double s = *policy_.mass_;
    return std::max({err_[0] / s, err_[1] / s, std::abs(total_ - s) / s});
  }
  return std::max(err_[0] / (policy_.hard(Axis::X) ? side_mass_[0] : target_[0]),
                  err_[1] / (policy_.hard(Axis::Y) ? side_mass_[1] : target_[1]));
}

#define BIRKHOFF_INSTANTIATE(T)                                                                   \
  template void MarginalPolicy::update(Axis, std::vector<T>&, const std::vector<T>&, const T*,    \
                                       double, double, double) const;                             \
  template double MarginalPolicy::value(std::span<const T>, std::span<const T>,                   \
                                        std::span<const T>, std::span<const T>, double, double)   \
      const;                                                                                      \
  template double MarginalPolicy::level(const std::vector<T>&, const T*, const T*, double) const; \
  template double MarginalPolicy::after_update(Axis, std::vector<T>&, double, double) const;      \
  template void MarginalPolicy::add_weight_gradient(Axis, std::span<const T>, double, double,     \
                                                    std::vector<T>&) const;                       \
  template std::pair<double, double> MarginalPolicy::residual(                                    \
      Axis, const std::vector<T>&, const std::vector<T>&, const T*, const T*, double, double)     \
      const;
BIRKHOFF_INSTANTIATE(float)
BIRKHOFF_INSTANTIATE(double)
#undef BIRKHOFF_INSTANTIATE

}  // namespace detail
}  // namespace birkhoff::transport
