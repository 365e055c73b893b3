// PRIVATE: what a solution holds. Built once by the solver; every product reads it as is.
#pragma once

#include <vector>

#include "birkhoff/core/system.hpp"
#include "birkhoff/transport/solution.hpp"
#include "transport/marginals.hpp"
#include "transport/passes.hpp"
#include "transport/streams.hpp"

namespace birkhoff::transport::detail {

template <class T>
struct SolutionState {
  PointCloud<T> geometry;
  Marginals marginals;
  Weights<T> a, b;
  std::vector<T> f, g, f_grad, g_grad;  // standard potentials
  std::vector<T> f_hat, g_hat;          // f - alpha, g - beta: what the passes read
  SinkhornReport report;
  int num_threads = 0;
  double multiplier = 0;  // partial OT: the mass multiplier lambda (f holds f + lambda)
  // The passes every product of the solution reads the plan through (its sides point into this
  // state: attach once the weights and the geometry are in place).
  std::shared_ptr<Passes<T>> plan;
  void attach_plan() {
    plan = std::make_shared<DensePasses<T>>(x(), y(), kappa(), resolve_threads(num_threads));
  }

  Side<T> x() const { return x_side(geometry, a); }
  Side<T> y() const { return y_side(geometry, b); }
  double kappa() const { return geometry.cost()->kappa(); }
};

template <class T>
struct DivergenceState {
  Solution<T> xy;
  std::vector<T> f_aa, g_bb, f_aa_grad, g_bb_grad;
  double loss = 0;
};

}  // namespace birkhoff::transport::detail
