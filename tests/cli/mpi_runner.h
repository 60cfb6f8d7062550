// Runs `clustercast ARGS` as an MPI job started by the real mpirun, with a hard timeout:
// a hang is a failure, never a stuck CI. Settings for a 2-core CI box: oversubscribe,
// shared-memory transport, yield when idle, and allow root (CI runs as root).
#pragma once

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace cc::cli_test {

inline RunResult run_mpi(int ranks, const std::vector<std::string>& args, int timeout_s = 240) {
  std::vector<std::string> cmd = {"/usr/bin/timeout", "--kill-after=10", std::to_string(timeout_s), "mpirun",
                                  "--allow-run-as-root", "--oversubscribe", "-np", std::to_string(ranks),
                                  "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none",
                                  "--mca", "mpi_yield_when_idle", "1", CLUSTERCAST_BINARY};
  cmd.insert(cmd.end(), args.begin(), args.end());
  return run_command(cmd);
}

struct TrainOutput {
  std::map<int, std::string> loss;  // step -> loss as printed
  std::string fingerprint, update_norm, validation;
  std::map<int, long> activation_bytes;  // stage -> peak bytes
};

inline TrainOutput parse_train(const std::string& out) {
  TrainOutput t;
  std::smatch m;
  std::string::const_iterator begin = out.begin();
  const std::regex step(R"(step (\d+) loss (\S+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), step); it != std::sregex_iterator(); ++it)
    t.loss[std::stoi((*it)[1])] = (*it)[2];
  if (std::regex_search(out, m, std::regex(R"(update_fingerprint (\S+) update_norm (\S+))"))) {
    t.fingerprint = m[1];
    t.update_norm = m[2];
  }
  if (std::regex_search(out, m, std::regex(R"(validation loss (\S+))"))) t.validation = m[1];
  const std::regex act(R"(activation_bytes stage (\d+) peak (\d+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), act); it != std::sregex_iterator(); ++it)
    t.activation_bytes[std::stoi((*it)[1])] = std::stol((*it)[2]);
  (void)begin;
  return t;
}

}  // namespace cc::cli_test
