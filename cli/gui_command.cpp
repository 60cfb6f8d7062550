#include "cli/gui_command.h"

#include "cli/sibling_program.h"

namespace cc::cli {

void add_gui_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("gui", "Open the Qt6 GUI (clustercast-gui); arguments are passed on to it");
  sub->prefix_command();  // everything after `gui` belongs to clustercast-gui
  sub->callback([sub] {
    exec_sibling("clustercast-gui", "clustercast-gui", sub->remaining(),
                 "it is built only where Qt6 is found (bash scripts/gui.sh installs Qt and builds it)");
  });
}

}  // namespace cc::cli
