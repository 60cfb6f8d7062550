// `clustercast validate` on bad input: one clear message, exit 2, before any MPI job starts
// and with no report left behind; and Ctrl-C in the middle of a validation ends it with
// nothing written.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

struct BadValidation {
  const char* name;
  std::vector<std::string> args;
  const char* message;
};

void PrintTo(const BadValidation& b, std::ostream* os) { *os << b.name; }

class ValidateBadInput : public ::testing::TestWithParam<BadValidation> {};

TEST_P(ValidateBadInput, ExitsTwoNamingTheValueAndWritesNothing) {
  const BadValidation& b = GetParam();
  const TempDir dir;
  std::vector<std::string> args = {"validate"};
  args.insert(args.end(), b.args.begin(), b.args.end());
  auto given = [&](const char* flag) { return std::find(b.args.begin(), b.args.end(), flag) != b.args.end(); };
  if (!given("--model")) args.insert(args.end(), {"--model", "tiny"});
  if (!given("--report")) args.insert(args.end(), {"--report", dir.file("report.md")});
  const RunResult r = run_clustercast(args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("[profile]"), std::string::npos) << "work started before the input was checked:\n" << r.out;
  EXPECT_TRUE(dir.entries().empty());
}

const std::string kTinyCosts = std::string(CLUSTERCAST_SOURCE_DIR) + "/traces/cpu-xeon-2core-tiny.json";

INSTANTIATE_TEST_SUITE_P(
    Validate, ValidateBadInput,
    ::testing::Values(
        BadValidation{"UnknownKey", {"--layouts", "pp=2,frob=1"}, "'frob=1' is not understood"},
        BadValidation{"NotANumber", {"--layouts", "tp=two"}, "tp=two is not a positive integer"},
        BadValidation{"KeyTwice", {"--layouts", "pp=2,pp=1"}, "'pp' is given twice"},
        BadValidation{"TpDoesNotDivideRanks", {"--layouts", "pp=2; tp=3"}, "TP 3 x PP 1 does not divide the 2 ranks"},
        BadValidation{"WrongDp", {"--layouts", "pp=2,dp=2"}, "dp=2 but 2 ranks / (TP 1 x PP 2) = 1"},
        BadValidation{"VirtualStagesDoNotSplitLayers", {"--layouts", "pp=2,vpp=3"}, "4 layers do not split"},
        BadValidation{"SequenceParallelWithoutTp", {"--layouts", "sp"}, "sequence"},
        BadValidation{"EmptyList", {"--layouts", " ; "}, "names no layout"},
        BadValidation{"MoreRanksThanCores", {"--ranks", "4096"}, "--ranks 4096 is more than this machine's"},
        BadValidation{"TooFewTimedSteps", {"--steps", "4", "--warmup-steps", "2"}, "leaves 2 timed steps"},
        BadValidation{"TooFewProfileSteps", {"--profile-steps", "2"}, "--profile-steps is 2; a profile's median needs at least 3"},
        BadValidation{"NoRounds", {"--rounds", "0"}, "--rounds is 0; it must be between 1 and 100"},
        BadValidation{"ToleranceOutOfRange", {"--tolerance", "1.5"}, "--tolerance is 1.5"},
        BadValidation{"MissingReportFolder", {"--report", "/nonexistent-folder/r.md"}, "'/nonexistent-folder' does not exist"},
        BadValidation{"BothVirtualStageForms", {"--layouts", "pp=2,vpp=2,lpvs=1"}, "give vpp= or lpvs=, not both"},
        BadValidation{"DatabaseOfAnotherModel", {"--model", "small", "--layouts", "pp=2", "--costs", kTinyCosts}, "was profiled on model 'tiny'"},
        BadValidation{"MissingDatabase", {"--layouts", "pp=2", "--costs", "/nonexistent.json"}, "'/nonexistent.json' cannot be opened"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ValidateBadInput, CudaWithoutAGpuSaysSo) {
  const RunResult r = run_clustercast({"validate", "--model", "tiny", "--backend", "cuda"});
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is attached: tests/gpu/run.sh runs the CUDA validation";
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--backend cuda:"), std::string::npos) << r.err;
}

// SIGINT while the profile runs: the job is stopped, validate exits 130, no report exists.
TEST(ValidateInterrupt, CtrlCLeavesNoReport) {
  const TempDir dir;
  const std::string report = dir.file("report.md");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    execl(CLUSTERCAST_BINARY, CLUSTERCAST_BINARY, "validate", "--model", "tiny", "--layouts", "pp=2", "--report",
          report.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));  // inside the profile by now
  kill(pid, SIGINT);
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) {
      kill(pid, SIGKILL);
      FAIL() << "validate did not end within 60 s of SIGINT";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
}  // namespace cc::cli_test
