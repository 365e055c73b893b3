// The .npy format: header parsing and encoding, streamed data reading (byte order, Fortran
// order, dtype conversion) and writing. Format reference: numpy's NEP 1 (numpy.lib.format).
#include "birkhoff/io/npy.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>

#include "birkhoff/core/system.hpp"
#include "npy_stream.hpp"

namespace birkhoff::io {
namespace detail {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
// numpy writes headers of a few hundred bytes for these dtypes; anything longer is refused
// before it is read, whatever its length field says.
constexpr std::size_t kMaxHeaderBytes = std::size_t{1} << 20;
// numpy's own limit on the number of dimensions (NPY_MAXDIMS in numpy 2).
constexpr std::size_t kMaxDims = 64;
// Elements are rearranged (byte order, Fortran order, conversion) through buffers of this size.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

constexpr bool kLittleHost = std::endian::native == std::endian::little;

/// What a .npy header says.
struct Header {
  DType dtype = DType::Float32;
  bool swap = false;     ///< the file's byte order is not the host's
  bool fortran = false;  ///< fortran_order: True
  std::vector<std::int64_t> shape;
};

/// dtype of a descr such as '<f8', '>i4', '|b1'; sets `swap`.
DType parse_descr(const std::string& descr, bool& swap, const std::string& name) {
  const auto unsupported = [&]() -> DType {
    throw InvalidType(name + ": unsupported dtype '" + descr +
                      "' (birkhoff reads bool, int8-int64, uint8-uint64, float32 and float64)");
  };
  if (descr.size() < 3) return unsupported();
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return unsupported();
  const char kind = descr[1];
  const std::string size = descr.substr(2);
  DType dtype;
  if (kind == 'b' && size == "1") {
    dtype = DType::Bool;
  } else if (kind == 'i' || kind == 'u') {
    const bool u = kind == 'u';
    if (size == "1") {
      dtype = u ? DType::UInt8 : DType::Int8;
    } else if (size == "2") {
      dtype = u ? DType::UInt16 : DType::Int16;
    } else if (size == "4") {
      dtype = u ? DType::UInt32 : DType::Int32;
    } else if (size == "8") {
      dtype = u ? DType::UInt64 : DType::Int64;
    } else {
      return unsupported();
    }
  } else if (kind == 'f' && size == "4") {
    dtype = DType::Float32;
  } else if (kind == 'f' && size == "8") {
    dtype = DType::Float64;
  } else {
    return unsupported();
  }
  swap = dtype_size(dtype) > 1 && ((order == '>' && kLittleHost) || (order == '<' && !kLittleHost));
  return dtype;
}

/// Parser of the header dictionary, a Python literal such as
/// {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

  Header parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    expect('{');
    while (true) {
      skip_space();
      if (eat('}')) break;
      const std::string key = string_literal();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (have_descr) fail("repeated key 'descr'");
        have_descr = true;
        if (peek() != '\'' && peek() != '"')
          throw InvalidType(name_ + ": structured dtypes are not supported");
        h.dtype = parse_descr(string_literal(), h.swap, name_);
      } else if (key == "fortran_order") {
        if (have_order) fail("repeated key 'fortran_order'");
        have_order = true;
        h.fortran = boolean();
      } else if (key == "shape") {
        if (have_shape) fail("repeated key 'shape'");
        have_shape = true;
        h.shape = tuple();
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_space();
      if (eat(',')) continue;
      expect('}');
      break;
    }
    skip_space();
    if (p_ != s_.size()) fail("text after the dictionary");
    if (!have_descr || !have_order || !have_shape)
      fail("the dictionary needs 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw InvalidInput(name_ + ": malformed .npy header (" + why + ")");
  }
  char peek() const { return p_ < s_.size() ? s_[p_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || p_ >= s_.size()) return false;
    ++p_;
    return true;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  void skip_space() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r'))
      ++p_;
  }
  std::string string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a string");
    ++p_;
    const auto end = s_.find(quote, p_);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s_.substr(p_, end - p_);
    if (out.find('\\') != std::string::npos) fail("escape in a string");
    p_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.compare(p_, 4, "True") == 0) {
      p_ += 4;
      return true;
    }
    if (s_.compare(p_, 5, "False") == 0) {
      p_ += 5;
      return false;
    }
    fail("fortran_order must be True or False");
  }
  std::int64_t integer() {
    if (peek() == '-') throw InvalidInput(name_ + ": negative extent in .npy header");
    if (peek() < '0' || peek() > '9') fail("expected an extent");
    std::uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const auto digit = static_cast<std::uint64_t>(s_[p_++] - '0');
      if (v > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - digit) / 10)
        fail("extent too large");
      v = v * 10 + digit;
    }
    eat('L');  // Python 2's long literals, in files written by numpy under Python 2
    return static_cast<std::int64_t>(v);
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> out;
    expect('(');
    while (true) {
      skip_space();
      if (eat(')')) break;
      if (out.size() == kMaxDims) fail("more than 64 dimensions");
      out.push_back(integer());
      skip_space();
      if (eat(',')) continue;
      expect(')');
      break;
    }
    return out;
  }

  const std::string& s_;
  const std::string& name_;
  std::size_t p_ = 0;
};

