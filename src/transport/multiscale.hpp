// PRIVATE: the multiscale backend: a problem in block order, solved on the block-sparse passes
// of transport/block_sparse.hpp, and the solution's plan read through them in the caller's
// order ([schmitzer2019]; design in docs/transport.md, "Multiscale").
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/backend.hpp"
#include "transport/block_sparse.hpp"
#include "transport/blocks.hpp"
#include "transport/passes.hpp"

namespace birkhoff::transport::detail {

/// A problem in block order, as the multiscale backend solves it: the blocks of each side, the
/// permuted geometry and weights, and the block-sparse passes over them. The passes borrow the
/// members, so an instance stays where it was made (held by shared_ptr).
template <class T>
struct BlockOrder {
  std::int64_t sub;  // points per column sub-block
  Blocks bx, by;     // row blocks (the kernel's row groups), then their column sub-blocks
  Blocks cx, cy;
  PointCloud<T> geometry;  // the caller's geometry, permuted
  std::vector<T> a, b;     // the weights in block order (empty: uniform)
  Weights<T> wa, wb;
  std::unique_ptr<BlockSparsePasses<T>> passes;

  BlockOrder(const OtProblem<T>& problem, std::int64_t block_size, double delta, int threads,
             std::shared_ptr<const RowShare<T>> share = nullptr);
  BlockOrder(const BlockOrder&) = delete;
  BlockOrder& operator=(const BlockOrder&) = delete;
  /// The problem in block order (it borrows this instance's members).
  OtProblem<T> problem(const OtProblem<T>& caller) const {
    return {geometry, a, b, caller.epsilon, caller.marginals};
  }
};

/// The plan of a multiscale solution, in the caller's order: each pass gathers its operands
/// into block order, runs the block-sparse pass of the solve (whose lists fit the solution's
/// potentials), and scatters the rows back. Products, marginals and gradients of the solution
/// thus read the kept block pairs only.
template <class T>
class BlockOrderPasses final : public Passes<T> {
 public:
  explicit BlockOrderPasses(std::shared_ptr<BlockOrder<T>> order) : order_(std::move(order)) {}
  void lse(Axis rows, Axis cols, const std::vector<T>& row_hat, const std::vector<T>& col_hat,
           double eps, LseOut<T>& out, const T* values, std::int64_t dv,
           const Modulation<T>& mod) override;
  void min(Axis rows, Axis cols, const std::vector<T>& col_hat, std::vector<T>& out,
           std::vector<std::int64_t>& argmin) override;
  double kept_fraction() const override { return order_->passes->kept_fraction(); }

 private:
  const std::vector<std::int64_t>& order(Axis a) const {
    return a == Axis::X ? order_->bx.order : order_->by.order;
  }
  std::shared_ptr<BlockOrder<T>> order_;
  std::mutex mutex_;  // a rebuild of the lists must not race another product
};

/// Coarse problems of at least this many centroid pairs are solved multiscale themselves (a
/// level more), not dense: at 1e6 points in blocks of 32 the dense coarse passes would read
/// 1e9 pairs each.
inline constexpr double kRecursePairs = 1.6e7;

/// sinkhorn() with the multiscale backend (`reason` goes to the report); `share` splits the
/// solve's passes over processes (the solution's products are then local); `recurse_pairs` the
/// size from which coarse problems get a level of their own (tests lower it).
template <class T>
Solution<T> multiscale_sinkhorn(const OtProblem<T>& problem, const SinkhornOptions& options,
                                const std::string& reason,
                                std::shared_ptr<const RowShare<T>> share = nullptr,
                                double recurse_pairs = kRecursePairs);

/// sinkhorn_divergence() with the multiscale backend: the three problems solved together on
/// block-sparse passes (the self passes too), each certified.
template <class T>
DivergenceSolution<T> multiscale_divergence(const OtProblem<T>& problem,
                                            const SinkhornOptions& options,
                                            const std::string& reason,
                                            std::shared_ptr<const RowShare<T>> share = nullptr,
                                            double recurse_pairs = kRecursePairs);

/// The multiscale backend, its passes shared out by `share` (null: one process).
template <class T>
std::shared_ptr<const BackendImpl<T>> multiscale_backend(
    std::shared_ptr<const RowShare<T>> share = nullptr);

}  // namespace birkhoff::transport::detail
