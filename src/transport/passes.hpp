// PRIVATE: how a solver visits the pairs. The dense passes read every pair; the block-sparse
// passes of the multiscale backend (transport/block_sparse.hpp) read the kept block pairs only.
#pragma once

#include <vector>

#include "transport/marginals.hpp"
#include "transport/streams.hpp"

namespace birkhoff::transport::detail {

template <class T>
class Passes {
 public:
  virtual ~Passes() = default;
  /// One streamed reduction (lse_pass) of the rows of side `rows` against the columns of side
  /// `cols`, whose shifted potential is col_hat; row_hat is the rows' current shifted potential
  /// (a block-sparse pass bounds what it skips with both); values (cols, dv) and a factor of
  /// the value weights as lse_pass takes them.
  virtual void lse(Axis rows, Axis cols, const std::vector<T>& row_hat,
                   const std::vector<T>& col_hat, double eps, LseOut<T>& out,
                   const T* values = nullptr, std::int64_t dv = 0,
                   const Modulation<T>& mod = {}) = 0;
  /// The hard c-transform's reduction: out_i = min_j [C_ij - col_hat_j] in shifted form (the
  /// rows' folded terms left out) and its argmin, over every pair.
  virtual void min(Axis rows, Axis cols, const std::vector<T>& col_hat, std::vector<T>& out,
                   std::vector<std::int64_t>& argmin) = 0;
  /// Whether the pairs the latest lse(rows, cols) read would still be the ones to read at
  /// these potentials (always for passes that read every pair).
  virtual bool holds(Axis /*rows*/, Axis /*cols*/, const std::vector<T>& /*row_hat*/,
                     const std::vector<T>& /*col_hat*/, double /*eps*/) const {
    return true;
  }
  /// Pairs read per pass / (n m) by the latest passes.
  virtual double kept_fraction() const { return 1.0; }
  /// Whether the passes without values run in a lower precision than T (block-local float32
  /// logits of the multiscale backend), which tighten() ends for good.
  virtual bool approximate() const { return false; }
  /// While approximate: about the relative marginal error its rounding leaves.
  virtual double rounding_floor() const { return 0; }
  virtual void tighten() {}
};

/// Every pair, streamed in tiles.
template <class T>
class DensePasses final : public Passes<T> {
 public:
  DensePasses(const Side<T>& x, const Side<T>& y, double kappa, int threads)
      : x_(x), y_(y), kappa_(kappa), threads_(threads) {}
  void lse(Axis rows, Axis cols, const std::vector<T>&, const std::vector<T>& col_hat, double eps,
           LseOut<T>& out, const T* values, std::int64_t dv, const Modulation<T>& mod) override {
    lse_pass(side(rows), side(cols), col_hat.data(), eps, kappa_, threads_, out, values, dv, mod);
  }
  void min(Axis rows, Axis cols, const std::vector<T>& col_hat, std::vector<T>& out,
           std::vector<std::int64_t>& argmin) override {
    min_pass(side(rows), side(cols), col_hat.data(), kappa_, threads_, out, argmin);
  }

 private:
  const Side<T>& side(Axis a) const { return a == Axis::X ? x_ : y_; }
  Side<T> x_, y_;
  double kappa_;
  int threads_;
};

/// Soft c-transform through a pass: out_hat_i = -eps ln2 (M_i + log2 S_i) (the candidate of
/// [flashsinkhorn2026] §2.5 in shifted form).
template <class T>
void softmin(Passes<T>& passes, Axis rows, Axis cols, const std::vector<T>& row_hat,
             const std::vector<T>& col_hat, double eps, LseOut<T>& scratch,
             std::vector<T>& out_hat) {
  passes.lse(rows, cols, row_hat, col_hat, eps, scratch);
  out_hat.resize(scratch.max.size());
  for (std::size_t i = 0; i < out_hat.size(); ++i)
    out_hat[i] = static_cast<T>(
        -eps * kLn2 *
        (static_cast<double>(scratch.max[i]) + std::log2(static_cast<double>(scratch.sum[i]))));
}

}  // namespace birkhoff::transport::detail
