// PRIVATE: the block structure of the multiscale backend. A cloud is reordered so that blocks
// of `size` consecutive points are spatially compact (a kd-tree order: split at the median of
// the widest coordinate, sizes kept to multiples of the block size), and each block keeps its
// bounding box, weight and centroid. Memory O(n d).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/core/view.hpp"

namespace birkhoff::transport::detail {

struct Blocks {
  std::int64_t size = 0;            ///< points per block (the last block may hold fewer)
  std::int64_t count = 0;           ///< number of blocks
  std::int64_t n = 0, d = 0;        ///< points and dimension
  std::vector<std::int64_t> order;  ///< (n) original index of the point at position p
  std::vector<double> lo, hi;       ///< (count, d) bounding boxes
  std::vector<double> centroid;     ///< (count, d) weighted means (plain mean if no weight)
  std::vector<double> mass;         ///< (count) total weight
  std::vector<double> log_mass;     ///< (count) log of mass (-inf for zero)

  std::int64_t begin(std::int64_t b) const { return b * size; }
  std::int64_t end(std::int64_t b) const { return std::min(n, (b + 1) * size); }
  /// Median over blocks of the squared box diagonal.
  double median_diagonal2() const;
};

/// The blocks of points (n, d) with weights w (empty = uniform 1/n). With 0 < sub < size and
/// sub a divisor of size (else it is ignored), each block's points are ordered so that its runs of
/// `sub` points are compact too: sub_blocks() then describes them.
template <class T>
Blocks make_blocks(MatrixView<const T> points, std::span<const T> weights, std::int64_t size,
                   std::int64_t sub = 0);

/// The blocks of `sub` consecutive points in the order of `b` (sub divides b.size; every block
/// of b is a run of sub blocks): the finer level the block-sparse lists keep columns by. Its
/// `order` is left empty (b's is the order).
template <class T>
Blocks sub_blocks(const Blocks& b, MatrixView<const T> points, std::span<const T> weights,
                  std::int64_t sub);

/// out[p] = in[order[p]] for rows of width `width`.
template <class T>
std::vector<T> gather_rows(const T* in, std::int64_t width, const std::vector<std::int64_t>& order);

/// out[order[p]] = in[p] (the inverse of gather_rows, width 1); an empty input stays empty.
template <class T>
std::vector<T> scatter(std::span<const T> in, const std::vector<std::int64_t>& order);

}  // namespace birkhoff::transport::detail
