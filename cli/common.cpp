#include "common.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"

namespace birkhoff::cli {

namespace {
// Rethrows a read error prefixed with `what` (unless it starts with it already), keeping its type.
[[noreturn]] void rethrow_named(const InvalidInput& e, const std::string& what) {
  std::string message = e.what();
  if (message.rfind(what + ": ", 0) != 0) message = what + ": " + message;
  if (dynamic_cast<const InvalidType*>(&e)) throw InvalidType(message);
  throw InvalidInput(message);
}
}  // namespace

namespace {

// An (n, d) array of a .npy file (a vector reads as (n, 1)); integer arrays when `integers`.
Matrix read_matrix(const std::string& path, const std::string& what, bool integers) {
  Matrix m;
  try {
    m.array = io::read_npy(path);
  } catch (const InvalidInput& e) {
    rethrow_named(e, what);
  }
  const bool ok = m.array.dtype == io::DType::Float32 || m.array.dtype == io::DType::Float64 ||
                  (integers && io::is_integer(m.array.dtype));
  if (!ok)
    throw InvalidType(
        what + ": " + path + " holds " + io::dtype_name(m.array.dtype) +
        (integers ? "; expected a float or integer array" : "; expected float32 or float64"));
  if (m.array.shape.size() == 1) m.array.shape.push_back(1);
  require(m.array.shape.size() == 2, what,
          path + " must hold a 2-D (n, d) array, got " + std::to_string(m.array.shape.size()) +
              " dimensions");
  m.rows = m.array.shape[0];
  m.cols = m.array.shape[1];
  return m;
}

}  // namespace

Matrix load_matrix(const std::string& path, const std::string& what) {
  return read_matrix(path, what, false);
}

Matrix load_double_matrix(const std::string& path, const std::string& what,
                          std::map<std::string, std::string>& converted, bool integers) {
  Matrix m = read_matrix(path, what, integers);
  if (!m.is_double()) {
    m.array.convert(io::DType::Float64, what);
    converted[what] = m.array.conversion();
  }
  return m;
}

std::map<std::string, std::string> unify_dtypes(Matrix& x, Matrix& y, const char* what_x,
                                                const char* what_y) {
  std::map<std::string, std::string> converted;
  for (auto [m, what] : {std::pair{&x, what_x}, std::pair{&y, what_y}}) {
    if (x.array.dtype != y.array.dtype && !m->is_double()) {
      m->array.convert(io::DType::Float64, what);
      converted[what] = m->array.conversion();
    }
  }
  return converted;
}

template <class T>
std::vector<T> load_vector(const std::string& path, const std::string& what,
                           std::map<std::string, std::string>& converted) {
  io::NpyArray a;
  try {
    a = io::read_npy_as<T>(path, what);
  } catch (const InvalidInput& e) {
    rethrow_named(e, what);
  }
  require(a.shape.size() == 1, what, path + " must hold a 1-D array");
  require(a.shape[0] > 0, what,
          path + " holds no entries (leave the flag out for uniform weights)");
  if (a.converted_from) converted[what] = a.conversion();
  const auto values = a.as<T>(what);
  return {values.begin(), values.end()};
}
template std::vector<float> load_vector(const std::string&, const std::string&,
                                        std::map<std::string, std::string>&);
template std::vector<double> load_vector(const std::string&, const std::string&,
                                         std::map<std::string, std::string>&);

ProgressBar::ProgressBar(bool quiet)
    : quiet_(quiet || !isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fputc('\n', stderr);
}

ProgressCallback ProgressBar::callback() {
  return [this](const ProgressInfo& info) {
    if (quiet_) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100))
      return true;
    last_ = now;
    drawn_ = true;
    const double frac =
        info.total > 0 ? static_cast<double>(info.done) / static_cast<double>(info.total) : 0.0;
    const int width = 30;
    const int filled = static_cast<int>(frac * width);
    // Solvers with a schedule say where they are: epsilon and the latest error estimate.
    char extra[64] = "";
    if (std::isfinite(info.epsilon) && std::isfinite(info.error)) {
      std::snprintf(extra, sizeof extra, "  eps %.2e  error %.2e", info.epsilon, info.error);
    } else if (std::isfinite(info.epsilon)) {
      std::snprintf(extra, sizeof extra, "  eps %.2e", info.epsilon);
    }
    std::fprintf(stderr, "\r%.*s [%s%s] %lld/%lld  %.1fs%s  ", static_cast<int>(info.stage.size()),
                 info.stage.data(), std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), '.').c_str(),
                 static_cast<long long>(info.done), static_cast<long long>(info.total),
                 seconds_since(start_), extra);
    if (info.done >= info.total) {  // end the bar's line before anything else is printed
      std::fputc('\n', stderr);
      drawn_ = false;
    }
    std::fflush(stderr);
    return true;
  };
}

namespace {

[[noreturn]] void rename(const InvalidInput& e, const std::string& core, const std::string& cli) {
  const std::string what = e.what();
  const std::string message = cli + " (" + core + "): " + what.substr(core.size() + 2);
  if (dynamic_cast<const InvalidType*>(&e)) throw InvalidType(message);
  throw InvalidInput(message);
}

bool names(const std::string& what, const std::string& core) {
  return what.rfind(core + ": ", 0) == 0;
}

}  // namespace

