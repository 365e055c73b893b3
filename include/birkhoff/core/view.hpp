#pragma once

#include <cstdint>
#include <span>

namespace birkhoff {

/// Non-owning view of a row-major matrix with `rows` rows of `cols` elements each.
/// Row i starts at data + i * stride (stride >= cols, in elements).
template <class T>
struct MatrixView {
  T* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t stride = 0;

  MatrixView() = default;
  MatrixView(T* d, std::int64_t r, std::int64_t c) : data(d), rows(r), cols(c), stride(c) {}
  MatrixView(T* d, std::int64_t r, std::int64_t c, std::int64_t s)
      : data(d), rows(r), cols(c), stride(s) {}

  T* row(std::int64_t i) const { return data + i * stride; }
  T& operator()(std::int64_t i, std::int64_t j) const { return data[i * stride + j]; }
  bool empty() const { return rows == 0 || cols == 0; }
  operator MatrixView<const T>() const { return {data, rows, cols, stride}; }
};

template <class T>
using Span = std::span<T>;

}  // namespace birkhoff