/// Reads the magic, version, length and dictionary.
Header read_header(ByteSource& source) {
  const std::string& name = source.name();
  unsigned char pre[kMagicLen + 4];
  std::size_t got = 0;
  while (got < sizeof(pre)) {
    const std::size_t n = source.read_some(pre + got, sizeof(pre) - got);
    if (n == 0) break;
    got += n;
  }
  if (got < sizeof(pre) || std::memcmp(pre, kMagic, kMagicLen) != 0)
    throw InvalidInput(name + ": not a .npy file (bad magic)");
  const int major = pre[kMagicLen];
  std::size_t length = 0;
  if (major == 1) {
    length = std::size_t{pre[kMagicLen + 2]} | (std::size_t{pre[kMagicLen + 3]} << 8);
  } else if (major == 2 || major == 3) {
    unsigned char hi[2];
    source.read_exact(hi, 2, ".npy header");
    length = std::size_t{pre[kMagicLen + 2]} | (std::size_t{pre[kMagicLen + 3]} << 8) |
             (std::size_t{hi[0]} << 16) | (std::size_t{hi[1]} << 24);
  } else {
    throw InvalidInput(name + ": unsupported .npy format version " + std::to_string(major));
  }
  if (length > source.bound()) throw InvalidInput(name + ": truncated .npy header");
  if (length > kMaxHeaderBytes)
    throw InvalidInput(name + ": .npy header of " + std::to_string(length) + " bytes is too long");
  std::string text(length, '\0');
  source.read_exact(text.data(), length, ".npy header");
  return HeaderParser(text, name).parse();
}

/// Number of elements of `shape`, or throws naming `name` when it overflows.
std::uint64_t element_count(const std::vector<std::int64_t>& shape, const std::string& name) {
  std::uint64_t count = 1;
  bool overflow = false;
  for (const auto extent : shape) {
    if (extent == 0) return 0;
    overflow =
        overflow || __builtin_mul_overflow(count, static_cast<std::uint64_t>(extent), &count);
  }
  if (overflow) throw InvalidInput(name + ": .npy shape has more elements than any file can hold");
  return count;
}

/// Places the elements of a Fortran-ordered array, arriving in file order (first index
/// fastest), at their C-order positions.
class FortranScatter {
 public:
  explicit FortranScatter(const std::vector<std::int64_t>& shape)
      : shape_(shape), index_(shape.size(), 0), stride_(shape.size(), 1) {
    for (std::size_t k = shape.size() - 1; k-- > 0;) stride_[k] = stride_[k + 1] * shape[k + 1];
  }

  /// Writes the next `count` elements (of `size` bytes, at `values`) into `out`.
  void put(const std::byte* values, std::size_t count, std::size_t size, std::byte* out) {
    switch (size) {
      case 1:
        return put_sized<1>(values, count, out);
      case 2:
        return put_sized<2>(values, count, out);
      case 4:
        return put_sized<4>(values, count, out);
      default:
        return put_sized<8>(values, count, out);
    }
  }

