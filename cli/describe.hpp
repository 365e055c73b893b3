// The CLI side of the struct descriptions (birkhoff/core/describe.hpp): flags from the fields
// of an options struct, JSON from the fields of a result, and the map from the names the core
// uses in its errors to the flags the user typed.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "birkhoff/core/describe.hpp"
#include "birkhoff/core/error.hpp"
#include "birkhoff/io/npy.hpp"
#include "birkhoff/io/npz.hpp"

namespace birkhoff::cli {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

/// "--" + name with underscores as dashes: the Python keyword's spelling.
template <class F>
std::string flag_of(const F& f) {
  std::string s = std::string("--") + f.name;
  for (char& c : s)
    if (c == '_') c = '-';
  return s;
}

/// The CLI11 names of a field's flag with `prefix` ("--" or "--no-"): the derived one, then the
/// older spelling where the description keeps one.
template <class F>
std::string flag_names_of(const F& f, const std::string& prefix) {
  std::string names = prefix + flag_of(f).substr(2);
  if (f.alias != nullptr) names += "," + prefix + std::string(f.alias).substr(2);
  return names;
}

/// Adds one flag per described field of S to `cmd`, writing into `target`; the defaults shown
/// are target's. Fields named in `skip` are left out.
template <class S>
void add_options(CLI::App* cmd, S& target, std::initializer_list<std::string> skip = {}) {
  for_each_field<S>([&](const auto& f) {
    for (const auto& s : skip)
      if (s == f.name) return;
    using M = std::remove_reference_t<decltype(target.*(f.member))>;
    M& value = target.*(f.member);
    const std::string flag = flag_names_of(f, "--");
    if constexpr (std::is_same_v<M, bool>) {
      if (value) {
        cmd->add_flag_callback(
            flag_names_of(f, "--no-"), [&value] { value = false; },
            std::string("turn off: ") + f.help);
      } else {
        cmd->add_flag(flag, value, f.help);
      }
    } else if constexpr (std::is_enum_v<M>) {
      std::vector<std::string> spellings;
      for (const auto& n : f.names) spellings.emplace_back(n.name);
      const auto names = f.names;
      cmd->add_option_function<std::string>(
             flag, [&value, names](const std::string& s) { value = *enum_value(names, s); }, f.help)
          ->check(CLI::IsMember(spellings))
          ->default_str(enum_name(f.names, value))
          ->type_name("");
    } else if constexpr (is_optional<M>::value || is_vector<M>::value) {
      cmd->add_option(flag, value, f.help);
    } else {
      cmd->add_option(flag, value, f.help)->capture_default_str();
    }
  });
}

/// Core argument names of S's fields -> the CLI's flags, for rethrow_with_cli_names.
template <class S>
std::vector<std::pair<std::string, std::string>> flag_names() {
  std::vector<std::pair<std::string, std::string>> out;
  for_each_field<S>([&](const auto& f) { out.emplace_back(f.name, flag_of(f)); });
  return out;
}

/// One JSON object with every described field of `s`.
template <class S>
nlohmann::json to_json(const S& s) {
  nlohmann::json j = nlohmann::json::object();
  for_each_field<S>([&](const auto& f) {
    using M = std::remove_cv_t<std::remove_reference_t<decltype(s.*(f.member))>>;
    const M& value = s.*(f.member);
    if constexpr (std::is_enum_v<M>) {
      j[f.name] = enum_name(f.names, value);
    } else if constexpr (is_optional<M>::value) {
      j[f.name] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
    } else if constexpr (is_struct_vector<M>::value) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& e : value) a.push_back(to_json(e));
      j[f.name] = a;
    } else {
      j[f.name] = value;
    }
  });
  return j;
}

/// Writes every described array of `s` as DIR/NAME.npy with its described shape; an optional
/// array left empty although its shape is not (not asked for) is not written.
template <class S>
void write_arrays(const std::string& dir, const S& s) {
  for_each_array<S>([&](const auto& a) {
    if (const auto shape = array_shape(a, s))
      io::write_npy(dir + "/" + a.name + ".npy", std::span<const std::int64_t>(*shape),
                    (s.*(a.member)).data());
  });
}

/// Writes every described array of `s` as a member NAME of the .npz archive `path`, as
/// write_arrays does for a folder.
template <class S>
void write_npz(const std::string& path, const S& s) {
  io::NpzWriter npz(path);
  std::vector<std::vector<std::int64_t>> shapes;  // kept until close()
  for_each_array<S>([&](const auto& a) {
    if (auto shape = array_shape(a, s)) {
      shapes.push_back(std::move(*shape));
      npz.add_view(a.name, std::span<const std::int64_t>(shapes.back()), (s.*(a.member)).data());
    }
  });
  npz.close();
}

}  // namespace birkhoff::cli
