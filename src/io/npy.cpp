#include "birkhoff/io/npy.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "birkhoff/core/system.hpp"

namespace birkhoff::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

struct DTypeName {
  const char* descr;
  DType dtype;
};
constexpr DTypeName kDescrs[] = {
    {"<f4", DType::Float32}, {"<f8", DType::Float64}, {"<i4", DType::Int32},
    {"<i8", DType::Int64},   {"|b1", DType::Bool},    {"|u1", DType::UInt8},
};

std::string descr_of(DType dtype) {
  for (const auto& d : kDescrs)
    if (d.dtype == dtype) return d.descr;
  throw InvalidInput("dtype: unsupported");
}

// Value of `key` in the header dictionary, as the raw text up to the next top-level comma.
std::string header_field(const std::string& header, const std::string& key,
                         const std::string& name) {
  const std::string quoted = "'" + key + "'";
  auto pos = header.find(quoted);
  if (pos == std::string::npos) throw InvalidInput(name + ": .npy header has no " + quoted);
  pos = header.find(':', pos + quoted.size());
  if (pos == std::string::npos) throw InvalidInput(name + ": malformed .npy header");
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  std::size_t end = pos;
  int depth = 0;
  while (end < header.size()) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if ((c == ',' && depth == 0) || c == '}') break;
    ++end;
  }
  return header.substr(pos, end - pos);
}

std::uint16_t read_u16(const std::byte* p) {
  return static_cast<std::uint16_t>(std::to_integer<unsigned>(p[0]) |
                                    (std::to_integer<unsigned>(p[1]) << 8));
}
std::uint32_t read_u32(const std::byte* p) {
  return static_cast<std::uint32_t>(read_u16(p)) |
         (static_cast<std::uint32_t>(read_u16(p + 2)) << 16);
}
std::uint64_t read_u64(const std::byte* p) {
  return static_cast<std::uint64_t>(read_u32(p)) |
         (static_cast<std::uint64_t>(read_u32(p + 4)) << 32);
}

void put_u16(std::string& s, std::uint16_t v) {
  s.push_back(static_cast<char>(v & 0xff));
  s.push_back(static_cast<char>(v >> 8));
}
void put_u32(std::string& s, std::uint32_t v) {
  put_u16(s, static_cast<std::uint16_t>(v & 0xffff));
  put_u16(s, static_cast<std::uint16_t>(v >> 16));
}

std::string npy_header(DType dtype, std::span<const std::int64_t> shape) {
  std::string dict = "{'descr': '" + descr_of(dtype) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) throw InvalidInput("shape: negative extent");
    dict += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) dict += ",";
    if (i + 1 < shape.size()) dict += " ";
  }
  dict += "), }";
  // Pad with spaces so that magic + version + length + dict + '\n' is a multiple of 64.
  const bool v2 = dict.size() + 11 + 1 > 65535;
  const std::size_t prefix = kMagicLen + 2 + (v2 ? 4 : 2);
  const std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  if (v2) {
    put_u32(out, static_cast<std::uint32_t>(dict.size()));
  } else {
    put_u16(out, static_cast<std::uint16_t>(dict.size()));
  }
  return out + dict;
}

std::size_t payload_bytes(DType dtype, std::span<const std::int64_t> shape) {
  std::size_t count = 1;
  for (auto s : shape) count *= static_cast<std::size_t>(s);
  return count * dtype_size(dtype);
}

/// Opens a regular file for reading; returns its size.
std::size_t open_file(const std::string& path, std::ifstream& in) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InvalidInput(path + ": is a directory");
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw InvalidInput(path + ": not a regular file");
  in.open(path, std::ios::binary);
  if (!in) throw InvalidInput(path + ": cannot open file");
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0) throw InvalidInput(path + ": cannot read file");
  in.seekg(0, std::ios::beg);
  return static_cast<std::size_t>(size);
}

void read_into(std::ifstream& in, void* out, std::size_t bytes, const std::string& path) {
  in.read(static_cast<char*>(out), static_cast<std::streamsize>(bytes));
  if (!in) throw InvalidInput(path + ": cannot read file");
}

std::vector<std::byte> read_file(const std::string& path) {
  std::ifstream in;
  std::vector<std::byte> data(open_file(path, in));
  read_into(in, data.data(), data.size(), path);
  return data;
}

