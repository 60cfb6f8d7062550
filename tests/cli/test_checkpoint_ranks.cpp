// A checkpoint holds one rank's shard and says whose (world rank, TP/PP/DP coordinates):
// resuming from another rank's file is refused on every rank, under the real mpirun.
#include <gtest/gtest.h>

#include <filesystem>

#include "mpi_runner.h"

namespace cc::cli_test {
namespace {

std::vector<std::string> tp2_args(const std::vector<std::string>& more) {
  return with({"train", "--model", "tiny", "--tp", "2", "--micro-batch-size", "2", "--global-batch-size", "4",
               "--seed", "5", "--warmup-steps", "1", "--eval-windows", "0"},
              more);
}

TEST(CheckpointRanks, SwappedShardsOfATp2RunAreRefusedAndTheirOwnResume) {
  TempDir dir;
  const RunResult saved = run_mpi(2, tp2_args({"--steps", "2", "--save", dir.file("ckpt")}));
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  const std::string step = dir.file("ckpt/step-2");

  // Control: the files as saved resume (so the refusal below is about the swap alone).
  const RunResult own = run_mpi(2, tp2_args({"--steps", "3", "--resume", step}));
  EXPECT_EQ(own.exit_code, 0) << own.err;

  // Same layout, same sizes, another rank's weights: exited 0 before ranks were recorded.
  std::filesystem::rename(step + "/rank-0.ckpt", step + "/swap");
  std::filesystem::rename(step + "/rank-1.ckpt", step + "/rank-0.ckpt");
  std::filesystem::rename(step + "/swap", step + "/rank-1.ckpt");
  const RunResult swapped = run_mpi(2, tp2_args({"--steps", "3", "--resume", step}), 120);
  EXPECT_EQ(swapped.exit_code, 2) << swapped.err;
  // Whichever rank's refusal is reported, it names the file and both ranks.
  const bool rank0 = swapped.err.find("rank-0.ckpt': rank is '1', but this rank's is '0'") != std::string::npos;
  const bool rank1 = swapped.err.find("rank-1.ckpt': rank is '0', but this rank's is '1'") != std::string::npos;
  EXPECT_TRUE(rank0 || rank1) << swapped.err;
  EXPECT_EQ(swapped.out.find("step 3"), std::string::npos) << "no step may run from the wrong shard";
}

}  // namespace
}  // namespace cc::cli_test
