// simulate_command.h — `clustercast simulate`: one layout in, one prediction out.
#pragma once

#include <CLI/CLI.hpp>

namespace cc::cli {

// Registers the subcommand; its callback runs the simulation and prints the result.
void add_simulate_command(CLI::App& app);

}  // namespace cc::cli
