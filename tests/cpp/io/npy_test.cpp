#include "birkhoff/io/npy.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "alloc_counter.hpp"
#include "npy_files.hpp"

namespace birkhoff::io {
namespace {

using testing::byte_swapped;
using testing::npy_dict;
using testing::npy_file;
using testing::temp_path;
using testing::to_fortran;
using testing::write_file;

template <class T>
std::vector<T> values(const NpyArray& a) {
  const auto s = a.as<T>("a");
  return {s.begin(), s.end()};
}

std::string message_of(const std::vector<std::byte>& file) {
  try {
    parse_npy(file, "f.npy");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "no exception";
}

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  const std::vector<float> f = {1.5f, -2.f, 3.f, 4.f, 5.f, 6.f};
  const std::vector<std::int64_t> shape = {2, 3};
  const auto path = temp_path("f.npy");
  write_npy(path, std::span<const std::int64_t>(shape), f.data());
  const auto back = read_npy(path);
  EXPECT_EQ(back.shape, shape);
  EXPECT_EQ(values<float>(back), f);
  EXPECT_FALSE(back.converted_from.has_value());
  EXPECT_THROW(back.as<double>("x"), InvalidType);

  const std::vector<std::uint16_t> u = {0, 7, 65535};
  const std::vector<std::int64_t> shape1 = {3};
  write_npy(path, std::span<const std::int64_t>(shape1), u.data());
  const auto ub = read_npy(path);
  EXPECT_EQ(ub.dtype, DType::UInt16);
  EXPECT_EQ(values<std::uint16_t>(ub), u);
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
    write_file(path, std::vector<std::byte>(bytes.begin(), bytes.begin() + cut));
    EXPECT_THROW(read_npy(path), InvalidInput) << "cut at " << cut;
  }
  auto trailing = bytes;
  trailing.resize(bytes.size() + 30, std::byte{'x'});
  write_file(path, trailing);
  const auto back = read_npy(path);
  EXPECT_EQ(back.shape, shape);
  EXPECT_EQ(values<double>(back), v);

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

TEST(Npy, FortranOrderedFilesReadAsTheirCOrderTwin) {
  // 2-d arrays are read by tiles: whole columns (600 x 700, two tiles of columns) or pieces
  // of columns (9000 x 3: 4096 rows a piece, then 808); other arrays through a 1 MiB buffer
  // (64 x 64 x 80 fills it more than once); .npz members are read that way too (npz_test).
  for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{
           {3, 4}, {2, 3, 4}, {600, 700}, {9000, 3}, {64, 64, 80}, {1, 5}, {5, 1}}) {
    const auto n = static_cast<std::size_t>(
        std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>()));
    std::vector<float> c(n);
    for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<float>(i) * 0.5f - 3.f;
    const auto from_c = parse_npy(npy_file("<f4", false, shape, c), "c.npy");
    const auto from_f = parse_npy(npy_file("<f4", true, shape, to_fortran(c, shape)), "f.npy");
    EXPECT_EQ(from_f.shape, shape);
    EXPECT_EQ(from_f.bytes, from_c.bytes) << "shape of " << shape.size() << " axes, " << n;
  }
}

// Transposing on load takes the output array and a 1 MiB buffer, not a second array.
TEST(Npy, FortranReadHoldsOneArrayAndABoundedBuffer) {
  const std::vector<std::int64_t> shape = {3000, 233};  // pieces of columns: 2048 + 952 rows
  std::vector<double> c(699000);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<double>(i);
  const auto path = temp_path("fortran_big.npy");
  write_file(path, npy_file("<f8", true, shape, to_fortran(c, shape)));
  const std::int64_t array_bytes = 699000 * 8;
  for (const bool convert : {false, true}) {
    testing::reset_peak();
    const auto before = testing::live_bytes();
    const NpyArray a = convert ? read_npy(path, DType::Float32, "x") : read_npy(path);
    const auto out_bytes = convert ? array_bytes / 2 : array_bytes;
    EXPECT_GE(testing::peak_bytes() - before, out_bytes);
    EXPECT_LE(testing::peak_bytes() - before, out_bytes + (std::int64_t{5} << 19)) << convert;
    if (convert) {
      EXPECT_EQ(a.as<float>("x")[698999], 698999.0f);
    } else {
      EXPECT_EQ(values<double>(a), c);
    }
  }
  std::remove(path.c_str());
}

