// clustercast — simulate, search, profile and train large-language-model layouts.
// Exit codes: 0 success, 2 bad input (the message says which value and what is valid),
// 1 an internal error (a bug: please report it).
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/search_command.h"
#include "cli/simulate_command.h"
#include "sim/error.h"

int main(int argc, char** argv) {
  CLI::App app{"clustercast — a cluster simulator and performance modeler for LLM training"};
  app.require_subcommand(1);
  cc::cli::add_simulate_command(app);
  cc::cli::add_search_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "clustercast: " << e.what() << "\n";
    return 2;
  } catch (const cc::SpecError& e) {
    std::cerr << "clustercast: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "clustercast: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
