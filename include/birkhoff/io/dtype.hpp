#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace birkhoff::io {

/// Element types of the .npy/.npz reader and writer: numpy's bool, the eight fixed-width
/// integers, float32 and float64. Arrays in memory are always in the host's byte order.
enum class DType {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float32,
  Float64,
};

/// Size in bytes of one element of `dtype`.
std::size_t dtype_size(DType dtype);
/// NumPy's name for `dtype` ("float32", "int64", ...), for messages.
const char* dtype_name(DType dtype);
/// True for the eight integer dtypes (not bool).
bool is_integer(DType dtype);
/// True for float32 and float64.
bool is_float(DType dtype);

/// Whether values of `from` convert to `to`: any integer to any integer (range checked), float32
/// to float64 and back (range checked), an integer to a float (checked to be exact: every
/// integer up to 2^24 in float32, 2^53 in float64, and beyond those the ones the float holds),
/// and every dtype to itself. Bool converts only to bool; floats never convert to integers.
bool is_convertible(DType from, DType to);

/// "float64->float32": how a conversion is reported (CLI --json, verbose output).
std::string conversion_name(DType from, DType to);

/// Converts `count` elements of dtype `from` at `src` to dtype `to` at `dst` (host byte order).
/// `dst` may equal `src` when `to` is no wider than `from` (in-place narrowing); otherwise the
/// two must not overlap.
/// @throws InvalidType naming `what` when !is_convertible(from, to); InvalidInput naming `what`
///         when a value is outside `to`'s range (integers; a finite float64 beyond float32's;
///         an integer that `to` cannot hold exactly).
void convert_elements(DType from, const void* src, DType to, void* dst, std::size_t count,
                      const std::string& what);

/// Reverses the byte order of `count` elements of `size` bytes (1, 2, 4 or 8) in place.
void byteswap_elements(void* data, std::size_t size, std::size_t count);

template <class T>
constexpr DType dtype_of() = delete;
template <>
constexpr DType dtype_of<bool>() {
  return DType::Bool;
}
template <>
constexpr DType dtype_of<std::int8_t>() {
  return DType::Int8;
}
template <>
constexpr DType dtype_of<std::int16_t>() {
  return DType::Int16;
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
constexpr DType dtype_of<std::uint8_t>() {
  return DType::UInt8;
}
template <>
constexpr DType dtype_of<std::uint16_t>() {
  return DType::UInt16;
}
template <>
constexpr DType dtype_of<std::uint32_t>() {
  return DType::UInt32;
}
template <>
constexpr DType dtype_of<std::uint64_t>() {
  return DType::UInt64;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::Float32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::Float64;
}

}  // namespace birkhoff::io
