// train_command.h — `clustercast train`: one MPI rank of a real training run.
#pragma once

#include <CLI/CLI.hpp>

namespace cc::cli {

void add_train_command(CLI::App& app);

}  // namespace cc::cli
