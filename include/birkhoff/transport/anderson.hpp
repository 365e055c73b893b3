#pragma once

#include <cstdint>
#include <vector>

namespace birkhoff::transport {

/// Anderson acceleration (type II, [walker2011anderson]) of a fixed-point iteration x <- T(x) on
/// R^n with a window of `memory` past differences: the next iterate is T(x) minus the combination
/// of past T-differences that best cancels the residual T(x) - x in least squares. memory 0 is
/// the plain iteration. Used at the final epsilon of sinkhorn() (Acceleration::Anderson) and by
/// the alignment's Sinkhorn balancing. Memory O(memory n); a step costs O(memory n + memory^3).
class Anderson {
 public:
  Anderson(std::int64_t n, std::int64_t memory);
  /// Given the iterate x (n) and t = T(x) (n), writes the next iterate into x. Falls back to
  /// x = t (and forgets the window) when the least-squares system is singular.
  void step(std::vector<double>& x, const std::vector<double>& t);
  /// Forgets the window (the next step is plain).
  void reset();

 private:
  /// dots_[q] = <x, dr_q> for the q < count_ stored differences.
  void dot_rows(const double* x);

  std::int64_t n_, memory_;
  std::int64_t count_ = 0, head_ = 0;
  bool has_last_ = false;
  std::vector<double> dr_, dt_;  // memory x n differences of residuals and of T
  std::vector<double> gram_;     // memory x memory, <dr_p, dr_q>
  std::vector<double> chol_;     // its Cholesky factor (k x k of it used), scratch
  std::vector<double> dots_;     // memory, dot_rows() output and the solve's right-hand side
  std::vector<double> last_r_, last_t_, r_;
};

}  // namespace birkhoff::transport
