// libFuzzer target: the .npy reader on arbitrary bytes (header parser, size checks, byte order,
// Fortran order), then every conversion the readers offer on what it accepts.
#include <cstddef>
#include <cstdint>
#include <span>

#include "birkhoff/core/error.hpp"
#include "birkhoff/io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace birkhoff;
  try {
    io::NpyArray a = io::parse_npy(std::as_bytes(std::span(data, size)), "fuzz.npy");
    volatile std::int64_t sink = a.size();
    for (const io::DType target : {io::DType::Int64, io::DType::Int32, io::DType::Float32,
                                   io::DType::Float64, io::DType::UInt8}) {
      io::NpyArray copy = a;
      try {
        copy.convert(target, "fuzz");
        sink = sink + static_cast<std::int64_t>(copy.bytes.size());
      } catch (const InvalidInput&) {
      }
    }
    if (a.dtype == io::DType::Bool) {
      for (const bool b : a.as<bool>("fuzz")) sink = sink + b;
    }
  } catch (const InvalidInput&) {
  }
  return 0;
}
