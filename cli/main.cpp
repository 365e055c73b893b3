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

}  // namespace

int main(int argc, char** argv) {
  restart_with_openblas_kernels(argv);
  CLI::App app{"birkhoff: optimal transport, graph coarsening and graph alignment at scale"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("birkhoff ") + birkhoff::kVersion);
  birkhoff::cli::add_transport_command(app);
  birkhoff::cli::add_color_transfer_command(app);
  birkhoff::cli::add_coarsen_command(app);
  birkhoff::cli::add_align_command(app);
  birkhoff::cli::add_generate_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const birkhoff::InvalidInput& e) {
    std::fprintf(stderr, "birkhoff: error: %s\n", e.what());
    return 2;
  } catch (const birkhoff::Cancelled& e) {
    std::fprintf(stderr, "birkhoff: %s\n", e.what());
    return 130;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "birkhoff: error: out of memory\n");
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "birkhoff: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