TEST(Npy, FortranInt32EdgeListConvertsToInt64InOnePass) {
  const std::vector<std::int32_t> c = {0, 1, 2, 3, 1, 2, 3, 0};  // (2, 4): sources, targets
  const std::vector<std::int64_t> shape = {2, 4};
  const auto path = temp_path("edges_f.npy");
  write_file(path, npy_file("<i4", true, shape, to_fortran(c, shape)));
  const auto a = read_npy_as<std::int64_t>(path, "edge_index");
  EXPECT_EQ(a.shape, shape);
  EXPECT_EQ(values<std::int64_t>(a), (std::vector<std::int64_t>{0, 1, 2, 3, 1, 2, 3, 0}));
  EXPECT_EQ(a.conversion(), "int32->int64");
  // Big-endian and Fortran-ordered at once.
  write_file(
      path,
      npy_file(">i2", true, shape,
               byte_swapped(to_fortran(std::vector<std::int16_t>(c.begin(), c.end()), shape))));
  EXPECT_EQ(values<std::int64_t>(read_npy_as<std::int64_t>(path, "edge_index")),
            (std::vector<std::int64_t>{0, 1, 2, 3, 1, 2, 3, 0}));
  std::remove(path.c_str());
}

template <class T>
void expect_reads_and_converts(const std::string& descr) {
  const std::vector<T> v = {std::numeric_limits<T>::min(), 0, 1, std::numeric_limits<T>::max()};
  const auto file = npy_file(descr, false, {4}, v);
  const auto a = parse_npy(file, descr);
  EXPECT_EQ(a.dtype, dtype_of<T>()) << descr;
  EXPECT_EQ(values<T>(a), v) << descr;
  NpyArray wide = a;
  if constexpr (std::is_same_v<T, std::uint64_t>) {
    EXPECT_THROW(wide.to<std::int64_t>("ids"), InvalidInput);
  } else {
    const auto w = wide.to<std::int64_t>("ids");
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(w[i], static_cast<std::int64_t>(v[i]));
  }
}

TEST(Npy, EveryIntegerDtypeNumpyWritesIsReadAndConverts) {
  expect_reads_and_converts<std::int8_t>("|i1");
  expect_reads_and_converts<std::int16_t>("<i2");
  expect_reads_and_converts<std::int32_t>("<i4");
  expect_reads_and_converts<std::int64_t>("<i8");
  expect_reads_and_converts<std::uint8_t>("|u1");
  expect_reads_and_converts<std::uint16_t>("<u2");
  expect_reads_and_converts<std::uint32_t>("<u4");
  expect_reads_and_converts<std::uint64_t>("<u8");
}

TEST(Npy, NarrowingOnReadNamesTheArgumentAndItsValue) {
  const std::vector<std::int64_t> v = {5, std::int64_t{1} << 40};
  const auto path = temp_path("wide.npy");
  write_file(path, npy_file("<i8", false, {2}, v));
  try {
    read_npy(path, DType::Int32, "seeds");
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind("seeds: value 1099511627776 is outside the range of int32", 0),
        0u)
        << e.what();
  }
  const std::vector<std::int64_t> odd = {(std::int64_t{1} << 40) + 1};
  write_file(path, npy_file("<i8", false, {1}, odd));
  EXPECT_THROW(read_npy(path, DType::Float32, "x"), InvalidInput);  // not held exactly
  std::remove(path.c_str());
}

