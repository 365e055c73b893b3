#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/graph/graph.hpp"
#include "birkhoff/io/npy.hpp"
#include "birkhoff/transport/solution.hpp"

namespace birkhoff::cli {

/// A 2-D float array loaded from a .npy file, as float32 or float64 (whichever the file has).
struct Matrix {
  io::NpyArray array;
  std::int64_t rows = 0, cols = 0;
  bool is_double() const { return array.dtype == io::DType::Float64; }
};

/// Loads an (n, d) float32/float64 .npy file; throws InvalidInput/InvalidType naming `what`.
Matrix load_matrix(const std::string& path, const std::string& what);
/// Loads an (n, d) .npy file as float64 (a float32 file, or an integer one when `integers`,
/// converted, noted in `converted[what]`).
Matrix load_double_matrix(const std::string& path, const std::string& what,
                          std::map<std::string, std::string>& converted, bool integers = false);
/// Two clouds of different dtypes are solved in float64: converts the float32 one (once) and
/// returns the conversions made, keyed by `what_x` / `what_y`.
std::map<std::string, std::string> unify_dtypes(Matrix& x, Matrix& y, const char* what_x,
                                                const char* what_y);
/// Loads an (n,) .npy vector of weights converted to T (from float32, float64 or an integer
/// dtype; recorded in `converted[what]`); throws naming `what`.
template <class T>
std::vector<T> load_vector(const std::string& path, const std::string& what,
                           std::map<std::string, std::string>& converted);

/// A progress bar on stderr: silent for the first second, then redrawn at most 10 times a
/// second; disabled by `quiet` or when stderr is not a terminal and `force` is unset.
class ProgressBar {
 public:
  explicit ProgressBar(bool quiet);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  /// The callback to pass to a solver.
  ProgressCallback callback();

 private:
  bool quiet_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

/// Rethrows a core error with the CLI's names for the arguments: the core says "x: ...",
/// the user typed SOURCE; `names` maps core names to CLI names. Call from a catch block.
[[noreturn]] void rethrow_with_cli_names(
    const InvalidInput& e, std::initializer_list<std::pair<const char*, const char*>> names);
/// The same with names from a description (cli/describe.hpp: flag_names<S>()), tried after
/// `names`.
[[noreturn]] void rethrow_with_cli_names(
    const InvalidInput& e, const std::vector<std::pair<std::string, std::string>>& described,
    std::initializer_list<std::pair<const char*, const char*>> names = {});

/// Fails early, naming `option`, when `path` cannot be created or written.
void check_writable(const std::string& path, const std::string& option);

/// Prints "birkhoff: note: converted NAME FROM->TO" on stderr for each conversion made on
/// reading, unless `silent` (--json reports them in its "converted" object).
void note_conversions(const std::map<std::string, std::string>& converted, bool silent);

/// Seconds since `start`.
double seconds_since(std::chrono::steady_clock::time_point start);
/// The warning printed when a solve ends with marginal_error > marginal_tol (or NaN): which
/// budget ran out and how far it got.
void warn_not_converged(const transport::SinkhornReport& report, double marginal_tol);

/// What the graph builder did with a graph folder's input, for the JSON output: nodes,
/// nodes_from_ids (nodes that only the edge ids gave: N when N was set to the largest id + 1),
/// `loops_key` (self-loops: "self_loops_used" or "self_loops_dropped"), duplicates_merged
/// (repeated or reversed entries), one_way_pairs and two_way_pairs (see
/// graph::AttributedGraph), directed.
nlohmann::json graph_input_json(const graph::AttributedGraph& g, std::int64_t nodes_from_ids,
                                const std::string& loops_key);
/// The same as one line for the text output: "NAME: N nodes (k from ids alone), s self-loops
/// VERB, m duplicate or reversed edges merged, ...".
std::string graph_input_line(const graph::AttributedGraph& g, std::int64_t nodes_from_ids,
                             const std::string& name, const std::string& loops_verb);
/// The warning for an undirected read of an edge list that gives some pairs in both
/// orientations and others in one only (AttributedGraph::mixed_orientation); empty when there
/// is nothing to say. `hint` says what to do instead (naming --directed).
std::string orientation_warning(const graph::AttributedGraph& g, const std::string& name,
                                const std::string& hint);
/// Prints "birkhoff: warning: MESSAGE" on stderr.
void print_warning(const std::string& message);

/// The positionals SOURCE (n, d) and TARGET (m, d) and the flags --weights-a, --weights-b of a
/// subcommand between two point clouds.
void add_cloud_arguments(CLI::App* cmd, std::string& source, std::string& target,
                         std::string& weights_a, std::string& weights_b);

/// The flags every solving subcommand has: --json (one JSON object on stdout) and --quiet (no
/// progress bar).
void add_report_flags(CLI::App* cmd, bool& json, bool& quiet);

/// Peak RSS of this process in MB (10^6 bytes).
double peak_rss_mb();
/// Prints one JSON object on stdout.
void print_json(const nlohmann::json& j);

}  // namespace birkhoff::cli