/// Where a .npy file's header text starts and where its data starts, read from the magic,
/// the version and the header length: the first kLayoutBytes bytes of the file (fewer if the
/// file is shorter).
struct Layout {
  std::size_t header = 0;
  std::size_t data = 0;
};
constexpr std::size_t kLayoutBytes = kMagicLen + 6;
Layout layout_of(std::span<const std::byte> data, const std::string& name) {
  if (data.size() < kMagicLen + 4 || std::memcmp(data.data(), kMagic, kMagicLen) != 0)
    throw InvalidInput(name + ": not a .npy file (bad magic)");
  const int major = std::to_integer<int>(data[kMagicLen]);
  if (major == 1) {
    return {kMagicLen + 4, kMagicLen + 4 + std::size_t{read_u16(data.data() + kMagicLen + 2)}};
  }
  if (major == 2 || major == 3) {
    if (data.size() < kMagicLen + 6) throw InvalidInput(name + ": truncated .npy header");
    return {kMagicLen + 6, kMagicLen + 6 + std::size_t{read_u32(data.data() + kMagicLen + 2)}};
  }
  throw InvalidInput(name + ": unsupported .npy format version " + std::to_string(major));
}

}  // namespace

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::Float32:
    case DType::Int32:
      return 4;
    case DType::Float64:
    case DType::Int64:
      return 8;
    case DType::Bool:
    case DType::UInt8:
      return 1;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::Bool:
      return "bool";
    case DType::UInt8:
      return "uint8";
  }
  return "?";
}

std::int64_t NpyArray::size() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

namespace {

/// dtype and shape from a .npy header into `array`; `data` holds at least the header, and
/// `file_size` is the size of the whole file, checked against the shape. Returns the size of
/// the data in bytes.
std::size_t parse_header(std::span<const std::byte> data, std::size_t file_size,
                         const std::string& name, NpyArray& array) {
  const Layout layout = layout_of(data, name);
  const std::size_t offset = layout.data;
  if (offset > data.size()) throw InvalidInput(name + ": truncated .npy header");
  const std::string header(reinterpret_cast<const char*>(data.data() + layout.header),
                           offset - layout.header);

  std::string descr = header_field(header, "descr", name);
  descr.erase(std::remove(descr.begin(), descr.end(), '\''), descr.end());
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';
  if (descr.size() == 3 && descr[0] == '<' && (descr[1] == 'b' || descr[1] == 'u')) descr[0] = '|';
  bool found = false;
  for (const auto& d : kDescrs) {
    if (descr == d.descr) {
      array.dtype = d.dtype;
      found = true;
    }
  }
  if (!found) {
    if (!descr.empty() && descr[0] == '>')
      throw InvalidInput(name + ": big-endian arrays are not supported (dtype " + descr + ")");
    throw InvalidType(name + ": unsupported dtype " + descr +
                      " (expected float32, float64, int32, int64, bool or uint8)");
  }
  if (header_field(header, "fortran_order", name) != "False")
    throw InvalidInput(name + ": Fortran-ordered arrays are not supported; save a C-ordered copy");
  std::string shape = header_field(header, "shape", name);
  shape.erase(std::remove_if(shape.begin(), shape.end(),
                             [](char c) { return c == '(' || c == ')' || c == ' '; }),
              shape.end());
  std::size_t pos = 0;
  while (pos < shape.size()) {
    const auto comma = shape.find(',', pos);
    const auto token =
        shape.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!token.empty()) {
      try {
        array.shape.push_back(std::stoll(token));
      } catch (const std::exception&) {
        throw InvalidInput(name + ": malformed shape in .npy header");
      }
      if (array.shape.back() < 0) throw InvalidInput(name + ": negative extent in .npy header");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  // The header is untrusted: check the element count for overflow before using it.
  std::size_t count = 1;
  for (auto extent : array.shape) {
    if (extent != 0 && count > (file_size - offset) / static_cast<std::size_t>(extent))
      throw InvalidInput(name + ": .npy shape does not match the file size (truncated or corrupt)");
    count *= static_cast<std::size_t>(extent);
  }
  const std::size_t bytes = count * dtype_size(array.dtype);
  if (file_size - offset < bytes)
    throw InvalidInput(name + ": truncated .npy data (" + std::to_string(file_size - offset) +
                       " of " + std::to_string(bytes) + " bytes)");
  return bytes;
}

}  // namespace

NpyArray parse_npy(std::span<const std::byte> data, const std::string& name) {
  NpyArray array;
  const std::size_t bytes = parse_header(data, data.size(), name, array);
  const std::size_t offset = layout_of(data, name).data;
  array.bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(offset),
                     data.begin() + static_cast<std::ptrdiff_t>(offset + bytes));
  return array;
}

