#include "cli/sibling_program.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/exit_code.h"

namespace cc::cli {

void exec_sibling(const std::string& program, const std::string& argv0, const std::vector<std::string>& args,
                  const std::string& how_to_get_it) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path beside = self.parent_path() / program;
  std::vector<std::string> argv_text{argv0};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (!ec && std::filesystem::exists(beside)) execv(beside.c_str(), argv.data());
  execvp(program.c_str(), argv.data());  // an installed one on PATH
  std::cerr << "clustercast: " << program << " was not found beside "
            << (ec ? std::string("clustercast") : self.string()) << " or on PATH; " << how_to_get_it << "\n";
  throw ExitCode{2};
}

}  // namespace cc::cli
