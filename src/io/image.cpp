#include "birkhoff/io/image.hpp"

#include <spng.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "birkhoff/core/error.hpp"

namespace birkhoff::io {
namespace {

struct CtxDeleter {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

void check(int rc, const std::string& name) {
  if (rc != 0) throw InvalidInput(name + ": " + spng_strerror(rc));
}

// A deflate stream expands at most 1032:1, so a PNG's filtered image data can be at most
// this many times the file's size.
constexpr std::uint64_t kMaxDeflateRatio = 1032;
// Ancillary chunks (text, ICC profiles) that libspng keeps in memory: at most this much.
constexpr std::size_t kChunkCacheLimit = std::size_t{64} << 20;

/// Decodes the PNG that `ctx` reads (a file or a buffer of `input_bytes` bytes).
RgbImage decode(spng_ctx* ctx, std::uint64_t input_bytes, const std::string& name) {
  // No chunk longer than the input; ancillary chunks cached up to kChunkCacheLimit.
  check(spng_set_chunk_limits(
            ctx, static_cast<std::size_t>(std::min<std::uint64_t>(input_bytes, 0x7fffffff)),
            kChunkCacheLimit),
        name);
  spng_ihdr ihdr{};
  check(spng_get_ihdr(ctx, &ihdr), name);
  // Refuse decompression bombs before allocating: at most 2^27 pixels (384 MiB of RGB), and no
  // more filtered bytes than the file's compressed data can expand to.
  const std::uint64_t pixels = std::uint64_t{ihdr.width} * ihdr.height;
  if (pixels > (std::uint64_t{1} << 27))
    throw InvalidInput(name + ": image of " + std::to_string(ihdr.width) + " x " +
                       std::to_string(ihdr.height) + " pixels is too large (limit 2^27 pixels)");
  int channels = 1;
  switch (ihdr.color_type) {
    case SPNG_COLOR_TYPE_TRUECOLOR:
      channels = 3;
      break;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA:
      channels = 2;
      break;
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA:
      channels = 4;
      break;
    default:
      break;
  }
  const std::uint64_t row_bytes =
      1 +
      (std::uint64_t{ihdr.width} * static_cast<std::uint64_t>(channels) * ihdr.bit_depth + 7) / 8;
  if (row_bytes * ihdr.height > kMaxDeflateRatio * input_bytes)
    throw InvalidInput(name + ": image of " + std::to_string(ihdr.width) + " x " +
                       std::to_string(ihdr.height) + " pixels cannot fit in a file of " +
                       std::to_string(input_bytes) + " bytes (truncated or corrupt)");
  std::size_t size = 0;
  check(spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &size), name);
  RgbImage image;
  image.width = ihdr.width;
  image.height = ihdr.height;
  image.pixels.resize(size);
  check(spng_decode_image(ctx, image.pixels.data(), size, SPNG_FMT_RGB8, SPNG_DECODE_TRNS), name);
  return image;
}

}  // namespace

RgbImage read_png(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InvalidInput(path + ": is a directory");
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw InvalidInput(path + ": cannot open file");
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) throw InvalidInput(path + ": cannot read file");
  std::unique_ptr<spng_ctx, CtxDeleter> ctx(spng_ctx_new(0));
  if (!ctx) throw InvalidInput(path + ": cannot create PNG decoder");
  check(spng_set_png_file(ctx.get(), file.get()), path);
  return decode(ctx.get(), bytes, path);
}

RgbImage parse_png(std::span<const std::byte> data, const std::string& name) {
  std::unique_ptr<spng_ctx, CtxDeleter> ctx(spng_ctx_new(0));
  if (!ctx) throw InvalidInput(name + ": cannot create PNG decoder");
  check(spng_set_png_buffer(ctx.get(), data.data(), data.size()), name);
  return decode(ctx.get(), data.size(), name);
}

void write_png(const std::string& path, const RgbImage& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.pixels.size() != static_cast<std::size_t>(image.width * image.height * 3))
    throw InvalidInput(path + ": image has inconsistent size");
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
  if (!file) throw InvalidInput(path + ": cannot open for writing");
  std::unique_ptr<spng_ctx, CtxDeleter> ctx(spng_ctx_new(SPNG_CTX_ENCODER));
  if (!ctx) throw InvalidInput(path + ": cannot create PNG encoder");
  check(spng_set_png_file(ctx.get(), file.get()), path);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<std::uint32_t>(image.width);
  ihdr.height = static_cast<std::uint32_t>(image.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR;
  check(spng_set_ihdr(ctx.get(), &ihdr), path);
  check(spng_encode_image(ctx.get(), image.pixels.data(), image.pixels.size(), SPNG_FMT_PNG,
                          SPNG_ENCODE_FINALIZE),
        path);
}

RgbImage resize_area(const RgbImage& image, std::int64_t width, std::int64_t height) {
  require(width > 0 && height > 0 && width <= image.width && height <= image.height, "size",
          "area resize only shrinks an image");
  RgbImage out;
  out.width = width;
  out.height = height;
  out.pixels.resize(static_cast<std::size_t>(width * height * 3));
  const double sx = static_cast<double>(image.width) / static_cast<double>(width);
  const double sy = static_cast<double>(image.height) / static_cast<double>(height);
  for (std::int64_t oy = 0; oy < height; ++oy) {
    const double y0 = static_cast<double>(oy) * sy, y1 = y0 + sy;
    for (std::int64_t ox = 0; ox < width; ++ox) {
      const double x0 = static_cast<double>(ox) * sx, x1 = x0 + sx;
      double acc[3] = {0, 0, 0};
      double area = 0;
      for (auto iy = static_cast<std::int64_t>(y0); iy < static_cast<std::int64_t>(std::ceil(y1));
           ++iy) {
        const double wy = std::min<double>(static_cast<double>(iy + 1), y1) -
                          std::max<double>(static_cast<double>(iy), y0);
        for (auto ix = static_cast<std::int64_t>(x0); ix < static_cast<std::int64_t>(std::ceil(x1));
             ++ix) {
          const double w = wy * (std::min<double>(static_cast<double>(ix + 1), x1) -
                                 std::max<double>(static_cast<double>(ix), x0));
          const std::uint8_t* p =
              &image.pixels[static_cast<std::size_t>((iy * image.width + ix) * 3)];
          for (int c = 0; c < 3; ++c) acc[c] += w * p[c];
          area += w;
        }
      }
      for (int c = 0; c < 3; ++c)
        out.pixels[static_cast<std::size_t>((oy * width + ox) * 3 + c)] =
            static_cast<std::uint8_t>(std::clamp(std::lround(acc[c] / area), 0L, 255L));
    }
  }
  return out;
}

}  // namespace birkhoff::io
