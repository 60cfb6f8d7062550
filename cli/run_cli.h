// run_cli.h — what both executables (`clustercast`, `clustercast-engine`) do with a command
// line once their subcommands are registered: parse, run, and turn every kind of failure into
// its exit status. Exit codes: 0 success, 2 bad input (the message says which value and what
// is valid), 1 an internal error (a bug: please report it); a command may leave with its own
// (validate: 3 on a miss, 130 on Ctrl-C).
#pragma once

#include <CLI/CLI.hpp>

namespace cc::cli {

// `under_mpirun`: the program's commands run on every MPI rank (clustercast-engine), so a bad
// command line is reported by rank 0 alone; clustercast itself reports whatever the
// environment's rank variables say.
int run_cli(CLI::App& app, int argc, char** argv, bool under_mpirun = false);

}  // namespace cc::cli
