// libFuzzer target: the PNG reader (libspng from memory) on arbitrary bytes. The chunk CRCs of
// the input are recomputed first, so that mutations reach the decoder instead of stopping at
// the CRC check (which has its own test in tests/cpp/io/image_test.cpp).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/io/image.hpp"

namespace {

std::uint32_t crc32(const std::uint8_t* p, std::size_t n) {
  std::uint32_t crc = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xffffffffu;
}

// Chunks after the 8-byte signature: length (4, big-endian), type (4), data, CRC (4).
void fix_crcs(std::vector<std::uint8_t>& png) {
  std::size_t p = 8;
  while (p + 12 <= png.size()) {
    const std::size_t length = (std::size_t{png[p]} << 24) | (std::size_t{png[p + 1]} << 16) |
                               (std::size_t{png[p + 2]} << 8) | png[p + 3];
    if (length > png.size() - p - 12) return;
    const std::uint32_t crc = crc32(png.data() + p + 4, length + 4);
    for (int k = 0; k < 4; ++k)
      png[p + 8 + length + static_cast<std::size_t>(k)] =
          static_cast<std::uint8_t>(crc >> (24 - 8 * k));
    p += length + 12;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace birkhoff;
  std::vector<std::uint8_t> png(data, data + size);
  fix_crcs(png);
  try {
    const io::RgbImage image = io::parse_png(std::as_bytes(std::span(png)), "fuzz.png");
    if (image.pixels.size() != static_cast<std::size_t>(image.width * image.height * 3))
      __builtin_trap();
  } catch (const InvalidInput&) {
  }
  return 0;
}
