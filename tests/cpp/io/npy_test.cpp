#include "birkhoff/io/npy.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "birkhoff/io/npz.hpp"

namespace birkhoff::io {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("birkhoff_io_test_" + name)).string();
}

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  const std::vector<float> f = {1.5f, -2.f, 3.f, 4.f, 5.f, 6.f};
  const std::vector<std::int64_t> shape = {2, 3};
  const auto path = temp_path("f.npy");
  write_npy(path, std::span<const std::int64_t>(shape), f.data());
  const auto back = read_npy(path);
  EXPECT_EQ(back.shape, shape);
  const auto s = back.as<float>("x");
  EXPECT_EQ(std::vector<float>(s.begin(), s.end()), f);
  EXPECT_THROW(back.as<double>("x"), InvalidType);

  const std::vector<std::int64_t> ids = {0, 1, 2, 3};
  const std::vector<std::int64_t> shape1 = {4};
  write_npy(path, std::span<const std::int64_t>(shape1), ids.data());
  EXPECT_EQ(read_npy(path).shape, shape1);
  std::remove(path.c_str());
}

TEST(Npy, RejectsGarbageMissingAndTruncatedFiles) {
  EXPECT_THROW(read_npy(temp_path("does-not-exist.npy")), InvalidInput);
  const auto path = temp_path("garbage.npy");
  {
    std::ofstream out(path);
    out << "hello, this is not numpy";
  }
  EXPECT_THROW(read_npy(path), InvalidInput);
  const std::vector<double> v(10, 1.0);
  const std::vector<std::int64_t> shape = {10};
  auto bytes = encode_npy(DType::Float64, shape, v.data());
  bytes.resize(bytes.size() - 8);
  EXPECT_THROW(parse_npy(bytes, "truncated"), InvalidInput);
  std::remove(path.c_str());
}

// read_npy reads the header first and then the data into the array's buffer; every cut of a
// file must still be caught, and a large array (huge-page advice) must come back exactly.
TEST(Npy, ReadsHeaderThenDataAndCatchesEveryTruncation) {
  const std::vector<double> v = {1.0, -2.5, 3.25, 4.0, 5.5, -6.0};
  const std::vector<std::int64_t> shape = {2, 3};
  const auto bytes = encode_npy(DType::Float64, shape, v.data());
  const auto path = temp_path("cut.npy");
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(cut));
    }
    EXPECT_THROW(read_npy(path), InvalidInput) << "cut at " << cut;
  }
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out << "trailing bytes are ignored";
  }
  const auto back = read_npy(path);
  EXPECT_EQ(back.shape, shape);
  const auto d = back.as<double>("v");
  EXPECT_EQ(std::vector<double>(d.begin(), d.end()), v);

  std::vector<float> big(3 << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 9973) - 17.5f;
  const std::vector<std::int64_t> big_shape = {3 << 10, 1 << 10};
  write_npy(path, std::span<const std::int64_t>(big_shape), big.data());
  const auto big_back = read_npy(path);
  EXPECT_EQ(big_back.shape, big_shape);
  const auto f = big_back.as<float>("big");
  EXPECT_EQ(std::memcmp(f.data(), big.data(), big.size() * sizeof(float)), 0);
  std::remove(path.c_str());
}

TEST(Npy, RejectsShapesWhoseSizeOverflowsAndDirectories) {
  // A crafted header whose element count wraps around must not pass the size check.
  for (const char* shape : {"(2305843009213693953, 1)", "(4611686018427387905, 4)"}) {
    std::string header =
        std::string("{'descr': '<f8', 'fortran_order': False, 'shape': ") + shape + ", }";
    header.append(64 - (10 + header.size() + 1) % 64, ' ');
    header.push_back('\n');
    std::string file = std::string("\x93NUMPY\x01\x00", 8);
    file.push_back(static_cast<char>(header.size() & 0xff));
    file.push_back(static_cast<char>(header.size() >> 8));
    file += header + std::string(64, '\0');
    std::vector<std::byte> bytes(file.size());
    std::memcpy(bytes.data(), file.data(), file.size());
    EXPECT_THROW(parse_npy(bytes, "crafted"), InvalidInput) << shape;
  }
  EXPECT_THROW(read_npy(std::filesystem::temp_directory_path().string()), InvalidInput);
}

TEST(Npz, RoundTripsSeveralMembers) {
  const auto path = temp_path("a.npz");
  const std::vector<float> f = {1, 2, 3};
  const std::vector<std::int64_t> i = {7, 8};
  {
    NpzWriter w(path);
    const std::vector<std::int64_t> s1 = {3}, s2 = {2, 1};
    w.add_view("f", std::span<const std::int64_t>(s1), f.data());
    w.add_view("ids", std::span<const std::int64_t>(s2), i.data());
  }
  const auto all = read_npz(path);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.at("f").as<float>("f")[2], 3.0f);
  EXPECT_EQ(all.at("ids").shape, (std::vector<std::int64_t>{2, 1}));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace birkhoff::io