NpyArray read_npy(const std::string& path) {
  // The header first, then the data straight into the array's buffer: one copy of the data in
  // memory, not two.
  std::ifstream in;
  const std::size_t file_size = open_file(path, in);
  std::vector<std::byte> head(std::min(file_size, kLayoutBytes));
  read_into(in, head.data(), head.size(), path);
  const std::size_t offset = layout_of(head, path).data;
  if (offset > file_size) throw InvalidInput(path + ": truncated .npy header");
  const std::size_t have = head.size();
  if (offset > have) {
    head.resize(offset);
    read_into(in, head.data() + have, offset - have, path);
  }
  NpyArray array;
  const std::size_t bytes = parse_header(head, file_size, path, array);
  in.seekg(static_cast<std::streamoff>(offset));
  // Large arrays (feature matrices read row by row in random order) go on huge pages, as
  // NumPy's own large arrays do.
  array.bytes.reserve(bytes);
  advise_huge_pages(array.bytes.data(), bytes);
  array.bytes.resize(bytes);
  read_into(in, array.bytes.data(), bytes, path);
  return array;
}

std::vector<std::byte> encode_npy(DType dtype, std::span<const std::int64_t> shape,
                                  const void* data) {
  const std::string header = npy_header(dtype, shape);
  const std::size_t bytes = payload_bytes(dtype, shape);
  std::vector<std::byte> out(header.size() + bytes);
  std::memcpy(out.data(), header.data(), header.size());
  if (bytes > 0) std::memcpy(out.data() + header.size(), data, bytes);
  return out;
}

void write_npy(const std::string& path, DType dtype, std::span<const std::int64_t> shape,
               const void* data) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InvalidInput(path + ": cannot open for writing");
  const std::string header = npy_header(dtype, shape);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data),
            static_cast<std::streamsize>(payload_bytes(dtype, shape)));
  if (!out) throw InvalidInput(path + ": write failed");
}

std::map<std::string, NpyArray> read_npz(const std::string& path) {
  const auto data = read_file(path);
  const std::size_t n = data.size();
  if (n < 22) throw InvalidInput(path + ": not an .npz archive");
  // End of central directory: search backwards for its signature.
  std::size_t eocd = std::string::npos;
  for (std::size_t i = n - 22 + 1; i-- > 0 && n - i <= 22 + 65535;) {
    if (read_u32(data.data() + i) == 0x06054b50u) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos)
    throw InvalidInput(path + ": not an .npz archive (no zip directory)");
  std::uint64_t entries = read_u16(data.data() + eocd + 10);
  std::uint64_t cd_offset = read_u32(data.data() + eocd + 16);
  if (cd_offset == 0xffffffffu && eocd >= 20 && read_u32(data.data() + eocd - 20) == 0x07064b50u) {
    const std::uint64_t z64 = read_u64(data.data() + eocd - 20 + 8);
    if (z64 + 56 > n) throw InvalidInput(path + ": corrupt zip64 directory");
    entries = read_u64(data.data() + z64 + 32);
    cd_offset = read_u64(data.data() + z64 + 48);
  }
  std::map<std::string, NpyArray> out;
  std::size_t p = cd_offset;
  for (std::uint64_t e = 0; e < entries; ++e) {
    if (p + 46 > n || read_u32(data.data() + p) != 0x02014b50u)
      throw InvalidInput(path + ": corrupt zip directory");
    const std::uint16_t method = read_u16(data.data() + p + 10);
    std::uint64_t csize = read_u32(data.data() + p + 20);
    std::uint64_t usize = read_u32(data.data() + p + 24);
    const std::uint16_t name_len = read_u16(data.data() + p + 28);
    const std::uint16_t extra_len = read_u16(data.data() + p + 30);
    const std::uint16_t comment_len = read_u16(data.data() + p + 32);
    std::uint64_t local = read_u32(data.data() + p + 42);
    if (p + 46 + name_len + extra_len > n) throw InvalidInput(path + ": corrupt zip directory");
    std::string name(reinterpret_cast<const char*>(data.data() + p + 46), name_len);
    // ZIP64 extra field: the 0xffffffff fields follow in the order usize, csize, offset.
    std::size_t x = p + 46 + name_len;
    const std::size_t x_end = x + extra_len;
    while (x + 4 <= x_end) {
      const std::uint16_t id = read_u16(data.data() + x);
      const std::uint16_t len = read_u16(data.data() + x + 2);
      if (id == 0x0001) {
        std::size_t q = x + 4;
        if (usize == 0xffffffffu) {
          usize = read_u64(data.data() + q);
          q += 8;
        }
        if (csize == 0xffffffffu) {
          csize = read_u64(data.data() + q);
          q += 8;
        }
        if (local == 0xffffffffu) {
          local = read_u64(data.data() + q);
        }
      }
      x += 4 + len;
    }
    p = x_end + comment_len;
    if (local + 30 > n || read_u32(data.data() + local) != 0x04034b50u)
      throw InvalidInput(path + ": corrupt zip member " + name);
    const std::size_t start =
        local + 30 + read_u16(data.data() + local + 26) + read_u16(data.data() + local + 28);
    if (start + csize > n) throw InvalidInput(path + ": truncated zip member " + name);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
      name.resize(name.size() - 4);
    if (method == 0) {
      out[name] = parse_npy(std::span(data).subspan(start, csize), path + ":" + name);
    } else if (method == 8) {
      std::vector<std::byte> raw(usize);
      z_stream zs{};
      if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw InvalidInput(path + ": inflate failed");
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(data.data() + start));
      zs.avail_in = static_cast<uInt>(csize);
      zs.next_out = reinterpret_cast<Bytef*>(raw.data());
      zs.avail_out = static_cast<uInt>(usize);
      const int rc = inflate(&zs, Z_FINISH);
      inflateEnd(&zs);
      if (rc != Z_STREAM_END) throw InvalidInput(path + ": corrupt deflated member " + name);
      out[name] = parse_npy(raw, path + ":" + name);
    } else {
      throw InvalidInput(path + ": unsupported zip compression method " + std::to_string(method));
    }
  }
  return out;
}