TEST(Npy, BigEndianFilesAreByteSwapped) {
  const std::vector<double> d = {1.5, -2.25, 1e300};
  EXPECT_EQ(values<double>(parse_npy(npy_file(">f8", false, {3}, byte_swapped(d)), "be")), d);
  const std::vector<std::int32_t> i = {-7, 123456789};
  EXPECT_EQ(values<std::int32_t>(parse_npy(npy_file(">i4", false, {2}, byte_swapped(i)), "be")), i);
  const std::vector<std::uint16_t> u = {0x0102, 0xfffe};
  EXPECT_EQ(values<std::uint16_t>(parse_npy(npy_file(">u2", false, {2}, byte_swapped(u)), "be")),
            u);
  // Converting while swapping: big-endian float64 features read as float32.
  const std::string path = temp_path("be.npy");
  write_file(path, npy_file(">f8", false, {3, 1}, byte_swapped(d)));
  EXPECT_THROW(read_npy(path, DType::Float32, "features"), InvalidInput);  // 1e300
  write_file(path, npy_file(">f8", false, {2, 1}, byte_swapped(std::vector<double>{1.5, -2.25})));
  const auto f = read_npy(path, DType::Float32, "features");
  EXPECT_EQ(values<float>(f), (std::vector<float>{1.5f, -2.25f}));
  EXPECT_EQ(f.conversion(), "float64->float32");
  std::remove(path.c_str());
}

TEST(Npy, EmptyArraysAreValid) {
  const std::vector<std::int64_t> none;
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{2, 0}, {0}, {0, 5}, {3, 0, 2}}) {
    for (const bool fortran : {false, true}) {
      const auto a = parse_npy(npy_file("<i8", fortran, shape, none), "empty");
      EXPECT_EQ(a.shape, shape);
      EXPECT_EQ(a.size(), 0);
      EXPECT_TRUE(a.bytes.empty());
    }
  }
  // numpy's np.save("edge_index.npy", np.zeros((2, 0), np.int64)), through the file reader and
  // a conversion.
  const auto path = temp_path("empty.npy");
  const std::vector<std::int64_t> shape = {2, 0};
  write_npy(path, std::span<const std::int64_t>(shape), static_cast<const std::int64_t*>(nullptr));
  EXPECT_EQ(read_npy(path).shape, shape);
  EXPECT_EQ(read_npy_as<std::int32_t>(path, "e").size(), 0);
  // An extent of 0 makes any other extent valid.
  EXPECT_EQ(parse_npy(npy_file(npy_dict("<f8", false, {0, std::int64_t{1} << 62}), nullptr, 0), "z")
                .size(),
            0);
  // ... also when the extents before the 0 overflow on their own.
  const std::int64_t big = std::int64_t{1} << 40;
  EXPECT_EQ(parse_npy(npy_file(npy_dict("<f8", true, {big, big, 0}), nullptr, 0), "z").size(), 0);
  std::remove(path.c_str());
}

TEST(Npy, ZeroDimensionalArrayHoldsOneElement) {
  const auto a = parse_npy(npy_file("<f8", false, {}, std::vector<double>{2.5}), "scalar");
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(values<double>(a), std::vector<double>{2.5});
}

TEST(Npy, BoolBytesOtherThanZeroReadAsTrue) {
  const std::vector<std::uint8_t> raw = {0, 1, 2, 255};
  const auto a = parse_npy(npy_file("|b1", false, {4}, raw), "mask");
  EXPECT_EQ(a.dtype, DType::Bool);
  EXPECT_EQ(values<bool>(a), (std::vector<bool>{false, true, true, true}));
  // A Fortran-ordered (20000, 2) mask: pieces of 16384 rows.
  const std::vector<std::int64_t> shape = {20000, 2};
  std::vector<std::uint8_t> c(40000);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<std::uint8_t>(i % 3);
  const auto f = parse_npy(npy_file("|b1", true, shape, to_fortran(c, shape)), "mask");
  const auto b = f.as<bool>("mask");
  for (std::size_t i = 0; i < c.size(); ++i) ASSERT_EQ(b[i], c[i] != 0) << i;
}

TEST(Npy, HeaderVersionsTwoAndThreeAndPython2Extents) {
  const std::vector<float> v = {1, 2, 3, 4};
  for (const int version : {2, 3}) {
    const auto a = parse_npy(npy_file(npy_dict("<f4", false, {2, 2}), v.data(), 16, version), "v");
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 2}));
  }
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 2L), }";
  EXPECT_EQ(parse_npy(npy_file(dict, v.data(), 16), "py2").size(), 4);
  const std::string reordered = "{\"shape\": (4,), \"descr\": \"<f4\", \"fortran_order\": False}";
  EXPECT_EQ(parse_npy(npy_file(reordered, v.data(), 16), "reordered").size(), 4);
}

