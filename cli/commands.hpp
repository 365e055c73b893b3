#pragma once

#include <CLI/CLI.hpp>

namespace birkhoff::cli {

/// Each subcommand registers itself on the application; one file per subcommand.
void add_transport_command(CLI::App& app);
void add_color_transfer_command(CLI::App& app);
void add_coarsen_command(CLI::App& app);
void add_align_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_sliced_command(CLI::App& app);
void add_gromov_command(CLI::App& app);
void add_graph_gromov_command(CLI::App& app);
void add_barycenter_command(CLI::App& app);
void add_fixed_barycenter_command(CLI::App& app);

}  // namespace birkhoff::cli
