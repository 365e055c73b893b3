#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace birkhoff::io {

/// An 8-bit RGB image, row-major, 3 bytes a pixel.
struct RgbImage {
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::vector<std::uint8_t> pixels;  // size width * height * 3
};

/// Reads a PNG file (any colour type and bit depth, converted to 8-bit RGB; alpha dropped).
/// At most 2^27 pixels; nothing is allocated beyond what the file's compressed data can expand
/// to (1032:1), and ancillary chunks are kept up to 64 MiB.
/// @throws InvalidInput naming `path` when the file cannot be read, is not a PNG, is corrupt
///         or truncated, or is too large.
RgbImage read_png(const std::string& path);

/// read_png for a PNG held in memory; `name` is used in error messages.
RgbImage parse_png(std::span<const std::byte> data, const std::string& name);

/// Writes an 8-bit RGB PNG. Throws InvalidInput naming `path` on failure.
void write_png(const std::string& path, const RgbImage& image);

/// Box-filter (area-average) downscale by an integer-free factor to the given size; for
/// shrinking only (new size <= old size in both directions).
RgbImage resize_area(const RgbImage& image, std::int64_t width, std::int64_t height);

}  // namespace birkhoff::io
