#include "birkhoff/io/npz.hpp"

#include <gtest/gtest.h>
#include <zip.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "alloc_counter.hpp"
#include "npy_files.hpp"

namespace birkhoff::io {
namespace {

using testing::npy_file;
using testing::temp_path;
using testing::to_fortran;

std::vector<std::byte> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars{std::istreambuf_iterator<char>(in), {}};
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

/// An archive written with libzip directly: each member's bytes, compressed with `method`.
void write_zip(const std::string& path,
               const std::vector<std::pair<std::string, std::vector<std::byte>>>& members,
               zip_int32_t method) {
  int code = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  ASSERT_NE(z, nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* s = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    const zip_int64_t i = zip_file_add(z, name.c_str(), s, 0);
    ASSERT_GE(i, 0);
    zip_set_file_compression(z, static_cast<zip_uint64_t>(i), method, 1);
  }
  ASSERT_EQ(zip_close(z), 0);
}

TEST(Npz, RoundTripsSeveralMembers) {
  const auto path = temp_path("a.npz");
  const std::vector<float> f = {1, 2, 3};
  {
    NpzWriter w(path);
    const std::vector<std::int64_t> s1 = {3}, s2 = {2, 1}, s3 = {2, 0};
    w.add_view("f", std::span<const std::int64_t>(s1), f.data());
    w.add("ids", std::span<const std::int64_t>(s2), std::vector<std::int64_t>{7, 8});
    w.add("empty", std::span<const std::int64_t>(s3), std::vector<std::int32_t>{});
  }
  const auto all = read_npz(path);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all.at("f").as<float>("f")[2], 3.0f);
  EXPECT_EQ(all.at("ids").shape, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(all.at("ids").as<std::int64_t>("ids")[1], 8);
  EXPECT_EQ(all.at("empty").shape, (std::vector<std::int64_t>{2, 0}));
  const NpzReader reader(path);
  EXPECT_EQ(reader.keys(), (std::vector<std::string>{"f", "ids", "empty"}));
  EXPECT_TRUE(reader.contains("ids"));
  EXPECT_FALSE(reader.contains("ids.npy"));
  std::remove(path.c_str());
}

TEST(Npz, WriterKeepsNumpySavezLayout) {
  // Stored members named "<key>.npy", each a whole .npy file, dated 1980-01-01: the same
  // archive for the same arrays.
  const auto path = temp_path("layout.npz");
  const std::vector<double> g = {0.5, 1.5};
  const std::vector<std::int64_t> shape = {2};
  for (int round = 0; round < 2; ++round) {
    NpzWriter w(path + std::to_string(round));
    w.add_view("g", std::span<const std::int64_t>(shape), g.data());
    w.close();
  }
  const auto bytes = file_bytes(path + "0");
  EXPECT_EQ(bytes, file_bytes(path + "1"));
  ASSERT_GT(bytes.size(), 30u);
  EXPECT_EQ(std::memcmp(bytes.data(), "PK\x03\x04", 4), 0);
  EXPECT_EQ(std::to_integer<int>(bytes[8]), 0);  // compression method: stored
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()) + 30, 5), "g.npy");
  const auto expected = encode_npy(DType::Float64, shape, g.data());
  EXPECT_EQ(std::memcmp(bytes.data() + 35, expected.data(), expected.size()), 0);
  std::remove((path + "0").c_str());
  std::remove((path + "1").c_str());
}

TEST(Npz, WriterKeepsMovedArraysUntilClose) {
  const auto path = temp_path("kept.npz");
  const std::vector<std::int64_t> shape = {1000};
  {
    NpzWriter w(path);
    std::vector<double> v(1000);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) / 7;
    w.add("v", std::span<const std::int64_t>(shape), std::move(v));
    std::vector<double> clobber(1000, -1.0);  // would reuse v's memory if it had been freed
    w.add("c", std::span<const std::int64_t>(shape), clobber);
    w.close();
  }
  const auto v = read_npz(path).at("v");
  EXPECT_EQ(v.as<double>("v")[700], 100.0);
  std::remove(path.c_str());
}

TEST(Npz, WriterRefusesRepeatedNamesAndWritesEmptyArchives) {
  const auto path = temp_path("w.npz");
  NpzWriter w(path);
  const std::vector<std::int64_t> shape = {1};
  const float one = 1;
  w.add_view("a", std::span<const std::int64_t>(shape), &one);
  EXPECT_THROW(w.add_view("a", std::span<const std::int64_t>(shape), &one), InvalidInput);
  w.close();
  { NpzWriter empty(path); }
  EXPECT_EQ(std::filesystem::file_size(path), 22u);  // numpy.savez() with no arrays
  EXPECT_TRUE(NpzReader(path).keys().empty());
  EXPECT_THROW(NpzWriter(std::filesystem::temp_directory_path().string()), InvalidInput);
  std::remove(path.c_str());
}

