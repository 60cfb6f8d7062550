// bad_input_contract.h — the contract every refusal of bad input meets, checked the same way
// by the hand-written corpus (test_bad_input_corpus.cpp) and the generated campaign
// (test_bad_input_campaign.cpp): the stated exit status, nothing on stdout, exactly one
// "clustercast:" line on stderr holding every stated fragment (the offending value), and no
// file left in the folder the command's outputs were aimed at.
#pragma once

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace cc::cli_test {

// "" when `r` meets the contract; else what broke it, with the run's stderr.
inline std::string breach_of_contract(const RunResult& r, int exit_code, const std::vector<std::string>& fragments,
                                      const std::set<std::string>& files_before,
                                      const std::set<std::string>& files_after) {
  std::ostringstream why;
  if (r.exit_code != exit_code) why << "exit status " << r.exit_code << ", not " << exit_code << "; ";
  if (!r.out.empty()) why << "printed on stdout; ";
  std::istringstream lines(r.err);
  int ours = 0;
  std::string message;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("clustercast:", 0) == 0) {
      ++ours;
      message = line;
    }
  if (ours != 1) why << ours << " 'clustercast:' lines, not one; ";
  for (const std::string& f : fragments)
    if (message.find(f) == std::string::npos) why << "the message does not hold '" << f << "'; ";
  if (files_after != files_before) why << "a file was left behind; ";
  if (why.str().empty()) return "";
  return why.str() + "stderr: " + r.err;
}

}  // namespace cc::cli_test
