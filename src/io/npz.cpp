// .npz archives through libzip: members streamed into arrays on reading, stored members on
// writing (numpy.savez's layout).
#include "birkhoff/io/npz.hpp"

#include <zip.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "byte_source.hpp"
#include "npy_stream.hpp"

namespace birkhoff::io {
namespace {

// A deflate stream expands at most 1032:1 (RFC 1951: a 258-byte match costs at least 2 bits).
constexpr std::uint64_t kMaxDeflateRatio = 1032;

std::string zip_message(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string message = zip_error_strerror(&error);
  zip_error_fini(&error);
  return message;
}

/// One member opened with zip_fopen_index, read as the .npy reader asks; its bound is the size
/// the central directory claims, capped by what the compressed bytes can expand to.
class ZipMemberSource final : public detail::ByteSource {
 public:
  ZipMemberSource(zip_file_t* file, std::uint64_t bound, std::string name)
      : ByteSource(std::move(name)), file_(file), bound_(bound) {}
  ~ZipMemberSource() override { zip_fclose(file_); }
  ZipMemberSource(const ZipMemberSource&) = delete;
  ZipMemberSource& operator=(const ZipMemberSource&) = delete;

  std::size_t read_some(void* out, std::size_t n) override {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(n, bound_ - read_));
    if (want == 0) return 0;
    const zip_int64_t got = zip_fread(file_, out, want);
    if (got < 0) throw InvalidInput(name() + ": " + zip_file_strerror(file_));
    read_ += static_cast<std::uint64_t>(got);
    return static_cast<std::size_t>(got);
  }
  std::uint64_t bound() const override { return bound_ - read_; }

 private:
  zip_file_t* file_;
  std::uint64_t bound_, read_ = 0;
};

}  // namespace

struct NpzReader::Impl {
  zip_t* archive = nullptr;
  std::string name;
  std::uint64_t archive_bytes = 0;
  std::vector<std::string> keys;
  std::vector<zip_uint64_t> index;

  ~Impl() {
    if (archive != nullptr) zip_discard(archive);
  }

  void list() {
    const zip_int64_t n = zip_get_num_entries(archive, 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* member = zip_get_name(archive, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
      if (member == nullptr) throw InvalidInput(name + ": " + zip_strerror(archive));
      std::string key = member;
      if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
      keys.push_back(std::move(key));
      index.push_back(static_cast<zip_uint64_t>(i));
    }
  }

  NpyArray read(const std::string& key, std::optional<DType> dtype, const std::string& what) {
    const std::string member = name + ":" + key;
    const auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) throw InvalidInput(member + ": no such member in the archive");
    const zip_uint64_t i = index[static_cast<std::size_t>(it - keys.begin())];
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive, i, 0, &st) != 0)
      throw InvalidInput(member + ": " + zip_strerror(archive));
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
      throw InvalidInput(member + ": encrypted members are not supported");
    const bool stored = st.comp_method == ZIP_CM_STORE;
    if (!stored && st.comp_method != ZIP_CM_DEFLATE)
      throw InvalidInput(member + ": compression method " + std::to_string(st.comp_method) +
                         " is not supported (numpy writes stored or deflated members)");
    // Nothing is allocated beyond what the member's bytes in this archive can expand to.
    std::uint64_t bound = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
    const std::uint64_t packed = std::min<std::uint64_t>(
        (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : archive_bytes, archive_bytes);
    bound = std::min(bound, stored ? packed : packed * kMaxDeflateRatio);
    zip_file_t* file = zip_fopen_index(archive, i, 0);
    if (file == nullptr) throw InvalidInput(member + ": " + zip_strerror(archive));
    ZipMemberSource source(file, bound, member);
    return detail::read_npy_stream(source, dtype, dtype ? what : member);
  }
};

NpzReader::NpzReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->name = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InvalidInput(path + ": is a directory");
  if (!std::filesystem::exists(path, ec)) throw InvalidInput(path + ": cannot open file");
  impl_->archive_bytes = std::filesystem::file_size(path, ec);
  if (ec) throw InvalidInput(path + ": not a regular file");
  int code = 0;
  impl_->archive = zip_open(path.c_str(), ZIP_RDONLY, &code);
  if (impl_->archive == nullptr)
    throw InvalidInput(path + ": not an .npz archive (" + zip_message(code) + ")");
  impl_->list();
}

NpzReader::NpzReader(std::span<const std::byte> data, const std::string& name)
    : impl_(std::make_unique<Impl>()) {
  impl_->name = name;
  impl_->archive_bytes = data.size();
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(data.data(), data.size(), 0, &error);
  if (source != nullptr) {
    impl_->archive = zip_open_from_source(source, ZIP_RDONLY, &error);
    if (impl_->archive == nullptr) zip_source_free(source);
  }
  if (impl_->archive == nullptr) {
    const std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw InvalidInput(name + ": not an .npz archive (" + message + ")");
  }
  zip_error_fini(&error);
  impl_->list();
}

NpzReader::~NpzReader() = default;

const std::vector<std::string>& NpzReader::keys() const { return impl_->keys; }

bool NpzReader::contains(const std::string& key) const {
  return std::find(impl_->keys.begin(), impl_->keys.end(), key) != impl_->keys.end();
}

NpyArray NpzReader::read(const std::string& key) const {
  return impl_->read(key, std::nullopt, "");
}