 private:
  template <std::size_t kSize>
  void put_sized(const std::byte* values, std::size_t count, std::byte* out) {
    const std::int64_t step = stride_[0];
    while (count > 0) {
      // A run along the first axis: consecutive in the file, `step` apart in C order.
      const auto run = static_cast<std::size_t>(
          std::min<std::uint64_t>(count, static_cast<std::uint64_t>(shape_[0] - index_[0])));
      std::byte* dst = out + static_cast<std::size_t>(offset_) * kSize;
      for (std::size_t i = 0; i < run; ++i) {
        std::memcpy(dst, values, kSize);
        dst += static_cast<std::size_t>(step) * kSize;
        values += kSize;
      }
      count -= run;
      index_[0] += static_cast<std::int64_t>(run);
      offset_ += static_cast<std::int64_t>(run) * step;
      if (index_[0] < shape_[0]) continue;
      // Carry into the next axes.
      offset_ -= shape_[0] * step;
      index_[0] = 0;
      for (std::size_t k = 1; k < shape_.size(); ++k) {
        ++index_[k];
        offset_ += stride_[k];
        if (index_[k] < shape_[k]) break;
        offset_ -= shape_[k] * stride_[k];
        index_[k] = 0;
      }
    }
  }

  std::vector<std::int64_t> shape_, index_, stride_;
  std::int64_t offset_ = 0;
};

/// The elements of a tile of a Fortran-ordered (rows, cols) array, column after column
/// (`tile_rows` each, `tile_cols` columns, `size` bytes each), written to rows `row0`... and
/// columns `col0`... of the C-order output.
template <std::size_t kSize>
void transpose_tile(const std::byte* tile, std::size_t tile_rows, std::size_t tile_cols,
                    std::size_t row0, std::size_t col0, std::size_t cols, std::byte* out) {
  for (std::size_t i = 0; i < tile_rows; ++i) {
    std::byte* dst = out + ((row0 + i) * cols + col0) * kSize;
    const std::byte* src = tile + i * kSize;
    for (std::size_t j = 0; j < tile_cols; ++j)
      std::memcpy(dst + j * kSize, src + j * tile_rows * kSize, kSize);
  }
}

void normalise_bools(std::byte* data, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    data[i] = data[i] != std::byte{0} ? std::byte{1} : std::byte{0};
}

/// Reads a 2-d Fortran-ordered array by tiles of about kChunkBytes: each tile is read by
/// positioned reads of its column pieces (one read when the tile holds whole columns), then
/// written row by row, so that the output is written in runs instead of one element per
/// cache line.
void read_fortran_tiles(ByteSource& source, const Header& h, DType to, std::byte* out,
                        const std::string& what) {
  const DType from = h.dtype;
  const std::size_t in_size = dtype_size(from), out_size = dtype_size(to);
  const auto rows = static_cast<std::size_t>(h.shape[0]);
  const auto cols = static_cast<std::size_t>(h.shape[1]);
  const std::size_t width = std::max(in_size, out_size);
  // Column pieces of 16 KiB (or whole columns), as many columns as fill the chunk.
  const std::size_t tile_rows = std::min(rows, std::max<std::size_t>(1, (16 << 10) / in_size));
  const std::size_t tile_cols =
      std::min(cols, std::max<std::size_t>(1, kChunkBytes / (tile_rows * width)));
  std::vector<std::byte> raw(tile_rows * tile_cols * in_size);
  std::vector<std::byte> converted(from != to ? tile_rows * tile_cols * out_size : 0);
  for (std::size_t row0 = 0; row0 < rows; row0 += tile_rows) {
    const std::size_t r = std::min(tile_rows, rows - row0);
    for (std::size_t col0 = 0; col0 < cols; col0 += tile_cols) {
      const std::size_t c = std::min(tile_cols, cols - col0);
      if (r == rows) {
        source.read_at(col0 * rows * in_size, raw.data(), r * c * in_size, ".npy data");
      } else {
        for (std::size_t j = 0; j < c; ++j)
          source.read_at(((col0 + j) * rows + row0) * in_size, raw.data() + j * r * in_size,
                         r * in_size, ".npy data");
      }
      if (h.swap) byteswap_elements(raw.data(), in_size, r * c);
      if (from == DType::Bool) normalise_bools(raw.data(), r * c);
      const std::byte* tile = raw.data();
      if (from != to) {
        convert_elements(from, raw.data(), to, converted.data(), r * c, what);
        tile = converted.data();
      }
      switch (out_size) {
        case 1:
          transpose_tile<1>(tile, r, c, row0, col0, cols, out);
          break;
        case 2:
          transpose_tile<2>(tile, r, c, row0, col0, cols, out);
          break;
        case 4:
          transpose_tile<4>(tile, r, c, row0, col0, cols, out);
          break;
        default:
          transpose_tile<8>(tile, r, c, row0, col0, cols, out);
          break;
      }
    }
  }
}

