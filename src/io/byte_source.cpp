#include "byte_source.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "birkhoff/core/error.hpp"

namespace birkhoff::io::detail {

void ByteSource::read_exact(void* out, std::size_t n, const char* part) {
  std::size_t done = 0;
  while (done < n) {
    const std::size_t got = read_some(static_cast<std::byte*>(out) + done, n - done);
    if (got == 0) break;
    done += got;
  }
  if (done < n) truncated(done, n, part);
}

void ByteSource::read_at(std::uint64_t, void*, std::size_t, const char*) {
  throw InvalidInput(name_ + ": positioned reads are not supported by this source");
}

void ByteSource::truncated(std::size_t got, std::size_t n, const char* part) const {
  throw InvalidInput(name_ + ": truncated " + part + " (" + std::to_string(got) + " of " +
                     std::to_string(n) + " bytes)");
}

FileSource::FileSource(const std::string& path) : ByteSource(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InvalidInput(path + ": is a directory");
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw InvalidInput(path + ": not a regular file");
  file_.reset(std::fopen(path.c_str(), "rb"));
  if (!file_) throw InvalidInput(path + ": cannot open file");
  struct stat st {};
  if (fstat(fileno(file_.get()), &st) != 0 || st.st_size < 0)
    throw InvalidInput(path + ": cannot read file");
  size_ = static_cast<std::uint64_t>(st.st_size);
}

std::size_t FileSource::read_some(void* out, std::size_t n) {
  const std::size_t got = std::fread(out, 1, n, file_.get());
  if (got < n && std::ferror(file_.get())) throw InvalidInput(name() + ": cannot read file");
  position_ = std::min(size_, position_ + got);
  return got;
}

void FileSource::read_at(std::uint64_t offset, void* out, std::size_t n, const char* part) {
  // pread leaves the stream (and stdio's buffer) where it is.
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got = pread(fileno(file_.get()), static_cast<std::byte*>(out) + done, n - done,
                              static_cast<off_t>(position_ + offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InvalidInput(name() + ": cannot read file");
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  if (done < n) truncated(done, n, part);
}

void MemorySource::read_at(std::uint64_t offset, void* out, std::size_t n, const char* part) {
  const std::uint64_t left = data_.size() - position_;
  if (offset > left || n > left - offset) {
    truncated(static_cast<std::size_t>(offset > left ? 0 : left - offset), n, part);
  }
  if (n > 0) std::memcpy(out, data_.data() + position_ + offset, n);
}

std::size_t MemorySource::read_some(void* out, std::size_t n) {
  const std::size_t got = std::min(n, data_.size() - position_);
  if (got > 0) std::memcpy(out, data_.data() + position_, got);
  position_ += got;
  return got;
}

}  // namespace birkhoff::io::detail
