#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/io/dtype.hpp"

namespace birkhoff::io {

/// An array read from a .npy file or an .npz member: C order, host byte order, owning its
/// bytes. Files in Fortran order or the other byte order are rearranged while they are read.
struct NpyArray {
  DType dtype = DType::Float32;
  std::vector<std::int64_t> shape;  ///< extents, each >= 0; empty for a 0-d array
  std::vector<std::byte> bytes;     ///< size() * dtype_size(dtype) bytes, C order
  /// The dtype the file held when the array was converted (by read_npy(path, dtype, what) or
  /// by to<T>()); empty when the elements are as the file stored them.
  std::optional<DType> converted_from;

  /// Number of elements (product of the shape; 1 for a 0-d array, 0 when an extent is 0).
  std::int64_t size() const;

  /// The elements as T, without a copy. Throws InvalidType naming `what` unless dtype is T's.
  template <class T>
  std::span<const T> as(const std::string& what) const {
    if (dtype != dtype_of<T>()) {
      throw InvalidType(what + ": expected dtype " + dtype_name(dtype_of<T>()) + ", got " +
                        dtype_name(dtype));
    }
    return {reinterpret_cast<const T*>(bytes.data()), static_cast<std::size_t>(size())};
  }

  /// Converts the elements to `target` in place (see is_convertible: any integer to any integer
  /// with a range check, float32 <-> float64) and records the file's dtype in converted_from.
  /// Narrowing reuses the buffer; widening grows it once. No-op when dtype == target.
  /// @throws InvalidType naming `what` when the dtypes do not convert; InvalidInput naming
  ///         `what` when a value is out of `target`'s range (the array is then unspecified).
  void convert(DType target, const std::string& what);

  /// convert(dtype_of<T>(), what), then the elements as T.
  template <class T>
  std::span<const T> to(const std::string& what) {
    convert(dtype_of<T>(), what);
    return as<T>(what);
  }

  /// "float64->float32" when the array was converted, else "".
  std::string conversion() const;
};

/// Reads a .npy file (format 1.0, 2.0 or 3.0) as numpy wrote it: bool, int8-int64,
/// uint8-uint64, float32 or float64, either byte order, C or Fortran order, any shape
/// including extents of 0. The header is read first and checked against the file size; the
/// data then goes straight into the array's buffer (Fortran order is transposed through a
/// fixed-size buffer, never a second copy of the array). Bool bytes other than 0 read as true.
/// @throws InvalidInput naming `path` when the file is missing, a directory, not a .npy file,
///         truncated, or its header is malformed or claims more data than the file holds;
///         InvalidType naming `path` for any other dtype (float16, complex, strings, objects,
///         structured).
NpyArray read_npy(const std::string& path);

/// read_npy(path), converting the elements to `dtype` while reading (one buffer of the
/// target dtype; see NpyArray::convert for what converts).
/// @throws as read_npy, plus InvalidType / InvalidInput naming `what` when the file's dtype
///         does not convert to `dtype` or a value is out of its range.
NpyArray read_npy(const std::string& path, DType dtype, const std::string& what);

/// read_npy(path, dtype_of<T>(), what).
template <class T>
NpyArray read_npy_as(const std::string& path, const std::string& what) {
  return read_npy(path, dtype_of<T>(), what);
}

/// Parses the bytes of a .npy file, as read_npy does; `name` is used in error messages.
NpyArray parse_npy(std::span<const std::byte> data, const std::string& name);

/// Serialises an array to .npy bytes: format 1.0 (2.0 when the header needs it), C order,
/// host byte order. `data` holds the product of `shape` elements of `dtype`.
/// @throws InvalidInput naming `shape` when an extent is negative.
std::vector<std::byte> encode_npy(DType dtype, std::span<const std::int64_t> shape,
                                  const void* data);

/// Writes `data` (C order, `shape`) as a .npy file that numpy.load reads.
/// @throws InvalidInput naming `path` when it cannot be written.
void write_npy(const std::string& path, DType dtype, std::span<const std::int64_t> shape,
               const void* data);

template <class T>
void write_npy(const std::string& path, std::span<const std::int64_t> shape, const T* data) {
  write_npy(path, dtype_of<T>(), shape, data);
}

}  // namespace birkhoff::io
