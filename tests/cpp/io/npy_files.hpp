// Builders of .npy files byte by byte, following numpy's format description (NEP 1), for
// tests of what the reader accepts: any descr, Fortran order, header versions 1-3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace birkhoff::io::testing {

/// A path in the temporary folder, unique to this test binary.
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("birkhoff_io_test_" + name)).string();
}

/// The header dictionary as numpy writes it, e.g. "{'descr': '<f8', 'fortran_order': False,
/// 'shape': (2, 3), }".
inline std::string npy_dict(const std::string& descr, bool fortran,
                            const std::vector<std::int64_t>& shape) {
  std::string d = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                  ", 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    d += std::to_string(shape[i]) + ",";
    if (i + 1 < shape.size()) d += " ";
  }
  if (shape.size() > 1) d.pop_back();
  return d + "), }";
}

/// A .npy file: magic, `version`, the header length, `dict` padded with spaces and '\n' to a
/// multiple of 64 bytes, then `data`.
inline std::vector<std::byte> npy_file(const std::string& dict, const void* data, std::size_t bytes,
                                       int version = 1) {
  const std::size_t prefix = version == 1 ? 10 : 12;
  std::string header = dict;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header.push_back('\n');
  std::string file = std::string("\x93NUMPY", 6);
  file.push_back(static_cast<char>(version));
  file.push_back(0);
  for (std::size_t i = 0; i < prefix - 8; ++i)
    file.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  file += header;
  std::vector<std::byte> out(file.size() + bytes);
  std::memcpy(out.data(), file.data(), file.size());
  if (bytes > 0) std::memcpy(out.data() + file.size(), data, bytes);
  return out;
}

template <class T>
std::vector<std::byte> npy_file(const std::string& descr, bool fortran,
                                const std::vector<std::int64_t>& shape, const std::vector<T>& v) {
  return npy_file(npy_dict(descr, fortran, shape), v.data(), v.size() * sizeof(T));
}

inline void write_file(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

/// The elements of a C-order array of `shape` in Fortran order (first index fastest).
template <class T>
std::vector<T> to_fortran(const std::vector<T>& c, const std::vector<std::int64_t>& shape) {
  std::vector<T> f(c.size());
  for (std::size_t flat = 0; flat < c.size(); ++flat) {
    // C index -> multi-index -> Fortran offset.
    std::size_t rest = flat, offset = 0, stride = 1;
    std::vector<std::size_t> index(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
      index[k] = rest % static_cast<std::size_t>(shape[k]);
      rest /= static_cast<std::size_t>(shape[k]);
    }
    for (std::size_t k = 0; k < shape.size(); ++k) {
      offset += index[k] * stride;
      stride *= static_cast<std::size_t>(shape[k]);
    }
    f[offset] = c[flat];
  }
  return f;
}

/// `v` with the bytes of each element reversed (a big-endian file's data on this host).
template <class T>
std::vector<T> byte_swapped(std::vector<T> v) {
  for (auto& x : v) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &x, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
    std::memcpy(&x, b, sizeof(T));
  }
  return v;
}

}  // namespace birkhoff::io::testing
