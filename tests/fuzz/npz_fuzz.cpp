// libFuzzer target: the .npz reader (libzip from memory) on arbitrary bytes, reading every
// member as stored, then as int64 and float32.
#include <cstddef>
#include <cstdint>
#include <span>

#include "birkhoff/core/error.hpp"
#include "birkhoff/io/npz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace birkhoff;
  try {
    const io::NpzReader reader(std::as_bytes(std::span(data, size)), "fuzz.npz");
    for (const auto& key : reader.keys()) {
      for (int mode = 0; mode < 3; ++mode) {
        try {
          const io::NpyArray a = mode == 0   ? reader.read(key)
                                 : mode == 1 ? reader.read(key, io::DType::Int64, key)
                                             : reader.read(key, io::DType::Float32, key);
          volatile std::int64_t sink = a.size();
          (void)sink;
        } catch (const InvalidInput&) {
        }
      }
    }
  } catch (const InvalidInput&) {
  }
  return 0;
}