TEST(Npy, MalformedHeadersAreRefusedNamingTheFile) {
  const std::vector<double> v(4, 1.0);
  const auto with = [&](const std::string& dict) { return npy_file(dict, v.data(), 32); };
  for (const std::string dict : {
           "{'descr': '<f8', 'fortran_order': False}",                         // no shape
           "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), 'x': 1}",  // extra key
           "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (4,)}",          // not a bool
           "{'descr': '<f8', 'fortran_order': False, 'shape': (-4,)}",         // negative
           "{'descr': '<f8', 'fortran_order': False, 'shape': (4.0,)}",        // not an int
           "{'descr': '<f8, 'fortran_order': False, 'shape': (4,)}",           // quoting
           "{'descr': '<f8', 'fortran_order': False, 'shape': (4,)} tail",     // after dict
           "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (4,)}",
           "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}",
           "[1, 2, 3]",
       }) {
    const auto message = message_of(with(dict));
    EXPECT_EQ(message.rfind("f.npy: ", 0), 0u) << dict << " -> " << message;
  }
  // Dtypes numpy writes that birkhoff does not read are type errors.
  for (const std::string descr : {"<f2", "<c16", "|S3", "|O", "<M8[ns]"}) {
    EXPECT_THROW(parse_npy(npy_file(descr, false, {1}, v), "f.npy"), InvalidType) << descr;
  }
  EXPECT_THROW(
      parse_npy(with("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (4,)}"), "f.npy"),
      InvalidType);
}

TEST(Npy, HeaderLengthBeyondTheFileIsRefusedBeforeReading) {
  // Version 2 length field of 2^31 in a 64-byte file.
  std::vector<std::byte> file(64, std::byte{' '});
  std::memcpy(file.data(), "\x93NUMPY\x02\x00\x00\x00\x00\x80", 12);
  EXPECT_NE(message_of(file).find("truncated .npy header"), std::string::npos);
  std::memcpy(file.data(), "\x93NUMPY\x04\x00", 8);
  EXPECT_NE(message_of(file).find("unsupported .npy format version 4"), std::string::npos);
}

TEST(Npy, HugeShapeInSmallFileIsRefusedBeforeAllocating) {
  // Refused with InvalidInput, not std::bad_alloc: nothing of the announced size is allocated.
  const std::vector<double> v(8, 0.0);
  for (const auto& shape :
       std::vector<std::vector<std::int64_t>>{{std::int64_t{1} << 40, std::int64_t{1} << 20},
                                              {2305843009213693953, 1},
                                              {4611686018427387905, 4},
                                              {std::int64_t{1} << 32, std::int64_t{1} << 32},
                                              {9}}) {
    for (const bool fortran : {false, true}) {
      const auto message = message_of(npy_file(npy_dict("<f8", fortran, shape), v.data(), 64));
      EXPECT_EQ(message.rfind("f.npy: ", 0), 0u) << message;
      EXPECT_NE(message.find("file"), std::string::npos) << message;
    }
  }
  EXPECT_THROW(read_npy(std::filesystem::temp_directory_path().string()), InvalidInput);
}

TEST(Npy, ConvertInPlaceRecordsTheOriginalDtype) {
  NpyArray a = parse_npy(npy_file("<f8", false, {3}, std::vector<double>{1, 2, 3}), "x");
  const auto f = a.to<float>("x");
  EXPECT_EQ(std::vector<float>(f.begin(), f.end()), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(a.bytes.size(), 12u);
  EXPECT_EQ(a.conversion(), "float64->float32");
  a.convert(DType::Float64, "x");  // back to the file's dtype: nothing to report
  EXPECT_EQ(a.conversion(), "");
  EXPECT_THROW(a.to<std::int64_t>("x"), InvalidType);
}

}  // namespace
}  // namespace birkhoff::io
