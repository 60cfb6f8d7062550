#include "cli/run_cli.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/exit_code.h"
#include "interop/strict_numbers.h"
#include "sim/atomic_file.h"
#include "sim/error.h"

namespace cc::cli {

namespace {

// Under mpirun every rank parses the same command line: let only rank 0 report a bad one.
bool reports_errors(bool under_mpirun) {
  if (!under_mpirun) return true;
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* rank = std::getenv(var)) return std::string(rank) == "0";
  return true;
}

// A report that never reached its reader (stdout on a full disk, closed, a pipe whose reader
// left) is a failed command, not a silent success.
bool stdout_written() {
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  if (std::cout.good() && flushed && !std::ferror(stdout)) return true;
  const int error = errno;
  std::cerr << "clustercast: writing the report to standard output failed"
            << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << "\n";
  return false;
}

}  // namespace

int run_cli(CLI::App& app, int argc, char** argv, bool under_mpirun) {
  report_oversized_writes_as_errors();
  app.require_subcommand(1);
  // CLI11 answers an unknown first word with only "A subcommand is required": name the word
  // and list what would be valid.
  std::string subcommands;
  bool known = false;
  for (const CLI::App* sub : app.get_subcommands({})) {
    subcommands += (subcommands.empty() ? "" : ", ") + sub->get_name();
    known = known || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    if (reports_errors(under_mpirun))
      std::cerr << "clustercast: '" << argv[1] << "' is not a subcommand; valid subcommands: " << subcommands
                << " (clustercast --help)\n";
    return 2;
  }
  interop::read_numbers_strictly(app);  // every number as sim/numbers reads it (010 is 10, '' refused)
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (reports_errors(under_mpirun)) {
      std::cerr << "clustercast: " << e.what();
      // No subcommand at all (`clustercast`, `clustercast --frob`): say which there are.
      if (app.get_subcommands().empty()) std::cerr << "; subcommands: " << subcommands;
      std::cerr << "\n";
    }
    return 2;
  } catch (const ExitCode& e) {
    return e.code;
  } catch (const cc::SpecError& e) {
    std::cerr << "clustercast: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "clustercast: internal error: " << e.what() << "\n";
    return 1;
  }
  return stdout_written() ? 0 : 1;
}

}  // namespace cc::cli
