// PRIVATE: the .npy format pieces that the .npz reader and writer share with npy.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "birkhoff/io/npy.hpp"
#include "byte_source.hpp"

namespace birkhoff::io::detail {

/// The .npy header for an array of `dtype` and `shape` (magic, version, length, dictionary),
/// padded with spaces so that the data starts on a 64-byte boundary, as numpy writes it.
/// @throws InvalidInput naming `shape` when an extent is negative.
std::string npy_header(DType dtype, std::span<const std::int64_t> shape);

/// Bytes of the data of an array of `dtype` and `shape`.
std::size_t payload_bytes(DType dtype, std::span<const std::int64_t> shape);

/// Reads one .npy array from `source`: the header, then the data straight into the array
/// (converted to `target` when given; `what` names the argument in conversion errors).
NpyArray read_npy_stream(ByteSource& source, std::optional<DType> target, const std::string& what);

}  // namespace birkhoff::io::detail
