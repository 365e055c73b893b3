#include "byte_source.hpp"

#include <sys/stat.h>

#include <algorithm>
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
  if (done < n) {
    throw InvalidInput(name_ + ": truncated " + part + " (" + std::to_string(done) + " of " +
                       std::to_string(n) + " bytes)");
  }
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

std::size_t MemorySource::read_some(void* out, std::size_t n) {
  const std::size_t got = std::min(n, data_.size() - position_);
  if (got > 0) std::memcpy(out, data_.data() + position_, got);
  position_ += got;
  return got;
}

}  // namespace birkhoff::io::detail
