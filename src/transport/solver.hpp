// PRIVATE: the Sinkhorn loop shared by sinkhorn() and sinkhorn_divergence().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/backend.hpp"
#include "transport/marginals.hpp"
#include "transport/passes.hpp"
#include "transport/streams.hpp"

namespace birkhoff::transport::detail {

/// The marginal error that rounding the logits to T leaves at the problem's epsilon.
template <class T>
double precision_floor(const OtProblem<T>& problem);

template <class T>
class Solver {
 public:
  /// The passes of `backend` visit the pairs.
  Solver(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias,
         const RowBackend<T>& backend);
  /// `passes` (borrowed, over the problem's sides) visit the pairs.
  Solver(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias,
         Passes<T>& passes);
  /// Starts from these standard potentials (n), (m) instead of zero.
  void warm_start(std::span<const T> f, std::span<const T> g);
  /// Starts the divergence's self potentials from these standard ones (n), (m) instead of
  /// the cross potentials.
  void warm_start_self(std::span<const T> f_aa, std::span<const T> g_bb);
  void run();
  /// The report of the current potentials (the plan statistics cost two passes).
  SinkhornReport report() const;
  /// Why this backend was chosen (copied into the report).
  std::string backend_reason;
  /// Moves the potentials out: call once, after run().
  Solution<T> result();
  DivergenceSolution<T> divergence();

 private:
  Solver(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias,
         const RowBackend<T>* backend, Passes<T>* passes);
  void run_geomloss();
  /// The row pass of <P, C> for the distance-power form (LseOut values: one per row).
  void power_cost_pass(LseOut<T>& out) const;
  void run_converge();
  void sweep(double eps, double w, bool alternating);
  /// One Gauss-Seidel iteration (f, then g, then the self terms) with relaxation w; returns
  /// the marginal error estimate read off the candidates.
  double alternating_iteration(double eps, double w);
  void progress(std::int64_t done, std::int64_t total, double eps, double error) const;
  double change_since(const std::vector<std::vector<T>>& snapshot) const;
  double label_transport_cost() const;
  /// The marginal error the divergence's value needs: its three terms are each off by about
  /// epsilon (marginal error) mass, and at a blur far above the data's scale the value is far
  /// below them; marginal_tol elsewhere.
  double value_tolerance(double transport_cost) const;

  PointCloud<T> geometry_;
  Marginals marginals_;
  MarginalPolicy policy_;
  SinkhornOptions options_;
  bool debias_;
  double kappa_ = 2;
  int threads_ = 1;
  Weights<T> a_, b_;
  Side<T> x_, y_;
  std::unique_ptr<Passes<T>> owned_;
  Passes<T>* passes_ = nullptr;
  bool warm_ = false;
  std::vector<double> eps_;
  std::int64_t repeats_ = 1;  // how many times the last epsilon of eps_ is used
  // Shifted potentials (f - alpha, g - beta); the *_grad_ copies are the pre-extrapolation ones.
  std::vector<T> fh_, gh_, fah_, gbh_;
  std::vector<T> fh_grad_, gh_grad_, fah_grad_, gbh_grad_;
  std::vector<T> cand_f_, cand_g_;
  // Partial OT: the mass multiplier, folded into the row potential (f_standard = f + lambda).
  double lambda_ = 0;
  mutable LseOut<T> scratch_;
  double epsilon_ = 0;
  int iterations_ = 0;
  bool stopped_early_ = false;
  bool budget_exhausted_ = false;
  bool stalled_ = false;
  double precision_floor_ = 0;  // the marginal error that rounding to T leaves
  bool geomloss_ = true;
  std::vector<double> errors_, marginal_errors_;
  std::vector<LevelReport> levels_;
};

/// sinkhorn() and sinkhorn_divergence() on the backends of `registry` (validation, the
/// working precision, the choice of backend).
template <class T>
Solution<T> sinkhorn_with(const OtProblem<T>& problem, const SinkhornOptions& options,
                          const Registry& registry);
template <class T>
DivergenceSolution<T> sinkhorn_divergence_with(const OtProblem<T>& problem,
                                               const SinkhornOptions& options,
                                               const Registry& registry);

}  // namespace birkhoff::transport::detail
