// The `birkhoff` command-line tool: one subcommand per file, all errors reported the same way.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "birkhoff/core/error.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"birkhoff: optimal transport, graph coarsening and graph alignment at scale"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "birkhoff 0.1.0");
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
