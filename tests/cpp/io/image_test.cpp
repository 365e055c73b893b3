#include "birkhoff/io/image.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "npy_files.hpp"

namespace birkhoff::io {
namespace {

using testing::temp_path;

std::vector<std::byte> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars{std::istreambuf_iterator<char>(in), {}};
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

RgbImage gradient(std::int64_t width, std::int64_t height) {
  RgbImage image;
  image.width = width;
  image.height = height;
  for (std::int64_t i = 0; i < width * height * 3; ++i)
    image.pixels.push_back(static_cast<std::uint8_t>((i * 37) % 251));
  return image;
}

TEST(Png, RoundTripsThroughFileAndMemory) {
  const auto path = temp_path("round.png");
  const RgbImage image = gradient(7, 5);
  write_png(path, image);
  const RgbImage back = read_png(path);
  EXPECT_EQ(back.width, 7);
  EXPECT_EQ(back.height, 5);
  EXPECT_EQ(back.pixels, image.pixels);
  EXPECT_EQ(parse_png(file_bytes(path), "mem").pixels, image.pixels);
  std::remove(path.c_str());
}

TEST(Png, EveryTruncationOfTheImageDataIsAnInvalidInput) {
  const auto path = temp_path("cut.png");
  write_png(path, gradient(16, 16));
  const auto bytes = file_bytes(path);
  // Every cut that loses image data. A file cut after its image data (in the last IDAT's CRC
  // or the 12-byte IEND chunk) still holds the whole image, and libspng reads it.
  for (std::size_t cut = 0; cut < bytes.size() - 16; cut += 7) {
    EXPECT_THROW(parse_png(std::span(bytes).first(cut), "cut.png"), InvalidInput) << cut;
  }
  auto flipped = bytes;
  flipped[bytes.size() / 2] ^= std::byte{0x55};  // a CRC or data error in IDAT
  EXPECT_THROW(parse_png(flipped, "flipped.png"), InvalidInput);
  EXPECT_THROW(read_png(temp_path("no-such.png")), InvalidInput);
  EXPECT_THROW(read_png(std::filesystem::temp_directory_path().string()), InvalidInput);
  std::remove(path.c_str());
}

// An IHDR announcing 10000 x 10000 RGB pixels (within the 2^27-pixel cap) in a file of a few
// hundred bytes: 300 MB of filtered data cannot come out of it, so nothing is allocated.
TEST(Png, ClaimedSizeBeyondWhatTheFileCanHoldIsRefused) {
  const auto path = temp_path("small.png");
  write_png(path, gradient(4, 4));
  auto bytes = file_bytes(path);
  // IHDR data starts at byte 16: width, height (big-endian), then its CRC at byte 29.
  const unsigned char dims[8] = {0, 0, 0x27, 0x10, 0, 0, 0x27, 0x10};
  std::memcpy(bytes.data() + 16, dims, 8);
  // Recompute the IHDR CRC (over "IHDR" and its 13 data bytes) so that only the size is odd.
  std::uint32_t crc = 0xffffffffu;
  for (std::size_t i = 12; i < 29; ++i) {
    crc ^= std::to_integer<std::uint32_t>(bytes[i]);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xffffffffu;
  for (int k = 0; k < 4; ++k) bytes[29 + k] = static_cast<std::byte>(crc >> (24 - 8 * k));
  try {
    parse_png(bytes, "small.png");
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("cannot fit in a file of"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace birkhoff::io
