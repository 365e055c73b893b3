// PRIVATE: sequential byte sources that the .npy reader streams from (a file, a buffer, an
// .npz member), each with a bound on what it can still deliver, so that nothing is allocated
// beyond what the input can hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>

namespace birkhoff::io::detail {

class ByteSource {
 public:
  explicit ByteSource(std::string name) : name_(std::move(name)) {}
  virtual ~ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  /// Reads up to `n` bytes into `out`; returns how many were read (fewer only at the end).
  /// Throws InvalidInput naming the source when the underlying read fails.
  virtual std::size_t read_some(void* out, std::size_t n) = 0;
  /// An upper bound on the bytes still to come.
  virtual std::uint64_t bound() const = 0;

  /// Whether read_at works (files and buffers; not inflated .npz members).
  virtual bool random_access() const { return false; }
  /// Reads exactly `n` bytes that start `offset` bytes past the current position, without
  /// moving it; throws InvalidInput("<name>: truncated <part>") when they are not all there.
  /// Only where random_access().
  virtual void read_at(std::uint64_t offset, void* out, std::size_t n, const char* part);

  /// Reads exactly `n` bytes; throws InvalidInput("<name>: truncated <part> ...") otherwise.
  void read_exact(void* out, std::size_t n, const char* part);
  /// The name used in error messages (a path, or archive:member).
  const std::string& name() const { return name_; }

 protected:
  [[noreturn]] void truncated(std::size_t got, std::size_t n, const char* part) const;

 private:
  std::string name_;
};

/// A regular file, read with stdio; the bound is the file size minus what was read.
class FileSource final : public ByteSource {
 public:
  /// Throws InvalidInput naming `path` when it is a directory, not a regular file or cannot be
  /// opened.
  explicit FileSource(const std::string& path);
  std::size_t read_some(void* out, std::size_t n) override;
  std::uint64_t bound() const override { return size_ - position_; }
  bool random_access() const override { return true; }
  void read_at(std::uint64_t offset, void* out, std::size_t n, const char* part) override;

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> file_;
  std::uint64_t size_ = 0, position_ = 0;
};

/// Bytes in memory (borrowed).
class MemorySource final : public ByteSource {
 public:
  MemorySource(std::span<const std::byte> data, std::string name)
      : ByteSource(std::move(name)), data_(data) {}
  std::size_t read_some(void* out, std::size_t n) override;
  std::uint64_t bound() const override { return data_.size() - position_; }
  bool random_access() const override { return true; }
  void read_at(std::uint64_t offset, void* out, std::size_t n, const char* part) override;

 private:
  std::span<const std::byte> data_;
  std::size_t position_ = 0;
};

}  // namespace birkhoff::io::detail
