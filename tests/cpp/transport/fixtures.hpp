#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "birkhoff/transport/sinkhorn.hpp"
#include "birkhoff/transport/solution.hpp"

namespace birkhoff::transport::testing {

/// Solver options plus the blur of the problem they are used with (epsilon = blur^2).
struct Settings : SinkhornOptions {
  double blur = 0.05;
};

/// A problem on borrowed points: its geometry, weights, epsilon = blur^2 and marginals.
template <class T>
OtProblem<T> make_problem(const std::vector<T>& x, std::int64_t n, const std::vector<T>& y,
                          std::int64_t m, std::int64_t d, double blur = 0.05,
                          Cost cost = Cost::sqeuclidean()) {
  OtProblem<T> p;
  p.geometry = PointCloud<T>({x.data(), n, d}, {y.data(), m, d}, cost);
  p.epsilon = blur * blur;
  return p;
}

template <class T>
std::vector<T> to_vector(std::span<const T> v) {
  return {v.begin(), v.end()};
}

/// A random problem that owns its arrays: x ~ N(0, I), y ~ N(shift, I), weights U(0.1, 1.1)
/// normalised to unit mass (or uniform when `uniform`), optionally with some zero weights.
template <class T>
struct Instance {
  std::int64_t n, m, d;
  std::vector<T> x, y, a, b;
  Cost cost = Cost::sqeuclidean();
  std::optional<double> reach_a, reach_b;

  Instance(std::int64_t n_, std::int64_t m_, std::int64_t d_, unsigned seed, bool uniform = false,
           bool zeros = false, double shift = 0.5)
      : n(n_), m(m_), d(d_) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> unif(0.1, 1.1);
    for (std::int64_t i = 0; i < n * d; ++i) x.push_back(static_cast<T>(normal(rng)));
    for (std::int64_t i = 0; i < m * d; ++i) y.push_back(static_cast<T>(normal(rng) + shift));
    if (!uniform) {
      a = weights(n, rng, unif, zeros);
      b = weights(m, rng, unif, zeros);
    }
  }

  static std::vector<T> weights(std::int64_t k, std::mt19937& rng,
                                std::uniform_real_distribution<double>& unif, bool zeros) {
    std::vector<double> w(static_cast<std::size_t>(k));
    double s = 0;
    for (std::int64_t i = 0; i < k; ++i) {
      w[static_cast<std::size_t>(i)] = (zeros && i % 5 == 2) ? 0.0 : unif(rng);
      s += w[static_cast<std::size_t>(i)];
    }
    std::vector<T> out;
    for (double v : w) out.push_back(static_cast<T>(v / s));
    return out;
  }

  OtProblem<T> problem(double blur = 0.05) const {
    OtProblem<T> p = make_problem(x, n, y, m, d, blur, cost);
    p.a = a;
    p.b = b;
    p.marginals = marginals_from_reach(reach_a, reach_b);
    return p;
  }
};

inline double max_diff_up_to_constant(const std::vector<double>& u, const std::vector<double>& v) {
  double shift = 0;
  for (std::size_t i = 0; i < u.size(); ++i) shift += u[i] - v[i];
  shift /= static_cast<double>(u.size());
  double e = 0;
  for (std::size_t i = 0; i < u.size(); ++i) e = std::max(e, std::abs(u[i] - v[i] - shift));
  return e;
}

template <class T>
std::vector<double> as_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

/// The same solve on the dense and on the multiscale backend: {dense, multiscale}.
template <class Solve>
auto on_both_backends(SinkhornOptions o, Solve solve) {
  o.backend = Backend::Dense;
  auto dense = solve(o);
  o.backend = Backend::Multiscale;
  return std::pair{std::move(dense), solve(o)};
}

/// The largest |u_i - v_i|.
inline double max_abs_diff(std::span<const double> u, std::span<const double> v) {
  double e = 0;
  for (std::size_t i = 0; i < u.size(); ++i) e = std::max(e, std::abs(u[i] - v[i]));
  return e;
}

/// The largest |u_i|.
inline double max_abs(std::span<const double> u) {
  double e = 0;
  for (double v : u) e = std::max(e, std::abs(v));
  return e;
}

}  // namespace birkhoff::transport::testing
