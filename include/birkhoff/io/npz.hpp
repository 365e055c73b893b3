#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/io/npy.hpp"

namespace birkhoff::io {

/// An .npz archive (numpy.savez: stored members; numpy.savez_compressed: deflated members),
/// read through libzip one member at a time. A member is streamed: its .npy header is read and
/// checked first, then its data goes straight into the array, inflated on the fly when
/// compressed, so neither the archive nor a whole compressed member is ever held in memory.
class NpzReader {
 public:
  /// Opens the archive at `path`.
  /// @throws InvalidInput naming `path` when it is missing, a directory or not a zip archive.
  explicit NpzReader(const std::string& path);
  /// Opens an archive held in memory; `data` is borrowed and must outlive the reader. `name`
  /// is used in error messages.
  NpzReader(std::span<const std::byte> data, const std::string& name);
  ~NpzReader();
  NpzReader(const NpzReader&) = delete;
  NpzReader& operator=(const NpzReader&) = delete;

  /// Member names without their ".npy" suffix, in archive order (numpy's NpzFile.files).
  const std::vector<std::string>& keys() const;
  /// Whether a member `key` (without ".npy") exists.
  bool contains(const std::string& key) const;

  /// Reads member `key` as read_npy reads a file (any byte order, C or Fortran order).
  /// @throws InvalidInput naming "<archive>:<key>" when the member is missing, encrypted,
  ///         compressed otherwise than by deflate, corrupt, or not a valid .npy array;
  ///         InvalidType for a dtype read_npy refuses.
  NpyArray read(const std::string& key) const;
  /// read(key), converting to `dtype` while reading (see NpyArray::convert); conversion errors
  /// name `what`.
  NpyArray read(const std::string& key, DType dtype, const std::string& what) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads every member of the .npz archive at `path`, keyed as numpy.load keys them (member
/// names without ".npy"). Errors as NpzReader.
std::map<std::string, NpyArray> read_npz(const std::string& path);

/// Reads every member of an .npz archive held in memory; `name` is used in error messages.
std::map<std::string, NpyArray> parse_npz(std::span<const std::byte> data, const std::string& name);

/// Writes an .npz archive through libzip in numpy.savez's layout: one stored (uncompressed)
/// member "<name>.npy" per array, each a C-order .npy file, which numpy.load reads. Members
/// above 4 GiB get zip64 records. libzip writes the archive when close() is called, to a
/// temporary file renamed over `path`: the arrays must stay available until then (add()
/// keeps the ones it is given; add_view() borrows).
class NpzWriter {
 public:
  /// Starts an archive at `path`.
  /// @throws InvalidInput naming `path` when it cannot be created.
  explicit NpzWriter(const std::string& path);
  /// Calls close() if it was not called, ignoring its errors.
  ~NpzWriter();
  NpzWriter(const NpzWriter&) = delete;
  NpzWriter& operator=(const NpzWriter&) = delete;

  /// Adds member `name` (".npy" is appended) holding `data` (C order, `shape`), which the
  /// writer keeps until close().
  /// @throws InvalidInput naming `name` when it repeats a member or the data does not have
  ///         the product of `shape` elements.
  template <class T>
  void add(const std::string& name, std::span<const std::int64_t> shape, std::vector<T> data) {
    auto kept = std::make_shared<std::vector<T>>(std::move(data));
    add_member(name, dtype_of<T>(), shape, kept->data(), kept->size() * sizeof(T), kept);
  }
  /// Adds an array read earlier (kept until close()).
  void add(const std::string& name, NpyArray array);
  /// Adds member `name` holding the product of `shape` elements of `dtype` at `data`,
  /// borrowed without a copy: `data` must stay valid until close() returns.
  void add_view(const std::string& name, DType dtype, std::span<const std::int64_t> shape,
                const void* data);
  template <class T>
  void add_view(const std::string& name, std::span<const std::int64_t> shape, const T* data) {
    add_view(name, dtype_of<T>(), shape, data);
  }

  /// Writes the archive. An archive without members is written as an empty zip file, as
  /// numpy.savez() writes it.
  /// @throws InvalidInput naming the path when writing fails.
  void close();

 private:
  void add_member(const std::string& name, DType dtype, std::span<const std::int64_t> shape,
                  const void* data, std::size_t bytes, std::shared_ptr<const void> keep);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace birkhoff::io
