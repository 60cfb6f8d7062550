#include "cli/engine_commands.h"

#include <string>
#include <vector>

#include "cli/sibling_program.h"

namespace cc::cli {

const char* engine_command_summary(std::string_view name) {
  for (const EngineCommand& c : kEngineCommands)
    if (name == c.name) return c.summary;
  return "";
}

bool is_engine_command(std::string_view word) {
  for (const EngineCommand& c : kEngineCommands)
    if (word == c.name) return true;
  return false;
}

namespace {

[[noreturn]] void exec_engine(const std::string& argv0, const std::vector<std::string>& args) {
  exec_sibling("clustercast-engine", argv0, args,
               "`train`, `profile` and `validate` run in it (cmake --build build --target clustercast-engine)");
}

}  // namespace

void forward_to_engine(int argc, char** argv) {
  exec_engine(argv[0], std::vector<std::string>(argv + 1, argv + argc));
}

void add_engine_command_forwarders(CLI::App& app) {
  for (const EngineCommand& c : kEngineCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    // main() hands these over before parsing; should the parser still reach one, it hands over too.
    sub->prefix_command();
    sub->callback([sub, name = std::string(c.name)] {
      std::vector<std::string> args{name};
      for (const std::string& a : sub->remaining()) args.push_back(a);
      exec_engine("clustercast", args);
    });
  }
}

}  // namespace cc::cli
