// The `birkhoff` command-line tool: one subcommand per file, all errors reported the same way.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

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

// The CLI's errors as exit codes. Under MPI, an invalid input is one every rank found (the
// ranks agree on their inputs first), so rank 0 alone reports it and every rank exits;
// anything else happened on one rank, which ends all of them rather than leave them waiting.
int run(int argc, char** argv) {
  CLI::App app{"birkhoff: optimal transport, graph coarsening and graph alignment at scale"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("birkhoff ") + birkhoff::kVersion);
  birkhoff::cli::add_transport_command(app);
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return speaks ? app.exit(e) : e.get_exit_code();
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
