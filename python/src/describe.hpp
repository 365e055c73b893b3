// PRIVATE (python): options and results of the engine to and from Python, through their one
// description (birkhoff/core/describe.hpp): keyword names, enum spellings and defaults are the
// struct's own, as in the CLI (cli/describe.hpp).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "arrays.hpp"
#include "birkhoff/core/describe.hpp"
#include "birkhoff/core/error.hpp"

namespace birkhoff::python {

namespace nb = nanobind;

/// Options of type S from a dict of keyword arguments: each described field present in
/// `kwargs` is set (an enum from its spelling, None for an optional), the others keep the
/// struct's defaults. Raises TypeError for a key that S does not describe or a value of the
/// wrong type, ValueError for an enum spelling that does not exist; each names the keyword.
template <class S>
S options_from_kwargs(const nb::dict& kwargs) {
  S s;
  std::size_t used = 0;
  for_each_field<S>([&](const auto& f) {
    if (!kwargs.contains(f.name)) return;
    ++used;
    using M = std::remove_cv_t<std::remove_reference_t<decltype(s.*(f.member))>>;
    const nb::handle value = kwargs[f.name];
    M& target = s.*(f.member);
    if constexpr (std::is_enum_v<M>) {
      std::string spelling;
      if (!nb::try_cast(value, spelling))
        throw InvalidType(std::string(f.name) + ": must be a string");
      const M* v = enum_value(f.names, spelling);
      if (v == nullptr) {
        std::string allowed;
        for (const auto& n : f.names)
          allowed += (allowed.empty() ? "'" : ", '") + std::string(n.name) + "'";
        throw InvalidInput(std::string(f.name) + ": must be one of " + allowed + ", got '" +
                           spelling + "'");
      }
      target = *v;
    } else if (!nb::try_cast(value, target)) {
      throw InvalidType(std::string(f.name) + ": wrong type (" +
                        nb::cast<std::string>(nb::str(value.type())) + ")");
    }
  });
  if (used != kwargs.size()) {
    for (const auto& item : kwargs) {
      const auto key = nb::cast<std::string>(nb::str(item.first));
      bool known = false;
      for_each_field<S>([&](const auto& f) { known = known || key == f.name; });
      if (!known) throw InvalidType(key + ": not an option of this solver");
    }
  }
  return s;
}

/// A dict with every described field of `s` (enums by their spelling, nested results as lists
/// of dicts): the same keys as the CLI's JSON.
template <class S>
nb::dict to_dict(const S& s) {
  nb::dict d;
  for_each_field<S>([&](const auto& f) {
    using M = std::remove_cv_t<std::remove_reference_t<decltype(s.*(f.member))>>;
    const M& value = s.*(f.member);
    if constexpr (std::is_enum_v<M>) {
      d[f.name] = enum_name(f.names, value);
    } else if constexpr (is_struct_vector<M>::value) {
      nb::list l;
      for (const auto& e : value) l.append(to_dict(e));
      d[f.name] = l;
    } else {
      d[f.name] = nb::cast(value);
    }
  });
  return d;
}

/// The description of options S for the documentation: one dict per field with its name,
/// help text, default (the struct's own), the enum spellings when it has them and the older CLI
/// alias; the API reference renders these, so it says what the front ends accept.
template <class S>
nb::list describe_options() {
  const nb::dict defaults = to_dict(S{});
  nb::list fields;
  for_each_field<S>([&](const auto& f) {
    nb::dict d;
    d["name"] = f.name;
    d["help"] = f.help;
    d["default"] = defaults[f.name];
    nb::list choices;
    for (const auto& n : f.names) choices.append(n.name);
    d["choices"] = choices;
    d["alias"] = f.alias == nullptr ? nb::none() : nb::cast(std::string(f.alias));
    fields.append(d);
  });
  return fields;
}

/// Moves every described array of `s` into `d` as a numpy array of its described shape, without
/// copying (an optional array not asked for becomes None): the same names as the CLI's files.
template <class S>
void move_arrays(S&& s, nb::dict& d) {
  using T = std::remove_cvref_t<S>;
  // Every shape first: a shape may read an array (its size) that an earlier move empties.
  std::vector<std::optional<std::vector<std::int64_t>>> shapes;
  for_each_array<T>([&](const auto& a) { shapes.push_back(array_shape(a, s)); });
  std::size_t next = 0;
  for_each_array<T>([&](const auto& a) {
    const auto& shape = shapes[next++];
    if (!shape) {
      d[a.name] = nb::none();
      return;
    }
    const std::vector<std::size_t> dims(shape->begin(), shape->end());
    d[a.name] = to_numpy(std::move(s.*(a.member)), dims);
  });
}

}  // namespace birkhoff::python
