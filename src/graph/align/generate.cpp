#include "birkhoff/graph/align/generate.hpp"

#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "birkhoff/core/error.hpp"

namespace birkhoff::align {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void check_common(std::int64_t n, std::int64_t d, double rho, double r) {
  require(n >= 1, "n", "must be at least 1, got " + std::to_string(n));
  require(d >= 0, "d", "must be non-negative, got " + std::to_string(d));
  require(rho >= 0.0 && rho <= 1.0, "rho", "must be in [0, 1], got " + std::to_string(rho));
  require(r >= 0.0 && r <= 1.0, "r", "must be in [0, 1], got " + std::to_string(r));
}

// Features, their standardisation and the permutation: the common tail of both models.
void features_and_permutation(PlantedInstance& out, const std::vector<double>& b0, double r,
                              bool standardize, Rng& rng) {
  const std::int64_t n = out.n, d = out.d;
  std::vector<double> x(static_cast<std::size_t>(n * d)), y(x.size());
  for (auto& v : x) v = rng.normal();
  const double s = std::sqrt(std::max(0.0, 1.0 - r * r));
  for (std::size_t k = 0; k < y.size(); ++k) y[k] = r * x[k] + s * rng.normal();
  if (standardize && n > 1) {
    for (auto* m : {&x, &y}) {
      for (std::int64_t c = 0; c < d; ++c) {
        double mean = 0;
        for (std::int64_t i = 0; i < n; ++i) mean += (*m)[i * d + c];
        mean /= static_cast<double>(n);
        double var = 0;
        for (std::int64_t i = 0; i < n; ++i) var += std::pow((*m)[i * d + c] - mean, 2);
        const double sd = std::sqrt(var / static_cast<double>(n - 1)) + 1e-8;
        for (std::int64_t i = 0; i < n; ++i) (*m)[i * d + c] = ((*m)[i * d + c] - mean) / sd;
      }
    }
  }
  out.perm.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out.perm[i] = i;
  for (std::int64_t i = n - 1; i >= 1; --i) {
    const auto j = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(i) + 1));
    std::swap(out.perm[i], out.perm[j]);
  }
  out.x1.resize(x.size());
  out.x2.resize(y.size());
  for (std::size_t k = 0; k < x.size(); ++k) out.x1[k] = static_cast<float>(x[k]);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t c = 0; c < d; ++c) {
      out.x2[out.perm[i] * d + c] = static_cast<float>(y[i * d + c]);
    }
  }
  out.b.assign(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t pi = out.perm[i];
    for (std::int64_t j = 0; j < n; ++j) out.b[pi * n + out.perm[j]] = b0[i * n + j];
  }
}

}  // namespace

Rng::Rng(std::uint64_t seed) {
  std::uint64_t state = seed;
  for (auto& w : s_) w = splitmix64(state);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  spare_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

std::uint64_t Rng::below(std::uint64_t bound) {
  // High 64 bits of the 128-bit product next() * bound, in portable 32-bit pieces.
  const std::uint64_t x = next();
  const std::uint64_t x_lo = x & 0xffffffffULL, x_hi = x >> 32;
  const std::uint64_t b_lo = bound & 0xffffffffULL, b_hi = bound >> 32;
  const std::uint64_t lo_lo = x_lo * b_lo, hi_lo = x_hi * b_lo, lo_hi = x_lo * b_hi;
  const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffULL) + lo_hi;
  return x_hi * b_hi + (hi_lo >> 32) + (cross >> 32);
}

PlantedInstance correlated_wigner(std::int64_t n, std::int64_t d, double rho, double r,
                                  std::uint64_t seed, bool standardize_features) {
  check_common(n, d, rho, r);
  PlantedInstance out;
  out.n = n;
  out.d = d;
  Rng rng(seed);
  out.a.assign(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i + 1; j < n; ++j) {
      out.a[i * n + j] = out.a[j * n + i] = rng.normal();
    }
  }
  std::vector<double> b0(out.a.size(), 0.0);
  const double s = std::sqrt(std::max(0.0, 1.0 - rho * rho));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i + 1; j < n; ++j) {
      b0[i * n + j] = b0[j * n + i] = rho * out.a[i * n + j] + s * rng.normal();
    }
  }
  features_and_permutation(out, b0, r, standardize_features, rng);
  return out;
}

PlantedInstance correlated_erdos_renyi(std::int64_t n, std::int64_t d, double rho, double r,
                                       double p, std::uint64_t seed, bool standardize_features) {
  check_common(n, d, rho, r);
  require(p > 0.0 && p < 1.0, "p", "must be in (0, 1), got " + std::to_string(p));
  PlantedInstance out;
  out.n = n;
  out.d = d;
  Rng rng(seed);
  const double q = p * (1.0 - p);
  const double p11 = p * p + rho * q, p10 = (1.0 - rho) * q;
  out.a.assign(static_cast<std::size_t>(n * n), 0.0);
  std::vector<double> b0(out.a.size(), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i + 1; j < n; ++j) {
      const double u = rng.uniform();
      double av = 0, bv = 0;
      if (u < p11) {
        av = bv = 1;
      } else if (u < p11 + p10) {
        av = 1;
      } else if (u < p11 + 2 * p10) {
        bv = 1;
      }
      out.a[i * n + j] = out.a[j * n + i] = av;
      b0[i * n + j] = b0[j * n + i] = bv;
    }
  }
  features_and_permutation(out, b0, r, standardize_features, rng);
  return out;
}

double exact_margin(std::int64_t n, std::int64_t d, double rho, double r) {
  const double nn = static_cast<double>(n);
  return nn * rho * rho + static_cast<double>(d) * std::log(1.0 / (1.0 - r * r)) - 4 * std::log(nn);
}

double partial_margin(std::int64_t n, std::int64_t d, double rho, double r) {
  const double nn = static_cast<double>(n);
  return nn * rho * rho + 2 * static_cast<double>(d) * std::log(1.0 / (1.0 - r * r)) -
         4 * std::log(nn);
}

}  // namespace birkhoff::align
