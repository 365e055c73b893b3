#include "birkhoff/io/dtype.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "birkhoff/core/error.hpp"

namespace birkhoff::io {
namespace {

template <class T>
struct Tag {
  using type = T;
};

// Calls fn(Tag<T>{}) with T the C++ type of `dtype`.
template <class Fn>
void visit(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Bool:
      return fn(Tag<bool>{});
    case DType::Int8:
      return fn(Tag<std::int8_t>{});
    case DType::Int16:
      return fn(Tag<std::int16_t>{});
    case DType::Int32:
      return fn(Tag<std::int32_t>{});
    case DType::Int64:
      return fn(Tag<std::int64_t>{});
    case DType::UInt8:
      return fn(Tag<std::uint8_t>{});
    case DType::UInt16:
      return fn(Tag<std::uint16_t>{});
    case DType::UInt32:
      return fn(Tag<std::uint32_t>{});
    case DType::UInt64:
      return fn(Tag<std::uint64_t>{});
    case DType::Float32:
      return fn(Tag<float>{});
    case DType::Float64:
      return fn(Tag<double>{});
  }
}

template <class T>
constexpr bool kInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class F, class T>
constexpr bool kConvertible = std::is_same_v<F, T> || (kInteger<F> && kInteger<T>) ||
                              (std::is_floating_point_v<F> && std::is_floating_point_v<T>) ||
                              (kInteger<F> && std::is_floating_point_v<T>);

template <class F, class T>
[[noreturn]] void out_of_range(F value, const std::string& what) {
  std::string shown;
  if constexpr (std::is_floating_point_v<F>) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(value));
    shown = buffer;
  } else {
    shown = std::to_string(
        static_cast<std::conditional_t<std::is_signed_v<F>, long long, unsigned long long>>(value));
  }
  const char* why = std::is_floating_point_v<T> && kInteger<F> ? " cannot be held exactly by "
                                                               : " is outside the range of ";
  throw InvalidInput(what + ": value " + shown + why + dtype_name(dtype_of<T>()) + " (converting " +
                     dtype_name(dtype_of<F>()) + " to " + dtype_name(dtype_of<T>()) + ")");
}

// Element by element through a local copy, so that in-place narrowing never overwrites an
// element before it is read (element i is written at or below where element i was read).
template <class F, class T>
void convert_typed(const std::byte* src, std::byte* dst, std::size_t count,
                   const std::string& what) {
  for (std::size_t i = 0; i < count; ++i) {
    F v;
    std::memcpy(&v, src + i * sizeof(F), sizeof(F));
    T out;
    if constexpr (std::is_same_v<F, T>) {
      out = v;
    } else if constexpr (kInteger<F> && kInteger<T>) {
      if (!std::in_range<T>(v)) out_of_range<F, T>(v, what);
      out = static_cast<T>(v);
    } else if constexpr (kInteger<F>) {
      // Integers convert to floats only where the float holds them exactly: inside F's range
      // (checked first, so that converting back is defined) and converting back to v.
      const T f = static_cast<T>(v);
      constexpr T kLow = static_cast<T>(std::numeric_limits<F>::min());
      constexpr T kEnd = static_cast<T>(std::numeric_limits<F>::max() / 2 + 1) * T(2);
      const bool exact = f >= kLow && f < kEnd && static_cast<F>(f) == v;
      if (!exact) out_of_range<F, T>(v, what);
      out = static_cast<T>(v);
    } else {
      if constexpr (sizeof(T) < sizeof(F)) {
        if (std::isfinite(v) && std::fabs(v) > static_cast<F>(std::numeric_limits<T>::max()))
          out_of_range<F, T>(v, what);
      }
      out = static_cast<T>(v);
    }
    std::memcpy(dst + i * sizeof(T), &out, sizeof(T));
  }
}

template <class U, class Swap>
void swap_each(std::byte* p, std::size_t count, Swap swap) {
  for (std::size_t i = 0; i < count; ++i, p += sizeof(U)) {
    U v;
    std::memcpy(&v, p, sizeof(U));
    v = swap(v);
    std::memcpy(p, &v, sizeof(U));
  }
}

}  // namespace

std::size_t dtype_size(DType dtype) {
  std::size_t size = 0;
  visit(dtype, [&](auto tag) { size = sizeof(typename decltype(tag)::type); });
  return size;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return "bool";
    case DType::Int8:
      return "int8";
    case DType::Int16:
      return "int16";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::UInt8:
      return "uint8";
    case DType::UInt16:
      return "uint16";
    case DType::UInt32:
      return "uint32";
    case DType::UInt64:
      return "uint64";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
  }
  return "?";
}

bool is_integer(DType dtype) {
  bool integer = false;
  visit(dtype, [&](auto tag) { integer = kInteger<typename decltype(tag)::type>; });
  return integer;
}

bool is_float(DType dtype) { return dtype == DType::Float32 || dtype == DType::Float64; }

bool is_convertible(DType from, DType to) {
  return from == to || (is_integer(from) && (is_integer(to) || is_float(to))) ||
         (is_float(from) && is_float(to));
}

std::string conversion_name(DType from, DType to) {
  return std::string(dtype_name(from)) + "->" + dtype_name(to);
}

void convert_elements(DType from, const void* src, DType to, void* dst, std::size_t count,
                      const std::string& what) {
  if (!is_convertible(from, to)) {
    throw InvalidType(what + ": expected " + dtype_name(to) +
                      (is_integer(to) ? " (or another integer dtype)"
                       : is_float(to) ? " (or another float or integer dtype)"
                                      : "") +
                      ", got " + dtype_name(from));
  }
  visit(from, [&](auto from_tag) {
    visit(to, [&](auto to_tag) {
      using F = typename decltype(from_tag)::type;
      using T = typename decltype(to_tag)::type;
      if constexpr (kConvertible<F, T>) {
        convert_typed<F, T>(static_cast<const std::byte*>(src), static_cast<std::byte*>(dst), count,
                            what);
      }
    });
  });
}

void byteswap_elements(void* data, std::size_t size, std::size_t count) {
  auto* p = static_cast<std::byte*>(data);
  switch (size) {
    case 2:
      return swap_each<std::uint16_t>(p, count,
                                      [](std::uint16_t v) { return __builtin_bswap16(v); });
    case 4:
      return swap_each<std::uint32_t>(p, count,
                                      [](std::uint32_t v) { return __builtin_bswap32(v); });
    case 8:
      return swap_each<std::uint64_t>(p, count,
                                      [](std::uint64_t v) { return __builtin_bswap64(v); });
    default:
      return;
  }
}

}  // namespace birkhoff::io
