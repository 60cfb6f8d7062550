// The stall watchdog as users meet it: a rank of a real `mpirun` training job stopped with
// SIGSTOP (as a hung GPU or a frozen node would leave it) ends the job on every rank within
// the stall timeout, with a line naming a rank, what it waits in and the stopped rank, where MPI alone would
// wait for ever; a healthy run is never stopped (marks between its steps: test_stall_watchdog.cpp
// of the engine tests).
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "mpi_runner.h"

namespace cc::cli_test {
namespace {

// Every process whose environment holds `marker` and the given MPI rank.
std::vector<pid_t> processes_of_rank(const std::string& marker, int rank) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(marker) != std::string::npos &&
        env.find(std::string("OMPI_COMM_WORLD_RANK=") + std::to_string(rank) + '\0') != std::string::npos)
      found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

std::vector<std::string> long_run(const std::string& stall_timeout, int steps) {
  return {"train", "--model",         "tiny",       "--steps", std::to_string(steps), "--eval-windows", "0",
          "--global-batch-size", "4", "--stall-timeout", stall_timeout};
}

TEST(StallWatchdog, AStoppedRankEndsTheJobOnEveryRankWithAMessage) {
  const std::string marker = "CLUSTERCAST_STALL_TEST=" + std::to_string(::getpid());
  ASSERT_EQ(::setenv("CLUSTERCAST_STALL_TEST", std::to_string(::getpid()).c_str(), 1), 0);
  // Far more steps than the test waits for: only the watchdog ends this job early.
  auto job = std::async(std::launch::async, [] { return run_mpi(2, long_run("5", 1'000'000), 120); });
  std::vector<pid_t> stopped;
  const auto start = std::chrono::steady_clock::now();
  while (stopped.empty() && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    for (pid_t pid : processes_of_rank(marker, 1))
      if (::kill(pid, SIGSTOP) == 0) stopped.push_back(pid);
  }
  ::unsetenv("CLUSTERCAST_STALL_TEST");
  ASSERT_FALSE(stopped.empty()) << "rank 1 of the job was never found";
  const auto stopped_at = std::chrono::steady_clock::now();
  const RunResult r = job.get();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
  for (pid_t pid : stopped) ::kill(pid, SIGKILL);  // in case mpirun left it (the checks below then fail)
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "the job did not end: the test's 120 s guard killed it\n" << r.err;
  EXPECT_LT(seconds, 60) << "a 5 s stall timeout took " << seconds << " s to end the job";
  EXPECT_NE(r.err.find("rank 0 made no progress for"), std::string::npos) << r.err;
  // Rank 0 names the rank that holds the job: its board slot went silent when it stopped.
  EXPECT_NE(r.err.find("rank 1 (pid " + std::to_string(stopped.front()) + ") has given no sign of life for"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("it is stopped or dead"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(--stall-timeout 5)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ending the job on every rank"), std::string::npos) << r.err;
}

TEST(StallWatchdog, AHealthyRunIsNeverStopped) {
  const RunResult r = run_mpi(2, long_run("10", 6));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("made no progress"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("step 6 "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cc::cli_test