NpyArray NpzReader::read(const std::string& key, DType dtype, const std::string& what) const {
  return impl_->read(key, dtype, what);
}

namespace {
std::map<std::string, NpyArray> read_all(const NpzReader& reader) {
  std::map<std::string, NpyArray> out;
  for (const auto& key : reader.keys()) out[key] = reader.read(key);
  return out;
}
}  // namespace

std::map<std::string, NpyArray> read_npz(const std::string& path) {
  return read_all(NpzReader(path));
}

std::map<std::string, NpyArray> parse_npz(std::span<const std::byte> data,
                                          const std::string& name) {
  return read_all(NpzReader(data, name));
}

struct NpzWriter::Impl {
  struct Member {
    std::string header;
    std::shared_ptr<const void> keep;
  };
  std::string path;
  zip_t* archive = nullptr;
  std::vector<std::string> names;
  std::vector<std::unique_ptr<Member>> members;  // stable addresses for libzip's fragments
  bool closed = false;

  ~Impl() {
    if (archive != nullptr) zip_discard(archive);
  }
};

NpzWriter::NpzWriter(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  // libzip creates the file only in close(); fail now if it cannot be.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InvalidInput(path + ": is a directory");
  std::FILE* probe = std::fopen(path.c_str(), "wb");
  if (probe == nullptr) throw InvalidInput(path + ": cannot open for writing");
  std::fclose(probe);
  int code = 0;
  impl_->archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (impl_->archive == nullptr)
    throw InvalidInput(path + ": cannot open for writing (" + zip_message(code) + ")");
}

NpzWriter::~NpzWriter() {
  if (!impl_->closed) {
    try {
      close();
    } catch (...) {  // NOLINT(bugprone-empty-catch): destructors must not throw
    }
  }
}

void NpzWriter::add(const std::string& name, NpyArray array) {
  auto kept = std::make_shared<NpyArray>(std::move(array));
  add_member(name, kept->dtype, kept->shape, kept->bytes.data(), kept->bytes.size(), kept);
}

void NpzWriter::add_view(const std::string& name, DType dtype, std::span<const std::int64_t> shape,
                         const void* data) {
  add_member(name, dtype, shape, data, detail::payload_bytes(dtype, shape), nullptr);
}

void NpzWriter::add_member(const std::string& name, DType dtype,
                           std::span<const std::int64_t> shape, const void* data, std::size_t bytes,
                           std::shared_ptr<const void> keep) {
  Impl& w = *impl_;
  if (w.closed) throw InvalidInput(w.path + ": archive already closed");
  if (std::find(w.names.begin(), w.names.end(), name) != w.names.end())
    throw InvalidInput(name + ": repeated .npz member");
  auto member = std::make_unique<Impl::Member>();
  member->header = detail::npy_header(dtype, shape);
  if (bytes != detail::payload_bytes(dtype, shape))
    throw InvalidInput(name + ": data does not match the shape");
  member->keep = std::move(keep);
  zip_buffer_fragment_t fragments[2] = {
      {reinterpret_cast<zip_uint8_t*>(member->header.data()), member->header.size()},
      {static_cast<zip_uint8_t*>(const_cast<void*>(data)), bytes}};
  zip_source_t* source = zip_source_buffer_fragment(w.archive, fragments, bytes > 0 ? 2 : 1, 0);
  if (source == nullptr) throw InvalidInput(w.path + ": " + zip_strerror(w.archive));
  const std::string member_name = name + ".npy";
  const zip_int64_t i = zip_file_add(w.archive, member_name.c_str(), source, ZIP_FL_ENC_UTF_8);
  if (i < 0) {
    zip_source_free(source);
    throw InvalidInput(w.path + ": " + zip_strerror(w.archive));
  }
  const auto index = static_cast<zip_uint64_t>(i);
  // Stored, dated 1980-01-01 00:00 and without attributes: the same archive for the same
  // arrays, whenever it is written.
  if (zip_set_file_compression(w.archive, index, ZIP_CM_STORE, 0) != 0 ||
      zip_file_set_dostime(w.archive, index, 0, 0x21, 0) != 0 ||
      zip_file_set_external_attributes(w.archive, index, 0, ZIP_OPSYS_DOS, 0) != 0)
    throw InvalidInput(w.path + ": " + zip_strerror(w.archive));
  w.names.push_back(name);
  w.members.push_back(std::move(member));
}

void NpzWriter::close() {
  Impl& w = *impl_;
  if (w.closed) return;
  w.closed = true;
  zip_t* archive = w.archive;
  w.archive = nullptr;
  const bool empty = w.members.empty();
  if (zip_close(archive) != 0) {
    const std::string message = zip_strerror(archive);
    zip_discard(archive);
    throw InvalidInput(w.path + ": write failed (" + message + ")");
  }
  w.members.clear();
  if (empty) {
    // libzip writes no file for an archive without members; numpy.savez() writes the 22-byte
    // end-of-central-directory record alone.
    static constexpr unsigned char kEmptyZip[22] = {0x50, 0x4b, 0x05, 0x06};
    std::FILE* f = std::fopen(w.path.c_str(), "wb");
    const bool ok = f != nullptr && std::fwrite(kEmptyZip, 1, sizeof(kEmptyZip), f) == 22;
    if (f != nullptr && std::fclose(f) != 0) throw InvalidInput(w.path + ": write failed");
    if (!ok) throw InvalidInput(w.path + ": write failed");
  }
}

}  // namespace birkhoff::io
