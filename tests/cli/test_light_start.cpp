// `clustercast` links neither MPI nor the CUDA libraries; it hands train/profile/validate to
// clustercast-engine beside it. These tests check both halves through the real binaries.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

const std::filesystem::path kEngine = std::filesystem::path(CLUSTERCAST_BINARY).parent_path() / "clustercast-engine";

// The shared libraries the dynamic loader would load for `binary` (what ldd prints).
std::string loaded_libraries(const std::string& binary) {
  const RunResult r = run_command({"/usr/bin/env", "LD_TRACE_LOADED_OBJECTS=1", binary});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(LightStart, ClustercastLoadsNoMpiCudaOrQtButTheEngineLoadsMpi) {
  const std::string light = loaded_libraries(CLUSTERCAST_BINARY);
  for (const char* heavy : {"libmpi", "libcudart", "libcublas", "libnccl", "libcupti", "libQt"})
    EXPECT_EQ(light.find(heavy), std::string::npos) << heavy << " is loaded by clustercast:\n" << light;
  // The same probe finds MPI where it is linked, so the check above can fail.
  EXPECT_NE(loaded_libraries(kEngine.string()).find("libmpi"), std::string::npos);
}

TEST(LightStart, HelpListsEveryCommandAndEngineCommandsAnswerThroughClustercast) {
  const RunResult help = run_clustercast({"--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const char* sub : {"simulate", "search", "profile", "train", "validate", "gui"})
    EXPECT_NE(help.out.find(sub), std::string::npos) << sub;

  const RunResult train_help = run_clustercast({"train", "--help"});
  ASSERT_EQ(train_help.exit_code, 0) << train_help.err;
  EXPECT_NE(train_help.out.find("--pipeline-model-parallel-size"), std::string::npos) << train_help.out;
  // A bad engine-command flag is still bad input, reported as clustercast.
  const RunResult bad = run_clustercast({"profile", "--steps", "many", "--out", "x.json"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("clustercast: "), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("many"), std::string::npos) << bad.err;
}

TEST(LightStart, AMissingEngineIsNamedWithHowToBuildIt) {
  const TempDir dir;
  const std::string alone = dir.file("clustercast");
  std::filesystem::copy_file(CLUSTERCAST_BINARY, alone);
  const RunResult r = run_command({"/usr/bin/env", "PATH=" + dir.path().string(), alone, "train", "--model", "tiny"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("clustercast-engine was not found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--target clustercast-engine"), std::string::npos) << r.err;
  // simulate needs nothing beside it.
  const RunResult sim = run_command({alone, "simulate", "--model", "gpt3-175b", "--gpus", "8", "--global-batch-size", "8"});
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
}

// simulate and search never run under mpirun: a rank variable left in the environment (a
// Slurm job step, a shell inside an MPI job) must not silence their bad-input message.
TEST(LightStart, ABadCommandLineIsReportedWhateverTheRankVariablesSay) {
  for (const char* var : {"PMI_RANK=1", "OMPI_COMM_WORLD_RANK=3", "PMIX_RANK=2"}) {
    const RunResult r = run_command({"/usr/bin/env", var, CLUSTERCAST_BINARY, "simulate", "--tpp", "3"});
    EXPECT_EQ(r.exit_code, 2) << var;
    EXPECT_NE(r.err.find("clustercast: "), std::string::npos) << var << ": " << r.err;
    EXPECT_NE(r.err.find("--tpp"), std::string::npos) << var << ": " << r.err;
  }
}

}  // namespace
}  // namespace cc::cli_test
