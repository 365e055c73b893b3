// The `birkhoff` command-line tool: one subcommand per file, all errors reported the same way.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/version.hpp"
#include "commands.hpp"
#include "ranks.hpp"

// OpenBLAS's own query; null when the BLAS linked in is not OpenBLAS.
extern "C" char* openblas_get_corename(void) __attribute__((weak));

namespace {

/// Debian's OpenBLAS 0.3.21 does not recognise x86 CPUs newer than itself and runs its generic
/// Prescott (SSE3) kernels there: QPAlign's dense products were 3.5x slower. OpenBLAS reads
/// OPENBLAS_CORETYPE once, when it loads, so the kernels matching the CPU are named and the
/// program starts again (once: the variable is then set). The Python package does the same.
void restart_with_openblas_kernels(char** argv) {
#if defined(__linux__) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (openblas_get_corename == nullptr || std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const char* name = openblas_get_corename();
  if (name == nullptr || std::strcmp(name, "Prescott") != 0) return;
  const char* type = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                     : __builtin_cpu_supports("avx2")  ? "Haswell"
                                                       : nullptr;
  if (type == nullptr) return;
  setenv("OPENBLAS_CORETYPE", type, 1);
  execv("/proc/self/exe", argv);  // returns only on failure: carry on with the slow kernels
#else
  (void)argv;
#endif
}

/// Reports an argument-parsing error like every other error: "birkhoff: error: ..." on stderr
/// and exit code 2, with the hint to the --help of the subcommand being parsed. Help and
/// version requests keep CLI11's output and exit code 0.
int report_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  std::string message = e.what();
  const std::vector<std::string> left = app.remaining(true);
  if (app.get_subcommands().empty() && !left.empty()) {
    // CLI11 only says that a subcommand is required: name the word it did not know.
    message = (left.front().rfind('-', 0) == 0 ? "unknown option: " : "unknown subcommand: ") +
              left.front() + " (subcommands:";
    for (const CLI::App* sub : app.get_subcommands({})) message += " " + sub->get_name();
    message += ")";
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    // CLI11 lists the arguments it did not expect in reverse order in its message; the
    // parsers' own lists keep the order given.
    if (!left.empty()) {
      message = left.size() > 1 ? "unexpected arguments:" : "unexpected argument:";
      for (const auto& a : left) message += " " + a;
    }
  }
  std::string command = app.get_name();
  for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
  std::fprintf(stderr, "birkhoff: error: %s\nRun '%s --help' for the options.\n", message.c_str(),
               command.c_str());
  return 2;
}

// The CLI's errors as exit codes. Under MPI, an invalid input is one every rank found (the
// ranks agree on their inputs first), so rank 0 alone reports it and every rank exits;
// anything else happened on one rank, which ends all of them rather than leave them waiting.
int run(int argc, char** argv) {
  // Named here, so that usage lines say `birkhoff` and not the path the program was run as.
  CLI::App app{
      "birkhoff: optimal transport, graph coarsening and graph alignment at scale. "
      "Run without arguments for this list (exit code 0); argument errors exit with "
      "code 2.",
      "birkhoff"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("birkhoff ") + birkhoff::kVersion);
  birkhoff::cli::add_transport_command(app);
  birkhoff::cli::add_sliced_command(app);
  birkhoff::cli::add_gromov_command(app);
  birkhoff::cli::add_graph_gromov_command(app);
  birkhoff::cli::add_barycenter_command(app);
  birkhoff::cli::add_fixed_barycenter_command(app);
  birkhoff::cli::add_color_transfer_command(app);
  birkhoff::cli::add_coarsen_command(app);
  birkhoff::cli::add_align_command(app);
  birkhoff::cli::add_generate_command(app);
  const bool many = birkhoff::cli::num_ranks() > 1;
  const bool speaks = birkhoff::cli::rank() == 0;
  auto fail = [&](int code, const char* format, const char* what) {
    if (speaks || many) std::fprintf(stderr, format, what);
    if (many) {
      std::fflush(stderr);
      birkhoff::cli::abort_ranks(code);
    }
    return code;
  };
  if (argc <= 1) {  // a bare `birkhoff`: the subcommand list, as --help prints it
    if (speaks) std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return speaks ? report_parse_error(app, e) : (e.get_exit_code() == 0 ? 0 : 2);
  } catch (const birkhoff::InvalidInput& e) {
    if (speaks) std::fprintf(stderr, "birkhoff: error: %s\n", e.what());
    return 2;
  } catch (const birkhoff::Cancelled& e) {
    return fail(130, "birkhoff: %s\n", e.what());
  } catch (const std::bad_alloc&) {
    return fail(3, "birkhoff: error: %s\n", "out of memory");
  } catch (const std::exception& e) {
    return fail(1, "birkhoff: error: %s\n", e.what());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  restart_with_openblas_kernels(argv);
  birkhoff::cli::start_ranks(&argc, &argv);
  const int code = run(argc, argv);
  birkhoff::cli::finish_ranks();
  return code;
}
