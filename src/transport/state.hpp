// PRIVATE: what a solution holds. Built once by the solver; every product reads it as is.
#pragma once

#include <vector>

#include "birkhoff/core/system.hpp"
#include "birkhoff/transport/solution.hpp"
#include "transport/backend.hpp"
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
  // The passes every product of the solution reads the plan through: those of the backend
  // that solved when it keeps them (the multiscale backend's block-sparse passes, in the
  // caller's order), else the dense backend's over this state's sides (attach once the weights
  // and the geometry are in place). Every rank of a distributed run holds all points, so its
  // products are dense and local.
  std::shared_ptr<Passes<T>> plan;
  // A float32 problem solved in float64: its products (marginals, map, gradients, plan
  // products) are those of this float64 solution, rounded; its own potentials are rounded to
  // float32 and at small epsilon no longer resolve the plan. Null otherwise.
  std::shared_ptr<const Solution<double>> wide;
  void attach_plan() {
    plan = dense_backend<T>().passes(x(), y(), kappa(), resolve_threads(num_threads));
  }

  Side<T> x() const { return x_side(geometry, a); }
  Side<T> y() const { return y_side(geometry, b); }
  double kappa() const { return geometry.cost()->kappa(); }
};

/// What a solve found, in standard form: the potentials (the *_grad ones may be empty), the
/// report and partial OT's multiplier.
template <class T>
struct Found {
  std::vector<T> f, g, f_grad, g_grad;
  SinkhornReport report;
  double multiplier = 0;
};

/// The one builder of a solution: the problem's side (geometry, marginals, weights), what was
/// found, the shifted potentials derived once and the plan attached (`plan`, in the caller's
/// order, or the dense passes when null).
template <class T>
Solution<T> make_solution(const PointCloud<T>& geometry, const Marginals& marginals, Weights<T> a,
                          Weights<T> b, int num_threads, Found<T> found,
                          std::shared_ptr<Passes<T>> plan = nullptr,
                          std::shared_ptr<const Solution<double>> wide = nullptr) {
  auto s = std::make_shared<SolutionState<T>>();
  s->geometry = geometry;
  s->marginals = marginals;
  s->num_threads = num_threads;
  s->a = std::move(a);
  s->b = std::move(b);
  s->f = std::move(found.f);
  s->g = std::move(found.g);
  s->f_grad = std::move(found.f_grad);
  s->g_grad = std::move(found.g_grad);
  s->f_hat = shifted<T>(s->f, geometry.x_sqnorm().data());
  s->g_hat = shifted<T>(s->g, geometry.y_sqnorm().data());
  s->report = std::move(found.report);
  s->multiplier = found.multiplier;
  s->plan = std::move(plan);
  s->wide = std::move(wide);
  if (!s->plan) s->attach_plan();
  return Solution<T>(std::move(s));
}

template <class T>
struct DivergenceState {
  Solution<T> xy;
  std::vector<T> f_aa, g_bb, f_aa_grad, g_bb_grad;
  double loss = 0;
  std::shared_ptr<const DivergenceSolution<double>> wide;  // as SolutionState::wide
};

}  // namespace birkhoff::transport::detail
