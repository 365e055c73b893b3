// The graph-folder format: one .npy file per array (see GraphDir).
#include "birkhoff/io/graph_dir.hpp"

#include <algorithm>
#include <filesystem>

namespace birkhoff::io {
namespace {

namespace fs = std::filesystem;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) s += ",";
    if (i + 1 < shape.size()) s += " ";
  }
  return s + ")";
}

// "(n<tail>", built by appending (GCC 12 warns on the equivalent chain of operator+).
std::string extent_text(std::int64_t n, const char* tail) {
  std::string s = "(";
  s += std::to_string(n);
  s += tail;
  return s;
}

class Reader {
 public:
  Reader(GraphDir& dir) : dir_(dir) {}

  bool has(const std::string& file) const {
    return std::binary_search(dir_.files.begin(), dir_.files.end(), file);
  }

  /// Reads `file` converted to `dtype`; records the conversion.
  NpyArray read(const std::string& file, DType dtype) {
    const std::string path = (fs::path(dir_.path) / file).string();
    NpyArray a = read_npy(path, dtype, path);
    if (a.converted_from) dir_.converted[fs::path(file).stem().string()] = a.conversion();
    return a;
  }

  [[noreturn]] void bad_shape(const std::string& file, const std::string& expected,
                              const NpyArray& a, const std::string& hint = "") const {
    throw InvalidInput((fs::path(dir_.path) / file).string() + ": expected shape " + expected +
                       ", got " + shape_text(a.shape) + hint);
  }

 private:
  GraphDir& dir_;
};

template <class T>
void write_matrix(const fs::path& dir, const char* file, const MatrixView<const T>& m) {
  const std::string path = (dir / file).string();
  if (m.rows > 0 && m.cols > 0 && m.stride != m.cols)
    throw InvalidInput(path + ": the array to write is not contiguous (stride != cols)");
  const std::vector<std::int64_t> shape = {m.rows, m.cols};
  write_npy(path, std::span<const std::int64_t>(shape), m.data);
}

template <class T>
void write_vector(const fs::path& dir, const char* file, std::span<const T> v) {
  const std::vector<std::int64_t> shape = {static_cast<std::int64_t>(v.size())};
  write_npy((dir / file).string(), std::span<const std::int64_t>(shape), v.data());
}

}  // namespace

std::string GraphDir::missing(const std::string& file) const {
  std::string held;
  for (const auto& f : files) held += (held.empty() ? "" : ", ") + f;
  return path + " has no " + file +
         (held.empty() ? " (it holds no .npy files)" : " (it holds " + held + ")");
}

MatrixView<const float> GraphDir::features_view() const {
  if (!features) return {};
  return {features->as<float>("features.npy").data(), features->shape[0], features->shape[1]};
}

MatrixView<const std::int64_t> GraphDir::edge_index_view() const {
  if (!edge_index) return {};
  return {edge_index->as<std::int64_t>("edge_index.npy").data(), 2, edge_index->shape[1]};
}

std::span<const double> GraphDir::edge_weight_view() const {
  if (!edge_weight) return {};
  return edge_weight->as<double>("edge_weight.npy");
}

MatrixView<const double> GraphDir::adjacency_view() const {
  if (!adjacency) return {};
  return {adjacency->as<double>("adjacency.npy").data(), adjacency->shape[0], adjacency->shape[1]};
}

std::span<const std::int64_t> GraphDir::labels_view() const {
  if (!labels) return {};
  return labels->as<std::int64_t>("labels.npy");
}

GraphDir read_graph_dir(const std::string& path, const GraphDirOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) throw InvalidInput(path + ": not a folder");
  GraphDir dir;
  dir.path = path;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.path().extension() == ".npy") dir.files.push_back(entry.path().filename().string());
  }
  if (ec) throw InvalidInput(path + ": cannot list the folder (" + ec.message() + ")");
  std::sort(dir.files.begin(), dir.files.end());
  Reader reader(dir);

  if (reader.has("features.npy")) {
    dir.features = reader.read("features.npy", DType::Float32);
    auto& shape = dir.features->shape;
    if (shape.size() == 1) shape.push_back(1);
    if (shape.size() != 2) reader.bad_shape("features.npy", "(N, D)", *dir.features);
  }
  if (reader.has("edge_index.npy")) {
    dir.edge_index = reader.read("edge_index.npy", DType::Int64);
    const auto& shape = dir.edge_index->shape;
    if (shape.size() != 2 || shape[0] != 2) {
      const bool transposed = shape.size() == 2 && shape[1] == 2;
      reader.bad_shape("edge_index.npy", "(2, E)", *dir.edge_index,
                       transposed ? " (an (E, 2) list of pairs: save its transpose)" : "");
    }
    if (reader.has("edge_weight.npy")) {
      dir.edge_weight = reader.read("edge_weight.npy", DType::Float64);
      if (dir.edge_weight->shape != std::vector<std::int64_t>{shape[1]})
        reader.bad_shape("edge_weight.npy", extent_text(shape[1], ",) as edge_index.npy"),
                         *dir.edge_weight);
    }
  } else if (options.adjacency && reader.has("adjacency.npy")) {
    dir.adjacency = reader.read("adjacency.npy", DType::Float64);
    const auto& shape = dir.adjacency->shape;
    if (shape.size() != 2 || shape[0] != shape[1])
      reader.bad_shape("adjacency.npy", "(n, n)", *dir.adjacency);
    if (dir.features && dir.features->shape[0] != shape[0])
      reader.bad_shape("features.npy", extent_text(shape[0], ", D) as adjacency.npy"),
                       *dir.features);
  }
  if (options.edges && !dir.edge_index && !dir.adjacency)
    throw InvalidInput(dir.missing(options.adjacency
                                       ? "edge_index.npy (2, E) or adjacency.npy (n, n)"
                                       : "edge_index.npy (2, E)"));
  if (options.labels && reader.has("labels.npy")) {
    dir.labels = reader.read("labels.npy", DType::Int64);
    const auto& shape = dir.labels->shape;
    if (shape.size() != 1) reader.bad_shape("labels.npy", "(N,)", *dir.labels);
    if (dir.features && dir.features->shape[0] != shape[0])
      reader.bad_shape("labels.npy", extent_text(dir.features->shape[0], ",) as features.npy"),
                       *dir.labels);
  }
  return dir;
}

void write_graph_dir(const std::string& path, const GraphDirArrays& arrays) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec || !fs::is_directory(path))
    throw InvalidInput(path + ": cannot create the folder" + (ec ? " (" + ec.message() + ")" : ""));
  const fs::path dir(path);
  if (arrays.features) write_matrix(dir, "features.npy", *arrays.features);
  if (arrays.edge_index) {
    if (arrays.edge_index->rows != 2)
      throw InvalidInput((dir / "edge_index.npy").string() + ": expected 2 rows, got " +
                         std::to_string(arrays.edge_index->rows));
    write_matrix(dir, "edge_index.npy", *arrays.edge_index);
  }
  if (arrays.edge_weight) write_vector(dir, "edge_weight.npy", *arrays.edge_weight);
  if (arrays.adjacency) write_matrix(dir, "adjacency.npy", *arrays.adjacency);
  if (arrays.labels) write_vector(dir, "labels.npy", *arrays.labels);
}

}  // namespace birkhoff::io