/// Reads `count` elements described by `h` from `source` into `out` as `to`.
void read_data(ByteSource& source, const Header& h, DType to, std::uint64_t count, std::byte* out,
               const std::string& what) {
  const DType from = h.dtype;
  const std::size_t in_size = dtype_size(from), out_size = dtype_size(to);
  // numpy writes fortran_order True only for 2-d and larger arrays; for fewer dimensions the
  // two orders are the same.
  const bool fortran = h.fortran && h.shape.size() >= 2;
  if (count == 0) return;
  if (!fortran && from == to) {
    source.read_exact(out, static_cast<std::size_t>(count) * in_size, ".npy data");
    if (h.swap) byteswap_elements(out, in_size, static_cast<std::size_t>(count));
    if (from == DType::Bool) normalise_bools(out, static_cast<std::size_t>(count));
    return;
  }
  if (fortran && h.shape.size() == 2 && source.random_access()) {
    read_fortran_tiles(source, h, to, out, what);
    return;
  }
  const std::size_t chunk = std::max<std::size_t>(1, kChunkBytes / std::max(in_size, out_size));
  std::vector<std::byte> raw(std::min<std::uint64_t>(chunk, count) * in_size);
  std::vector<std::byte> converted(fortran && from != to ? raw.size() / in_size * out_size : 0);
  std::optional<FortranScatter> scatter;
  if (fortran) scatter.emplace(h.shape);
  for (std::uint64_t done = 0; done < count;) {
    const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, count - done));
    source.read_exact(raw.data(), k * in_size, ".npy data");
    if (h.swap) byteswap_elements(raw.data(), in_size, k);
    if (from == DType::Bool) normalise_bools(raw.data(), k);
    if (!fortran) {
      convert_elements(from, raw.data(), to, out + done * out_size, k, what);
    } else {
      const std::byte* values = raw.data();
      if (from != to) {
        convert_elements(from, raw.data(), to, converted.data(), k, what);
        values = converted.data();
      }
      scatter->put(values, k, out_size, out);
    }
    done += k;
  }
}

std::string descr_of(DType dtype) {
  const char order = kLittleHost ? '<' : '>';
  switch (dtype) {
    case DType::Bool:
      return "|b1";
    case DType::Int8:
      return "|i1";
    case DType::UInt8:
      return "|u1";
    case DType::Int16:
      return order + std::string("i2");
    case DType::Int32:
      return order + std::string("i4");
    case DType::Int64:
      return order + std::string("i8");
    case DType::UInt16:
      return order + std::string("u2");
    case DType::UInt32:
      return order + std::string("u4");
    case DType::UInt64:
      return order + std::string("u8");
    case DType::Float32:
      return order + std::string("f4");
    case DType::Float64:
      return order + std::string("f8");
  }
  return "?";
}

void put_le(std::string& s, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

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
  put_le(out, dict.size(), v2 ? 4 : 2);
  return out + dict;
}

std::size_t payload_bytes(DType dtype, std::span<const std::int64_t> shape) {
  std::size_t count = 1;
  for (auto s : shape) count *= static_cast<std::size_t>(s);
  return count * dtype_size(dtype);
}

