#include "common.hpp"

#include <unistd.h>

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

Matrix load_matrix(const std::string& path, const std::string& what) {
  Matrix m;
  try {
    m.array = io::read_npy(path);
  } catch (const InvalidInput& e) {
    rethrow_named(e, what);
  }
  if (m.array.dtype != io::DType::Float32 && m.array.dtype != io::DType::Float64)
    throw InvalidType(what + ": " + path + " holds " + io::dtype_name(m.array.dtype) +
                      "; expected float32 or float64");
  if (m.array.shape.size() == 1) m.array.shape.push_back(1);
  require(m.array.shape.size() == 2, what,
          path + " must hold a 2-D (n, d) array, got " + std::to_string(m.array.shape.size()) +
              " dimensions");
  m.rows = m.array.shape[0];
  m.cols = m.array.shape[1];
  return m;
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
    std::fprintf(stderr, "\r%.*s [%s%s] %lld/%lld  %.1fs", static_cast<int>(info.stage.size()),
                 info.stage.data(), std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), '.').c_str(),
                 static_cast<long long>(info.done), static_cast<long long>(info.total),
                 seconds_since(start_));
    if (info.done >= info.total) {  // end the bar's line before anything else is printed
      std::fputc('\n', stderr);
      drawn_ = false;
    }
    std::fflush(stderr);
    return true;
  };
}

void rethrow_with_cli_names(const InvalidInput& e,
                            std::initializer_list<std::pair<const char*, const char*>> names) {
  const std::string what = e.what();
  for (const auto& [core, cli] : names) {
    const std::string prefix = std::string(core) + ": ";
    if (what.rfind(prefix, 0) == 0) {
      const std::string message =
          std::string(cli) + " (" + core + "): " + what.substr(prefix.size());
      if (dynamic_cast<const InvalidType*>(&e)) throw InvalidType(message);
      throw InvalidInput(message);
    }
  }
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

void warn_not_converged(double marginal_error, double marginal_tol) {
  std::fprintf(stderr,
               "birkhoff: warning: not converged: marginal error %.3g > %.3g. The annealed "
               "schedule does one sweep per epsilon; anneal more slowly (--scaling closer to 1) "
               "or run a fixed epsilon to convergence (--schedule alternating --iterations N "
               "--tolerance T)\n",
               marginal_error, marginal_tol);
}

double peak_rss_mb() { return static_cast<double>(peak_rss_bytes()) / 1e6; }

void print_json(const nlohmann::json& j) { std::cout << j.dump() << std::endl; }

}  // namespace birkhoff::cli
