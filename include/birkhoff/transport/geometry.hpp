#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "birkhoff/core/view.hpp"
#include "birkhoff/transport/cost.hpp"

namespace birkhoff::transport {

/// The label term of the label-augmented cost of dataset distances [alvarezmelis2020] eq. (4):
/// C_ij = c(x_i, y_j) + weight * table[x_labels[i], y_labels[j]], for any ground cost.
/// x_labels (n), y_labels (m): class ids in [0, V); table (V, V) row-major, symmetric, finite
/// and >= 0 (a class-to-class distance, in cost units); weight >= 0 (OTDD's lambda). The debiased
/// divergence's self terms use each cloud's own labels on both sides. Borrowed: the PointCloud
/// keeps its own copy.
struct LabelCost {
  std::span<const std::int64_t> x_labels;
  std::span<const std::int64_t> y_labels;
  MatrixView<const double> table;
  double weight = 1.0;
};

/// The prepared geometry of two point clouds: what every streamed pass over the n x m pairs
/// reads, computed once and shared (read-only) by the solver, the solution and its products.
///
/// The points are mapped to the cost's features (GroundCost::feature: the identity, or the
/// unit vectors of the cosine cost), and both feature clouds are translated by the centre c of
/// their joint bounding box (the cost, the potentials and the plan do not change; float32
/// cancellation in |u|^2 + |v|^2 - 2 <u, v> does). For the dot-product form the row terms
/// alpha_i = kappa/2 |u_i - c|^2, beta_j = kappa/2 |v_j - c|^2 are folded out of the cost:
/// C_ij = alpha_i + beta_j - kappa <u_i - c, v_j - c> [flashsinkhorn2026] §2.1; for the
/// distance-power form they are 0 and the kernel sums |u_i - v_j|^2 from the differences.
/// Copying a PointCloud is cheap (the prepared arrays are shared). Memory O((n + m) d).
template <class T>
class PointCloud {
 public:
  PointCloud() = default;
  /// @param x (n, d), y (m, d) row-major float32 or float64 points (any row stride), finite,
  ///        n, m >= 1, the same d >= 1. They are copied (as centred features); the caller may
  ///        free them.
  /// @throws birkhoff::InvalidInput naming `x` or `y` for an empty cloud, d = 0, NaN/inf, a
  ///         dimension mismatch, coordinates whose squared distances overflow T, or a point
  ///         the cost is not defined at (the zero vector for cosine).
  PointCloud(MatrixView<const T> x, MatrixView<const T> y, Cost cost = Cost());
  /// With the label-augmented cost (LabelCost). Memory O((n + m) d + V^2).
  /// @throws birkhoff::InvalidInput as above, and naming `x_labels`, `y_labels` (wrong length,
  ///         id out of range), `label_cost` (not square, not symmetric, negative or non-finite)
  ///         or `label_weight` (negative or non-finite).
  PointCloud(MatrixView<const T> x, MatrixView<const T> y, Cost cost, const LabelCost& labels);

  std::int64_t n() const { return data_ ? data_->n : 0; }
  std::int64_t m() const { return data_ ? data_->m : 0; }
  std::int64_t dim() const { return data_ ? data_->d : 0; }
  const Cost& cost() const { return data_->cost; }
  /// Diagonal of the joint axis-aligned bounding box of the features (the schedule's start).
  double diameter() const { return data_ ? data_->diameter : 0.0; }
  /// (d) the centre c that was subtracted.
  std::span<const double> centre() const { return data_->centre; }
  /// (n, d) and (m, d) centred features (the centred points for the identity map), row-major.
  MatrixView<const T> x() const { return {data_->x.data(), data_->n, data_->d}; }
  MatrixView<const T> y() const { return {data_->y.data(), data_->m, data_->d}; }
  /// (n) alpha_i and (m) beta_j, the row terms folded into the potentials (0 for the
  /// distance-power form).
  std::span<const T> x_sqnorm() const { return data_->x_sqnorm; }
  std::span<const T> y_sqnorm() const { return data_->y_sqnorm; }
  /// (n), (m) the feature map's scale of each point (GroundCost::feature); empty for the
  /// identity map.
  std::span<const double> x_scale() const { return data_->x_scale; }
  std::span<const double> y_scale() const { return data_->y_scale; }
  /// The same prepared geometry in another dtype U (features rounded, nothing recomputed
  /// from the points).
  template <class U>
  PointCloud<U> cast() const;
  /// The same prepared geometry with its points reordered: point p of the result's x is point
  /// x_order[p] of this one (likewise y); nothing is recomputed, so costs agree to the bit.
  /// @param x_order, y_order permutations of [0, n) and [0, m) (not checked).
  PointCloud permuted(std::span<const std::int64_t> x_order,
                      std::span<const std::int64_t> y_order) const;
  bool empty() const { return data_ == nullptr; }
  /// Number of classes V of the label term; 0 without labels.
  std::int64_t num_labels() const { return data_ ? data_->num_labels : 0; }
  /// (n), (m) class ids, and the (V, V) row-major label term weight * table (cost units).
  std::span<const std::int32_t> x_labels() const { return data_->x_labels; }
  std::span<const std::int32_t> y_labels() const { return data_->y_labels; }
  std::span<const double> label_cost() const { return data_->label_cost; }

 private:
  struct Data {
    std::int64_t n = 0, m = 0, d = 0;
    Cost cost;
    double diameter = 0;
    std::vector<double> centre;
    std::vector<T> x, y, x_sqnorm, y_sqnorm;
    std::vector<double> x_scale, y_scale;
    std::int64_t num_labels = 0;
    std::vector<std::int32_t> x_labels, y_labels;
    std::vector<double> label_cost;
  };
  std::shared_ptr<const Data> data_;
  template <class U>
  friend class PointCloud;
};

/// Diagonal of the joint axis-aligned bounding box of x and y.
template <class T>
double bounding_diameter(MatrixView<const T> x, MatrixView<const T> y);

}  // namespace birkhoff::transport
