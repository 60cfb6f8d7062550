// profile_command.h — `clustercast profile`: measure a real small run of the engine at the
// target model's shapes and write the cost database `simulate --costs` reads.
#pragma once

#include <CLI/CLI.hpp>

namespace cc::cli {

// argc/argv: the command line, recorded in the database as the command that made it.
void add_profile_command(CLI::App& app, int argc, char** argv);

}  // namespace cc::cli
