// libFuzzer target: the graph-folder reader. The input is split into the folder's files:
// byte 0 holds flags (bits 0-4: features.npy, edge_index.npy, edge_weight.npy, adjacency.npy,
// labels.npy present; bits 5-7: GraphDirOptions edges, adjacency, labels), then each present
// file as a 4-byte little-endian length and that many bytes (cut at the end of the input).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/io/graph_dir.hpp"

namespace {

const std::string& folder() {
  static const std::string path = [] {
    const char* base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string templ = std::string(base) + "/birkhoff_fuzz_graph_XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) std::abort();
    return templ;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace birkhoff;
  static const char* const kFiles[] = {"features.npy", "edge_index.npy", "edge_weight.npy",
                                       "adjacency.npy", "labels.npy"};
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  std::size_t p = 1;
  for (int k = 0; k < 5; ++k) {
    const std::string path = folder() + "/" + kFiles[k];
    if (!(flags & (1u << k))) {
      std::remove(path.c_str());
      continue;
    }
    std::size_t length = 0;
    for (int b = 0; b < 4 && p < size; ++b, ++p) length |= std::size_t{data[p]} << (8 * b);
    length = std::min(length, size - p);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) std::abort();
    if (length > 0 && std::fwrite(data + p, 1, length, f) != length) std::abort();
    std::fclose(f);
    p += length;
  }
  io::GraphDirOptions options;
  options.edges = (flags & 32) != 0;
  options.adjacency = (flags & 64) != 0;
  options.labels = (flags & 128) != 0;
  try {
    const io::GraphDir dir = io::read_graph_dir(folder(), options);
    volatile std::int64_t sink = dir.features_view().rows + dir.edge_index_view().cols +
                                 static_cast<std::int64_t>(dir.edge_weight_view().size()) +
                                 dir.adjacency_view().rows +
                                 static_cast<std::int64_t>(dir.labels_view().size());
    (void)sink;
  } catch (const InvalidInput&) {
  }
  return 0;
}
