#include "birkhoff/io/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "birkhoff/core/error.hpp"

namespace birkhoff::io {
namespace {

template <class F, class T>
std::vector<T> converted(const std::vector<F>& v, const std::string& what = "arg") {
  std::vector<T> out(v.size());
  convert_elements(dtype_of<F>(), v.data(), dtype_of<T>(), out.data(), v.size(), what);
  return out;
}

template <class F>
void expect_extremes_reach_int64() {
  const std::vector<F> v = {std::numeric_limits<F>::min(), 0, 1, std::numeric_limits<F>::max()};
  const auto out = converted<F, std::int64_t>(v);
  for (std::size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(out[i], static_cast<std::int64_t>(v[i])) << dtype_name(dtype_of<F>());
}

TEST(Dtype, EveryIntegerDtypeButUint64ConvertsToInt64Exactly) {
  expect_extremes_reach_int64<std::int8_t>();
  expect_extremes_reach_int64<std::int16_t>();
  expect_extremes_reach_int64<std::int32_t>();
  expect_extremes_reach_int64<std::int64_t>();
  expect_extremes_reach_int64<std::uint8_t>();
  expect_extremes_reach_int64<std::uint16_t>();
  expect_extremes_reach_int64<std::uint32_t>();
  const std::vector<std::uint64_t> fits = {0, std::uint64_t{1} << 62};
  EXPECT_EQ((converted<std::uint64_t, std::int64_t>(fits)[1]), std::int64_t{1} << 62);
}

TEST(Dtype, OutOfRangeIntegersThrowNamingTheArgument) {
  const std::vector<std::uint64_t> big = {1, std::uint64_t{1} << 63};
  try {
    converted<std::uint64_t, std::int64_t>(big, "edge_index");
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("edge_index: value 9223372036854775808"),
              std::string::npos)
        << e.what();
  }
  const std::vector<std::int64_t> wide = {std::int64_t{1} << 31};
  EXPECT_THROW((converted<std::int64_t, std::int32_t>(wide, "seeds")), InvalidInput);
  const std::vector<std::int64_t> negative = {-1};
  EXPECT_THROW((converted<std::int64_t, std::uint32_t>(negative)), InvalidInput);
  const std::vector<std::int64_t> fits = {-(std::int64_t{1} << 31), (std::int64_t{1} << 31) - 1};
  EXPECT_EQ((converted<std::int64_t, std::int32_t>(fits)),
            (std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(),
                                       std::numeric_limits<std::int32_t>::max()}));
}

TEST(Dtype, FloatsConvertBothWaysAndNarrowingChecksTheRange) {
  const std::vector<float> f = {1.5f, -0.25f, std::numeric_limits<float>::max()};
  EXPECT_EQ((converted<float, double>(f)),
            (std::vector<double>{1.5, -0.25, 3.4028234663852886e38}));
  const std::vector<double> d = {0.1, std::numeric_limits<double>::infinity(), std::nan("")};
  const auto back = converted<double, float>(d);
  EXPECT_EQ(back[0], 0.1f);
  EXPECT_TRUE(std::isinf(back[1]));
  EXPECT_TRUE(std::isnan(back[2]));
  const std::vector<double> huge = {1e39};
  EXPECT_THROW((converted<double, float>(huge, "features")), InvalidInput);
}

TEST(Dtype, IntegersConvertToFloatsOnlyWhereExact) {
  const std::vector<std::int64_t> exact32 = {-(1 << 24), 1 << 24};
  EXPECT_EQ((converted<std::int64_t, float>(exact32)),
            (std::vector<float>{-16777216.f, 16777216.f}));
  const std::vector<std::int64_t> inexact32 = {(1 << 24) + 1};
  EXPECT_THROW((converted<std::int64_t, float>(inexact32)), InvalidInput);
  const std::vector<std::int64_t> powers = {std::int64_t{1} << 40,
                                            std::numeric_limits<std::int64_t>::min()};
  EXPECT_EQ((converted<std::int64_t, float>(powers)), (std::vector<float>{0x1p40f, -0x1p63f}));
  const std::vector<std::int64_t> top = {std::numeric_limits<std::int64_t>::max()};
  EXPECT_THROW((converted<std::int64_t, double>(top)), InvalidInput);  // rounds to 2^63
  const std::vector<std::uint64_t> top_u = {std::numeric_limits<std::uint64_t>::max()};
  EXPECT_THROW((converted<std::uint64_t, float>(top_u)), InvalidInput);  // rounds to 2^64
  EXPECT_EQ((converted<std::int64_t, double>(inexact32))[0], 16777217.0);
  const std::vector<std::uint64_t> inexact64 = {(std::uint64_t{1} << 53) + 1};
  EXPECT_THROW((converted<std::uint64_t, double>(inexact64)), InvalidInput);
}

TEST(Dtype, FloatsNeverBecomeIntegersAndBoolStaysBool) {
  const std::vector<double> d = {1.0};
  EXPECT_THROW((converted<double, std::int64_t>(d, "edge_index")), InvalidType);
  EXPECT_FALSE(is_convertible(DType::Bool, DType::Int64));
  EXPECT_FALSE(is_convertible(DType::Int8, DType::Bool));
  EXPECT_FALSE(is_convertible(DType::Float32, DType::UInt8));
  EXPECT_TRUE(is_convertible(DType::UInt16, DType::Float32));
  try {
    converted<double, std::int32_t>(d, "seeds");
    FAIL() << "no exception";
  } catch (const InvalidType& e) {
    EXPECT_STREQ(e.what(), "seeds: expected int32 (or another integer dtype), got float64");
  }
}

TEST(Dtype, NarrowingInPlaceReadsEachElementBeforeOverwritingIt) {
  std::vector<std::int64_t> v = {1, -2, 3, -4, 5, 127};
  convert_elements(DType::Int64, v.data(), DType::Int8, v.data(), v.size(), "v");
  const auto* bytes = reinterpret_cast<const std::int8_t*>(v.data());
  EXPECT_EQ((std::vector<std::int8_t>(bytes, bytes + 6)),
            (std::vector<std::int8_t>{1, -2, 3, -4, 5, 127}));
}

TEST(Dtype, ByteswapReversesEachElement) {
  std::vector<std::uint32_t> v = {0x01020304u, 0xa0b0c0d0u};
  byteswap_elements(v.data(), 4, v.size());
  EXPECT_EQ(v, (std::vector<std::uint32_t>{0x04030201u, 0xd0c0b0a0u}));
  std::vector<std::uint16_t> s = {0x0102};
  byteswap_elements(s.data(), 2, 1);
  EXPECT_EQ(s[0], 0x0201);
  std::vector<std::uint64_t> l = {0x0102030405060708ull};
  byteswap_elements(l.data(), 8, 1);
  EXPECT_EQ(l[0], 0x0807060504030201ull);
}

TEST(Dtype, NamesAndSizesAreNumpys) {
  EXPECT_STREQ(dtype_name(DType::UInt16), "uint16");
  EXPECT_EQ(dtype_size(DType::UInt16), 2u);
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
  EXPECT_EQ(conversion_name(DType::Float64, DType::Float32), "float64->float32");
}

}  // namespace
}  // namespace birkhoff::io
