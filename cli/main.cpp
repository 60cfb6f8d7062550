// clustercast — simulate, search, profile and train large-language-model layouts.
// This executable simulates and searches; it links neither MPI nor CUDA, so it starts like the
// small program it is. `train`, `profile` and `validate` run in clustercast-engine
// (engine_main.cpp), to which it hands them over; `gui` runs clustercast-gui.
#include <CLI/CLI.hpp>

#include "cli/engine_commands.h"
#include "cli/exit_code.h"
#include "cli/gui_command.h"
#include "cli/run_cli.h"
#include "cli/search_command.h"
#include "cli/simulate_command.h"

int main(int argc, char** argv) {
  if (argc > 1 && cc::cli::is_engine_command(argv[1])) {
    try {
      cc::cli::forward_to_engine(argc, argv);
    } catch (const cc::cli::ExitCode& e) {
      return e.code;
    }
  }
  CLI::App app{"clustercast — a cluster simulator and performance modeler for LLM training"};
  cc::cli::add_simulate_command(app);
  cc::cli::add_search_command(app);
  cc::cli::add_engine_command_forwarders(app);
  cc::cli::add_gui_command(app);
  return cc::cli::run_cli(app, argc, argv);
}
