#include "cli/gui_command.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/exit_code.h"

namespace cc::cli {

namespace {

[[noreturn]] void exec_gui(const std::vector<std::string>& args) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path beside = self.parent_path() / "clustercast-gui";
  std::vector<std::string> argv_text{"clustercast-gui"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (!ec && std::filesystem::exists(beside)) execv(beside.c_str(), argv.data());
  execvp("clustercast-gui", argv.data());  // an installed one on PATH
  std::cerr << "clustercast: clustercast-gui was not found beside " << (ec ? std::string("clustercast") : self.string())
            << " or on PATH; it is built only where Qt6 is found (bash scripts/gui.sh installs Qt and builds it)\n";
  throw ExitCode{2};
}

}  // namespace

void add_gui_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("gui", "Open the Qt6 GUI (clustercast-gui); arguments are passed on to it");
  sub->prefix_command();  // everything after `gui` belongs to clustercast-gui
  sub->callback([sub] { exec_gui(sub->remaining()); });
}

}  // namespace cc::cli