TEST(Npz, ReadsDeflatedMembersInAnyOrderAndDtype) {
  // numpy.savez_compressed's layout: deflated members, here Fortran-ordered and big-endian.
  const auto path = temp_path("deflated.npz");
  const std::vector<std::int32_t> c = {0, 1, 2, 1, 2, 0};
  const std::vector<std::int64_t> shape = {2, 3};
  write_zip(path,
            {{"edge_index.npy", npy_file("<i4", true, shape, to_fortran(c, shape))},
             {"w.npy",
              npy_file(">f8", false, {2}, testing::byte_swapped(std::vector<double>{0.25, 4.0}))}},
            ZIP_CM_DEFLATE);
  const NpzReader reader(path);
  const auto e = reader.read("edge_index", DType::Int64, "edge_index");
  EXPECT_EQ(e.shape, shape);
  const auto es = e.as<std::int64_t>("e");
  EXPECT_EQ(std::vector<std::int64_t>(es.begin(), es.end()),
            (std::vector<std::int64_t>{0, 1, 2, 1, 2, 0}));
  EXPECT_EQ(reader.read("w").as<double>("w")[1], 4.0);
  std::remove(path.c_str());
}

// Members are streamed: reading a 32 MB deflated member allocates the array and a bounded
// buffer, never the member's bytes as well (which the former reader inflated whole, then
// copied into the array: three times the array).
TEST(Npz, MembersAreStreamedIntoTheArray) {
  const auto path = temp_path("big.npz");
  std::vector<double> v(std::size_t{4} << 20);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 1000);
  const std::int64_t array_bytes = static_cast<std::int64_t>(v.size() * sizeof(double));
  write_zip(path, {{"v.npy", npy_file("<f8", false, {static_cast<std::int64_t>(v.size())}, v)}},
            ZIP_CM_DEFLATE);
  std::vector<double>().swap(v);
  const NpzReader reader(path);
  testing::reset_peak();
  const auto before = testing::live_bytes();
  {
    const auto a = reader.read("v");
    EXPECT_EQ(a.as<double>("v")[1999], 999.0);
    EXPECT_GE(testing::peak_bytes() - before, array_bytes);  // the counter sees the array
    EXPECT_LE(testing::peak_bytes() - before, array_bytes + (std::int64_t{1} << 20));
  }
  testing::reset_peak();
  {
    const auto a = reader.read("v", DType::Float32, "v");
    EXPECT_EQ(a.as<float>("v")[1999], 999.0f);
    EXPECT_LE(testing::peak_bytes() - before, array_bytes / 2 + (std::int64_t{2} << 20));
  }
  std::remove(path.c_str());
}

TEST(Npz, ClaimsBeyondTheArchiveAreRefusedBeforeAllocating) {
  // A member whose .npy header announces 2^40 float64 values in an archive of a few hundred
  // bytes, stored and deflated: refused with InvalidInput, not std::bad_alloc.
  const std::vector<double> v(4, 1.0);
  const auto member = testing::npy_file(testing::npy_dict("<f8", false, {std::int64_t{1} << 40}),
                                        v.data(), v.size() * 8);
  const auto path = temp_path("claims.npz");
  for (const zip_int32_t method : {ZIP_CM_STORE, ZIP_CM_DEFLATE}) {
    write_zip(path, {{"x.npy", member}}, method);
    const NpzReader reader(path);
    try {
      reader.read("x");
      FAIL() << "no exception";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ":x: ", 0), 0u) << e.what();
    }
  }
  std::remove(path.c_str());
}

TEST(Npz, ErrorsNameTheArchiveAndTheMember) {
  const auto path = temp_path("errors.npz");
  write_zip(path, {{"bad.npy", std::vector<std::byte>(100, std::byte{7})}}, ZIP_CM_STORE);
  const NpzReader reader(path);
  EXPECT_THROW(reader.read("missing"), InvalidInput);
  try {
    reader.read("bad");
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()), path + ":bad: not a .npy file (bad magic)");
  }
  testing::write_file(path, std::vector<std::byte>(64, std::byte{1}));
  EXPECT_THROW(NpzReader{path}, InvalidInput);
  EXPECT_THROW(read_npz(temp_path("no-such.npz")), InvalidInput);
  EXPECT_THROW(read_npz(std::filesystem::temp_directory_path().string()), InvalidInput);
  const std::vector<std::byte> garbage(10, std::byte{0});
  EXPECT_THROW(parse_npz(garbage, "mem"), InvalidInput);
  std::remove(path.c_str());
}

TEST(Npz, ReadsArchivesHeldInMemory) {
  const auto path = temp_path("mem.npz");
  {
    NpzWriter w(path);
    const std::vector<std::int64_t> shape = {2};
    w.add("u", std::span<const std::int64_t>(shape), std::vector<std::uint16_t>{3, 65535});
  }
  const auto bytes = file_bytes(path);
  const auto all = parse_npz(bytes, "mem.npz");
  EXPECT_EQ(all.at("u").as<std::uint16_t>("u")[1], 65535);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace birkhoff::io
