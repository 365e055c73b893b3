// PRIVATE: the Sinkhorn loop shared by sinkhorn() and sinkhorn_divergence().
#pragma once

#include <vector>

#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/marginals.hpp"
#include "transport/streams.hpp"

namespace birkhoff::transport::detail {

template <class T>
class Solver {
 public:
  Solver(const OtProblem<T>& problem, const SinkhornOptions& options, bool debias);
  void run();
  /// Moves the potentials out: call once, after run().
  Solution<T> result();
  DivergenceSolution<T> divergence();

 private:
  void sweep(double eps, double w, bool alternating);
  double change_since(const std::vector<std::vector<T>>& snapshot) const;
  SinkhornReport report() const;
  double label_transport_cost() const;

  PointCloud<T> geometry_;
  Marginals marginals_;
  MarginalPolicy policy_;
  SinkhornOptions options_;
  bool debias_;
  double kappa_ = 2;
  int threads_ = 1;
  Weights<T> a_, b_;
  Side<T> x_, y_;
  std::vector<double> eps_;
  std::int64_t repeats_ = 1;  // how many times the last epsilon of eps_ is used
  // Shifted potentials (f - alpha, g - beta); the *_grad_ copies are the pre-extrapolation ones.
  std::vector<T> fh_, gh_, fah_, gbh_;
  std::vector<T> fh_grad_, gh_grad_, fah_grad_, gbh_grad_;
  std::vector<T> cand_f_, cand_g_;
  mutable LseOut<T> scratch_;
  double epsilon_ = 0;
  int iterations_ = 0;
  bool stopped_early_ = false;
  std::vector<double> errors_;
};

}  // namespace birkhoff::transport::detail
