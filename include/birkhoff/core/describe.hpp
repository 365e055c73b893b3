#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace birkhoff {

/// The name of one value of an enum option, as the front ends spell it ("converge").
template <class E>
struct EnumName {
  const char* name;
  E value;
};

/// One field of an options or result struct: the single description from which the CLI flag,
/// the Python keyword argument, the JSON key and the help text are produced, so a default is
/// written once (in the struct) and a name once (here).
///
/// `name` is the field's snake_case name (Python keyword, JSON key, the name errors use; the
/// CLI flag is "--" + name with dashes); `alias` an older CLI spelling that is still accepted
/// (nullptr: none; CHANGELOG lists them); `names` the spellings of an enum's values.
template <class S, class M>
struct Field {
  const char* name;
  M S::*member;
  const char* help;
  const char* alias = nullptr;
  std::span<const EnumName<M>> names = {};
};

template <class S, class M>
constexpr Field<S, M> field(const char* name, M S::*member, const char* help,
                            const char* flag = nullptr) {
  return {name, member, help, flag, {}};
}

template <class S, class E, std::size_t N>
constexpr Field<S, E> field(const char* name, E S::*member, const char* help,
                            const EnumName<E> (&names)[N], const char* flag = nullptr) {
  return {name, member, help, flag, std::span<const EnumName<E>>(names)};
}

/// One array of a result: `name` is the output file NAME.npy and the Python key, `shape` its
/// shape in the result (row-major), `optional` an array left empty when not asked for although
/// its shape is not (the front ends then write no file and give None).
template <class S, class T>
struct ArrayField {
  const char* name;
  std::vector<T> S::*member;
  std::vector<std::int64_t> (*shape)(const S&);
  const char* help;
  bool optional = false;
};

template <class S, class T>
constexpr ArrayField<S, T> array_field(const char* name, std::vector<T> S::*member,
                                       std::vector<std::int64_t> (*shape)(const S&),
                                       const char* help, bool optional = false) {
  return {name, member, shape, help, optional};
}

/// Specialise for each described struct with `static constexpr auto fields()` returning a tuple
/// of Field values, and for a result with arrays `static constexpr auto arrays()` returning a
/// tuple of ArrayField values.
template <class S>
struct Describe;

/// A vector of described structs (nested results, such as a report's levels): the front ends
/// write it as a list of objects.
template <class T>
struct is_struct_vector : std::false_type {};
template <class T>
struct is_struct_vector<std::vector<T>> : std::is_class<T> {};

/// Calls f(field) for every described field of S, in order.
template <class S, class F>
void for_each_field(F&& f) {
  std::apply([&](const auto&... fields) { (f(fields), ...); }, Describe<S>::fields());
}

/// Calls f(array_field) for every described array of S, in order.
template <class S, class F>
void for_each_array(F&& f) {
  std::apply([&](const auto&... arrays) { (f(arrays), ...); }, Describe<S>::arrays());
}

/// The shape of the described array `a` of `s`, or nullopt for an optional array not asked for
/// (left empty although its shape is not). Throws std::logic_error when the values do not fill
/// the shape (a description that disagrees with its struct).
template <class S, class T>
std::optional<std::vector<std::int64_t>> array_shape(const ArrayField<S, T>& a, const S& s) {
  std::vector<std::int64_t> shape = a.shape(s);
  std::int64_t size = 1;
  for (const std::int64_t e : shape) size *= e;
  const auto& values = s.*(a.member);
  if (a.optional && values.empty() && size != 0) return std::nullopt;
  if (size != static_cast<std::int64_t>(values.size()))
    throw std::logic_error(std::string(a.name) + ": holds " + std::to_string(values.size()) +
                           " values, its shape says " + std::to_string(size));
  return shape;
}

/// The enum value spelled `name`, or nullptr.
template <class E>
const E* enum_value(std::span<const EnumName<E>> names, std::string_view name) {
  for (const auto& n : names)
    if (name == n.name) return &n.value;
  return nullptr;
}

/// The spelling of an enum value ("?" if undescribed).
template <class E>
const char* enum_name(std::span<const EnumName<E>> names, E value) {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}
template <class E, std::size_t N>
const char* enum_name(const EnumName<E> (&names)[N], E value) {
  return enum_name(std::span<const EnumName<E>>(names), value);
}

}  // namespace birkhoff