NpzWriter::NpzWriter(const std::string& path) : path_(path), out_(path, std::ios::binary) {
  if (!out_) throw InvalidInput(path + ": cannot open for writing");
}

NpzWriter::~NpzWriter() {
  if (!closed_) {
    try {
      close();
    } catch (...) {  // NOLINT(bugprone-empty-catch): destructors must not throw
    }
  }
}

void NpzWriter::add(const std::string& name, DType dtype, std::span<const std::int64_t> shape,
                    const void* data) {
  const std::string header = npy_header(dtype, shape);
  const std::size_t bytes = payload_bytes(dtype, shape);
  Entry entry;
  entry.name = name + ".npy";
  entry.size = header.size() + bytes;
  entry.offset = static_cast<std::uint64_t>(out_.tellp());
  if (entry.size >= 0xffffffffu || entry.offset >= 0xffffffffu)
    throw InvalidInput(path_ + ": .npz members above 4 GiB are not supported; write .npy files");
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size()));
  const auto* p = static_cast<const Bytef*>(data);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t chunk = std::min<std::size_t>(bytes - done, 1u << 30);
    crc = crc32(crc, p + done, static_cast<uInt>(chunk));
    done += chunk;
  }
  entry.crc = static_cast<std::uint32_t>(crc);
  std::string local;
  put_u32(local, 0x04034b50u);
  put_u16(local, 20);    // version needed
  put_u16(local, 0);     // flags
  put_u16(local, 0);     // stored
  put_u16(local, 0);     // time
  put_u16(local, 0x21);  // date: 1980-01-01
  put_u32(local, entry.crc);
  put_u32(local, static_cast<std::uint32_t>(entry.size));
  put_u32(local, static_cast<std::uint32_t>(entry.size));
  put_u16(local, static_cast<std::uint16_t>(entry.name.size()));
  put_u16(local, 0);
  local += entry.name;
  out_.write(local.data(), static_cast<std::streamsize>(local.size()));
  out_.write(header.data(), static_cast<std::streamsize>(header.size()));
  out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out_) throw InvalidInput(path_ + ": write failed");
  entries_.push_back(entry);
}

void NpzWriter::close() {
  if (closed_) return;
  closed_ = true;
  const auto cd_start = static_cast<std::uint64_t>(out_.tellp());
  std::string cd;
  for (const auto& e : entries_) {
    put_u32(cd, 0x02014b50u);
    put_u16(cd, 20);
    put_u16(cd, 20);
    put_u16(cd, 0);
    put_u16(cd, 0);
    put_u16(cd, 0);
    put_u16(cd, 0x21);
    put_u32(cd, e.crc);
    put_u32(cd, static_cast<std::uint32_t>(e.size));
    put_u32(cd, static_cast<std::uint32_t>(e.size));
    put_u16(cd, static_cast<std::uint16_t>(e.name.size()));
    put_u16(cd, 0);
    put_u16(cd, 0);
    put_u16(cd, 0);
    put_u16(cd, 0);
    put_u32(cd, 0);
    put_u32(cd, static_cast<std::uint32_t>(e.offset));
    cd += e.name;
  }
  std::string end;
  put_u32(end, 0x06054b50u);
  put_u16(end, 0);
  put_u16(end, 0);
  put_u16(end, static_cast<std::uint16_t>(entries_.size()));
  put_u16(end, static_cast<std::uint16_t>(entries_.size()));
  put_u32(end, static_cast<std::uint32_t>(cd.size()));
  put_u32(end, static_cast<std::uint32_t>(cd_start));
  put_u16(end, 0);
  out_.write(cd.data(), static_cast<std::streamsize>(cd.size()));
  out_.write(end.data(), static_cast<std::streamsize>(end.size()));
  out_.close();
  if (!out_) throw InvalidInput(path_ + ": write failed");
}

}  // namespace birkhoff::io
