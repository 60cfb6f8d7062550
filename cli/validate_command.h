// validate_command.h — `clustercast validate`: the promise checked end to end. Profiles a
// model once (or takes --costs), predicts each given layout from that database alone, trains
// each for real under mpirun, and compares iteration time and activation memory layout by
// layout, with where a miss sits; writes the report atomically and exits 3 when a layout
// misses the tolerance, so it can gate a release.
#pragma once

#include <CLI/CLI.hpp>

namespace cc::cli {

void add_validate_command(CLI::App& app, int argc, char** argv);

}  // namespace cc::cli