void rethrow_with_cli_names(const InvalidInput& e,
                            std::initializer_list<std::pair<const char*, const char*>> names_) {
  for (const auto& [core, cli] : names_)
    if (names(e.what(), core)) rename(e, core, cli);
  throw;
}

void rethrow_with_cli_names(const InvalidInput& e,
                            const std::vector<std::pair<std::string, std::string>>& described,
                            std::initializer_list<std::pair<const char*, const char*>> names_) {
  for (const auto& [core, cli] : names_)
    if (names(e.what(), core)) rename(e, core, cli);
  for (const auto& [core, cli] : described)
    if (names(e.what(), core)) rename(e, core, cli);
  throw;
}

void check_writable(const std::string& path, const std::string& option) {
  require(!path.empty(), option, "empty path");
  std::error_code ec;
  require(!std::filesystem::is_directory(path, ec), option, path + " is a directory");
  const bool existed = std::filesystem::exists(path, ec);
  std::FILE* f = std::fopen(path.c_str(), "ab");
  require(f != nullptr, option, "cannot write " + path);
  std::fclose(f);
  if (!existed) std::filesystem::remove(path, ec);
}

void note_conversions(const std::map<std::string, std::string>& converted, bool silent) {
  if (silent) return;
  for (const auto& [name, conversion] : converted)
    std::fprintf(stderr, "birkhoff: note: converted %s %s\n", name.c_str(), conversion.c_str());
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void warn_not_converged(const transport::SinkhornReport& r, double marginal_tol) {
  std::string why;
  if (r.schedule == "geomloss") {
    why =
        "after the GeomLoss schedule (one sweep per epsilon); use the default --schedule "
        "converge, or anneal more slowly (--scaling closer to 1)";
  } else if (r.budget_exhausted) {
    why = "when the budget of --max-iter iterations at the final epsilon ran out";
  } else if (r.stalled) {
    why = "the error stopped improving at the final epsilon (the floor of the " + r.working_dtype +
          " arithmetic); use float64 points or a larger --blur";
  } else {
    why = "truncation bound " + std::to_string(r.truncation_bound);
  }
  std::fprintf(stderr, "birkhoff: warning: not converged: marginal error %.3g > %.3g %s\n",
               r.marginal_error, marginal_tol, why.c_str());
}

nlohmann::json graph_input_json(const graph::AttributedGraph& g, std::int64_t nodes_from_ids,
                                const std::string& loops_key) {
  return {{"nodes", g.num_nodes},
          {"nodes_from_ids", nodes_from_ids},
          {loops_key, g.self_loops},
          {"duplicates_merged", g.duplicates_merged},
          {"one_way_pairs", g.one_way_pairs},
          {"two_way_pairs", g.two_way_pairs},
          {"directed", g.directed}};
}

std::string graph_input_line(const graph::AttributedGraph& g, std::int64_t nodes_from_ids,
                             const std::string& name, const std::string& loops_verb) {
  std::string line = name + ": " + std::to_string(g.num_nodes) + " nodes";
  if (nodes_from_ids > 0) line += " (" + std::to_string(nodes_from_ids) + " from ids alone)";
  line += ", " + std::to_string(g.self_loops) + " self-loops " + loops_verb + ", " +
          std::to_string(g.duplicates_merged) + " duplicate or reversed edges merged";
  if (!g.directed) {
    line += ", " + std::to_string(g.one_way_pairs) + " pairs listed one way and " +
            std::to_string(g.two_way_pairs) + " both ways (read as undirected)";
  }
  return line;
}

std::string orientation_warning(const graph::AttributedGraph& g, const std::string& name,
                                const std::string& hint) {
  if (g.directed || !g.mixed_orientation()) return {};
  return name + " is not symmetric: " + std::to_string(g.one_way_pairs) +
         " node pairs are listed in one orientation only and " + std::to_string(g.two_way_pairs) +
         " in both; every edge was read as undirected (" + hint + ")";
}

void print_warning(const std::string& message) {
  std::fprintf(stderr, "birkhoff: warning: %s\n", message.c_str());
}

double peak_rss_mb() { return static_cast<double>(peak_rss_bytes()) / 1e6; }

void print_json(const nlohmann::json& j) { std::cout << j.dump() << std::endl; }

void add_cloud_arguments(CLI::App* cmd, std::string& source, std::string& target,
                         std::string& weights_a, std::string& weights_b) {
  cmd->add_option("SOURCE", source, "source points x, .npy (n, d)")->required();
  cmd->add_option("TARGET", target, "target points y, .npy (m, d)")->required();
  cmd->add_option("--weights-a", weights_a, "source weights a, .npy (n,); default uniform 1/n");
  cmd->add_option("--weights-b", weights_b, "target weights b, .npy (m,); default uniform 1/m");
}

void add_report_flags(CLI::App* cmd, bool& json, bool& quiet) {
  cmd->add_flag("--json", json, "print one JSON object with the results");
  cmd->add_flag("--quiet", quiet, "no progress bar");
}

}  // namespace birkhoff::cli
