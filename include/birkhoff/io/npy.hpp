#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::io {

/// Element types understood by the .npy reader and writer (little-endian only).
enum class DType { Float32, Float64, Int32, Int64, Bool, UInt8 };

/// Size in bytes of one element of `dtype`.
std::size_t dtype_size(DType dtype);
/// NumPy's name for `dtype` ("float32", "int64", ...), for error messages.
const char* dtype_name(DType dtype);

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::Float32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::Float64;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::Int32;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::Int64;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::Bool;
}
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::UInt8;
}

/// An array read from a .npy file or an .npz member: C order, little-endian, owning its bytes.
struct NpyArray {
  DType dtype = DType::Float32;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;

  /// Number of elements (product of the shape; 1 for a scalar).
  std::int64_t size() const;

  /// The elements as T. Throws InvalidType (naming `what`) unless dtype is exactly T's.
  template <class T>
  std::span<const T> as(const std::string& what) const {
    if (dtype != dtype_of<T>()) {
      throw InvalidType(what + ": expected dtype " + dtype_name(dtype_of<T>()) + ", got " +
                        dtype_name(dtype));
    }
    return {reinterpret_cast<const T*>(bytes.data()), static_cast<std::size_t>(size())};
  }
};

/// Reads a .npy file (format 1.0-3.0). Throws InvalidInput naming `path` when the file cannot be
/// opened, is not a .npy file, is big-endian, Fortran-ordered, or holds an unsupported dtype.
NpyArray read_npy(const std::string& path);

/// Parses the bytes of a .npy file; `name` is used in error messages.
NpyArray parse_npy(std::span<const std::byte> data, const std::string& name);

/// Serialises an array to .npy bytes (format 1.0, or 2.0 when the header needs it).
std::vector<std::byte> encode_npy(DType dtype, std::span<const std::int64_t> shape,
                                  const void* data);

/// Writes `data` (C order, `shape`) as a .npy file. Throws InvalidInput when `path` cannot be
/// written.
void write_npy(const std::string& path, DType dtype, std::span<const std::int64_t> shape,
               const void* data);

template <class T>
void write_npy(const std::string& path, std::span<const std::int64_t> shape, const T* data) {
  write_npy(path, dtype_of<T>(), shape, data);
}

/// Reads every member of an .npz archive (stored or deflated). Keys are the member names
/// without the ".npy" suffix, as numpy.load gives them.
std::map<std::string, NpyArray> read_npz(const std::string& path);

/// Writes an uncompressed .npz archive (numpy.savez layout; members and offsets below 4 GiB).
class NpzWriter {
 public:
  /// Opens `path` for writing. Throws InvalidInput when it cannot be created.
  explicit NpzWriter(const std::string& path);
  ~NpzWriter();
  NpzWriter(const NpzWriter&) = delete;
  NpzWriter& operator=(const NpzWriter&) = delete;

  /// Adds member `name` (".npy" is appended).
  void add(const std::string& name, DType dtype, std::span<const std::int64_t> shape,
           const void* data);
  template <class T>
  void add(const std::string& name, std::span<const std::int64_t> shape, const T* data) {
    add(name, dtype_of<T>(), shape, data);
  }
  /// Writes the central directory. Called by the destructor if not called before.
  void close();

 private:
  struct Entry {
    std::string name;
    std::uint32_t crc = 0;
    std::uint64_t size = 0;
    std::uint64_t offset = 0;
  };
  std::string path_;
  std::ofstream out_;
  std::vector<Entry> entries_;
  bool closed_ = false;
};

}  // namespace birkhoff::io