NpyArray read_npy_stream(ByteSource& source, std::optional<DType> target, const std::string& what) {
  const std::string& name = source.name();
  Header h = read_header(source);
  const DType to = target.value_or(h.dtype);
  // Refuse an impossible conversion before anything is allocated.
  convert_elements(h.dtype, nullptr, to, nullptr, 0, what);
  const std::uint64_t count = element_count(h.shape, name);
  // The header is untrusted: the data it announces must fit in what the input still holds.
  std::uint64_t in_bytes = 0, out_bytes = 0;
  if (__builtin_mul_overflow(count, dtype_size(h.dtype), &in_bytes) || in_bytes > source.bound())
    throw InvalidInput(name + ": .npy header announces more data than the file holds (" +
                       std::to_string(source.bound()) +
                       " bytes after the header; truncated or "
                       "corrupt)");
  if (__builtin_mul_overflow(count, dtype_size(to), &out_bytes) ||
      out_bytes > std::numeric_limits<std::size_t>::max() / 2)
    throw InvalidInput(name + ": array too large");
  NpyArray array;
  array.dtype = to;
  array.shape = h.shape;
  if (to != h.dtype) array.converted_from = h.dtype;
  // Large arrays (feature matrices read row by row in random order) go on huge pages, as
  // NumPy's own large arrays do.
  array.bytes.reserve(static_cast<std::size_t>(out_bytes));
  advise_huge_pages(array.bytes.data(), static_cast<std::size_t>(out_bytes));
  array.bytes.resize(static_cast<std::size_t>(out_bytes));
  read_data(source, h, to, count, array.bytes.data(), what);
  return array;
}

}  // namespace detail

std::int64_t NpyArray::size() const {
  // A zero extent anywhere empties the array; the other extents alone may overflow.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

void NpyArray::convert(DType target, const std::string& what) {
  if (target == dtype) return;
  const auto count = static_cast<std::size_t>(size());
  const std::size_t from_size = dtype_size(dtype), to_size = dtype_size(target);
  if (to_size <= from_size) {
    convert_elements(dtype, bytes.data(), target, bytes.data(), count, what);
    bytes.resize(count * to_size);
  } else {
    convert_elements(dtype, nullptr, target, nullptr, 0, what);
    std::vector<std::byte> wide(count * to_size);
    convert_elements(dtype, bytes.data(), target, wide.data(), count, what);
    bytes = std::move(wide);
  }
  if (!converted_from) converted_from = dtype;
  dtype = target;
  if (converted_from == dtype) converted_from.reset();
}

std::string NpyArray::conversion() const {
  return converted_from ? conversion_name(*converted_from, dtype) : std::string();
}

NpyArray read_npy(const std::string& path) {
  detail::FileSource source(path);
  return detail::read_npy_stream(source, std::nullopt, path);
}

NpyArray read_npy(const std::string& path, DType dtype, const std::string& what) {
  detail::FileSource source(path);
  return detail::read_npy_stream(source, dtype, what);
}

NpyArray parse_npy(std::span<const std::byte> data, const std::string& name) {
  detail::MemorySource source(data, name);
  return detail::read_npy_stream(source, std::nullopt, name);
}

std::vector<std::byte> encode_npy(DType dtype, std::span<const std::int64_t> shape,
                                  const void* data) {
  const std::string header = detail::npy_header(dtype, shape);
  const std::size_t bytes = detail::payload_bytes(dtype, shape);
  std::vector<std::byte> out(header.size() + bytes);
  std::memcpy(out.data(), header.data(), header.size());
  if (bytes > 0) std::memcpy(out.data() + header.size(), data, bytes);
  return out;
}

void write_npy(const std::string& path, DType dtype, std::span<const std::int64_t> shape,
               const void* data) {
  const std::string header = detail::npy_header(dtype, shape);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InvalidInput(path + ": cannot open for writing");
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data),
            static_cast<std::streamsize>(detail::payload_bytes(dtype, shape)));
  if (!out) throw InvalidInput(path + ": write failed");
}

}  // namespace birkhoff::io
