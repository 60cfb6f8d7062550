// gui_command.h — `clustercast gui [ARGS...]` runs clustercast-gui, which the build puts
// beside `clustercast` when Qt6 is found. The command line itself never links Qt.
#pragma once

#include <CLI/CLI.hpp>

namespace cc::cli {

void add_gui_command(CLI::App& app);

}  // namespace cc::cli
