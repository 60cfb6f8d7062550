// search_command.h — `clustercast search`: the fastest layouts that fit, ranked, exported.
#pragma once

#include <CLI/CLI.hpp>

namespace cc::cli {

void add_search_command(CLI::App& app);

}  // namespace cc::cli
