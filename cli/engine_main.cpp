// clustercast-engine — the subcommands of clustercast that run the real training engine:
// `train`, `profile`, `validate`. It links MPI, the engine and, where built, the CUDA backend;
// `clustercast` hands these subcommands to it unchanged, so users type `clustercast train`.
#include <CLI/CLI.hpp>

#include "cli/profile_command.h"
#include "cli/run_cli.h"
#include "cli/train_command.h"
#include "cli/validate_command.h"
#include "engine/host_allocator.h"

int main(int argc, char** argv) {
  cc::engine::keep_freed_host_memory();  // before anything allocates: see host_allocator.h
  // No name of its own: CLI11 takes argv[0], which clustercast passes on as the user typed it.
  CLI::App app{"clustercast — a cluster simulator and performance modeler for LLM training (engine commands)"};
  cc::cli::add_profile_command(app, argc, argv);
  cc::cli::add_train_command(app);
  cc::cli::add_validate_command(app, argc, argv);
  return cc::cli::run_cli(app, argc, argv, /*under_mpirun=*/true);
}
