#pragma once

#include <span>
#include <vector>

#include "birkhoff/core/view.hpp"
#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport {

/// The transport plan P_ij = a_i b_j exp((f_i + g_j - C_ij) / epsilon), never stored: each
/// product is one streamed pass over the n x m pairs, O((n + m)(d + k)) memory.
/// Source: FlashSinkhorn (arXiv 2602.03067) §6, "plan application".
/// The problem's arrays must outlive the plan.
template <class T>
class TransportPlan {
 public:
  /// @param f (n), g (m): potentials (GeomLoss convention); epsilon > 0 in cost units.
  /// @throws InvalidInput on size mismatch or a non-positive epsilon.
  TransportPlan(const OtProblem<T>& problem, std::span<const T> f, std::span<const T> g,
                double epsilon, int num_threads = 0);
  /// Plan of a solved problem (final potentials, final epsilon).
  TransportPlan(const OtProblem<T>& problem, const SinkhornResult<T>& result, int num_threads = 0);

  std::int64_t rows() const { return n_; }
  std::int64_t cols() const { return m_; }

  /// out (n, k) = P v for v (m, k).   @throws InvalidInput on shape mismatch or non-finite v.
  void apply(MatrixView<const T> v, MatrixView<T> out) const;
  /// out (m, k) = P^T u for u (n, k). @throws InvalidInput on shape mismatch or non-finite u.
  void apply_transpose(MatrixView<const T> u, MatrixView<T> out) const;
  /// (n) row sums P 1 and (m) column sums P^T 1.
  std::vector<T> row_marginal() const;
  std::vector<T> col_marginal() const;
  /// (n, d) row-major: the barycentric map x_i -> sum_j P_ij y_j / sum_j P_ij.
  std::vector<T> barycentric_map() const;
  /// (n * m) row-major dense plan; for small problems and tests.
  std::vector<T> dense() const;

 private:
  void product_into(bool transpose, MatrixView<const T> v, MatrixView<T> out) const;
  OtProblem<T> problem_;
  std::int64_t n_ = 0, m_ = 0, d_ = 0;
  std::vector<T> f_, g_;
  double epsilon_ = 0;
  int threads_ = 0;
};

/// Gradients of the value returned by sinkhorn() (envelope theorem; FlashSinkhorn §5,
/// [feydy2019] Prop. 2). All row-major, float as the input.
template <class T>
struct Gradients {
  std::vector<T> x;  ///< (n, d)  d loss / d x
  std::vector<T> y;  ///< (m, d)  d loss / d y
  std::vector<T> a;  ///< (n)     d loss / d a
  std::vector<T> b;  ///< (m)     d loss / d b
};

/// Gradients of sinkhorn()'s loss with respect to x, y, a, b, streamed (no n x m storage).
template <class T>
Gradients<T> gradients(const OtProblem<T>& problem, const SinkhornResult<T>& result,
                       int num_threads = 0);

/// Gradients of sinkhorn_divergence()'s loss.
template <class T>
Gradients<T> gradients(const OtProblem<T>& problem, const DivergenceResult<T>& result,
                       int num_threads = 0);

}  // namespace birkhoff::transport
