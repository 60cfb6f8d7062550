// Runs `clustercast ARGS` as an MPI job started by the real mpirun, with a hard timeout:
// a hang is a failure, never a stuck CI. Settings for a 2-core CI box: oversubscribe,
// shared-memory transport, yield when idle, and allow root (CI runs as root).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <sstream>
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
  std::map<int, long> activation_bytes;   // stage -> peak bytes
  std::map<int, long> attention_scores;   // stage -> of which attention S×S tensors
};

// Reads the lines `clustercast train` prints (std::regex is avoided: GCC 12 warns inside it
// under the sanitizer build).
inline TrainOutput parse_train(const std::string& out) {
  TrainOutput t;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    if (w.size() >= 4 && w[0] == "step" && w[2] == "loss") t.loss[std::stoi(w[1])] = w[3];
    if (w.size() >= 4 && w[0] == "update_fingerprint" && w[2] == "update_norm") {
      t.fingerprint = w[1];
      t.update_norm = w[3];
    }
    if (w.size() >= 3 && w[0] == "validation" && w[1] == "loss") t.validation = w[2];
    if (w.size() >= 7 && w[0] == "activation_bytes" && w[3] == "peak" && w[5] == "attention_scores") {
      t.activation_bytes[std::stoi(w[2])] = std::stol(w[4]);
      t.attention_scores[std::stoi(w[2])] = std::stol(w[6]);
    }
  }
  return t;
}

// A parallel run against the serial run: the same three losses and parameter update, relative
// 1e-4 (fp32 sums taken in another order). Fails the calling test; `out` is shown on failure.
inline void expect_matches_serial(const TrainOutput& got, const TrainOutput& want, const std::string& out) {
  if (got.loss.size() != 3u) {
    ADD_FAILURE() << "expected 3 steps' losses in:\n" << out;
    return;
  }
  for (const auto& [step, loss] : want.loss)
    EXPECT_NEAR(std::stod(got.loss.at(step)), std::stod(loss), 1e-4 * std::stod(loss)) << "step " << step;
  const double norm = std::stod(want.update_norm);
  EXPECT_GT(norm, 0);
  EXPECT_NEAR(std::stod(got.update_norm), norm, 1e-4 * norm);
  EXPECT_NEAR(std::stod(got.fingerprint), std::stod(want.fingerprint), 1e-4 * norm);
}

}  // namespace cc::cli_test
