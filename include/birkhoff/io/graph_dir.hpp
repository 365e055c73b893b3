#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/core/view.hpp"
#include "birkhoff/io/npy.hpp"

namespace birkhoff::io {

/// The arrays of a graph folder, the format that `birkhoff coarsen` and `birkhoff align` read
/// and `birkhoff generate` writes (one .npy file per array, any byte order, C or Fortran order):
///
/// | file            | shape  | read as | what                                               |
/// |-----------------|--------|---------|----------------------------------------------------|
/// | features.npy    | (N, D) | float32 | node features (a 1-d (N,) file reads as (N, 1))    |
/// | edge_index.npy  | (2, E) | int64   | node pairs, row 0 sources, row 1 targets; E may be 0 |
/// | edge_weight.npy | (E,)   | float64 | weights of the edge_index columns                  |
/// | adjacency.npy   | (n, n) | float64 | dense adjacency, read only without edge_index.npy  |
/// | labels.npy      | (N,)   | int64   | node classes, read when GraphDirOptions::labels    |
///
/// Each file is converted to the dtype above while it is read (any integer dtype for ids and
/// labels, float32 or float64 for the floats) and the conversion is recorded in `converted`.
/// io checks shapes and that sizes agree between files; ids and values (range, finiteness)
/// are checked by the domain code that uses them.
struct GraphDir {
  std::string path;                     ///< the folder, as given
  std::vector<std::string> files;       ///< the .npy files present, sorted
  std::optional<NpyArray> features;     ///< features.npy as (N, D) float32
  std::optional<NpyArray> edge_index;   ///< edge_index.npy as (2, E) int64
  std::optional<NpyArray> edge_weight;  ///< edge_weight.npy as (E,) float64
  std::optional<NpyArray> adjacency;    ///< adjacency.npy as (n, n) float64
  std::optional<NpyArray> labels;       ///< labels.npy as (N,) int64
  /// Array name (the file name without .npy) -> "int32->int64" for each file converted on
  /// reading.
  std::map<std::string, std::string> converted;

  /// "<path> has no <file> (it holds a.npy, b.npy)": the message for a file that a caller
  /// needs and the folder lacks.
  std::string missing(const std::string& file) const;
  /// Views of the arrays read (empty views for the files absent).
  MatrixView<const float> features_view() const;
  MatrixView<const std::int64_t> edge_index_view() const;
  std::span<const double> edge_weight_view() const;
  MatrixView<const double> adjacency_view() const;
  std::span<const std::int64_t> labels_view() const;
};

/// Which files read_graph_dir reads besides features.npy, which it reads when present (the
/// caller decides whether features are required: GraphDir::missing gives the message).
struct GraphDirOptions {
  /// Require edge_index.npy or adjacency.npy.
  bool edges = true;
  /// Read adjacency.npy when there is no edge_index.npy (an (n, n) array: only callers that
  /// use a dense adjacency should ask for it).
  bool adjacency = false;
  /// Read labels.npy when present.
  bool labels = false;
};

/// Reads the graph folder at `path` (see GraphDir for the files and dtypes).
/// @throws InvalidInput naming `path` when it is not a folder; naming the missing file, with
///         the files present, when `options.edges` is set and there is neither edge_index.npy
///         nor (with options.adjacency) adjacency.npy; naming the file when it cannot be read,
///         has the wrong number of dimensions or its sizes disagree with another file's
///         (edge_weight.npy vs E, labels.npy vs N); InvalidType naming the file when its dtype
///         does not convert (float features into int ids, ...).
GraphDir read_graph_dir(const std::string& path, const GraphDirOptions& options = {});

/// The arrays write_graph_dir writes: each one given is written as its file of GraphDir's table,
/// in that file's dtype (an edge-less graph: an edge_index view with 2 rows and 0 columns).
struct GraphDirArrays {
  std::optional<MatrixView<const float>> features;           ///< (N, D), row-major
  std::optional<MatrixView<const std::int64_t>> edge_index;  ///< (2, E), row-major
  std::optional<std::span<const double>> edge_weight;        ///< (E,)
  std::optional<MatrixView<const double>> adjacency;         ///< (n, n), row-major
  std::optional<std::span<const std::int64_t>> labels;       ///< (N,)
};

/// Creates the folder `path` (and its parents) and writes the arrays given in `arrays`.
/// @throws InvalidInput naming `path` or the file when a folder or a file cannot be written,
///         when a view is not contiguous (stride != cols) or edge_index has not 2 rows.
void write_graph_dir(const std::string& path, const GraphDirArrays& arrays);

}  // namespace birkhoff::io
