// The stall watchdog in one process: without a progress mark for its timeout it ends the
// process with status 1 and one line naming the rank, the last mark and the op it is in; marks
// that keep coming keep it quiet however long the run; a timeout of 0 never fires.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/annotations.h"
#include "engine/stall_watchdog.h"

namespace cc::engine {
namespace {

using namespace std::chrono_literals;

TEST(StallWatchdogDeathTest, NoProgressEndsTheProcessNamingTheRankTheMarkAndTheOp) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const StallWatchdog watchdog(3, 0.2);
        mark_progress("step", 7);
        const ScopedOp waiting({"dp.grad_all_reduce", Phase::Backward, -1, -1, {}, true});
        std::this_thread::sleep_for(10s);
      },
      ::testing::ExitedWithCode(1),
      "rank 3 made no progress for [0-9.]+ s \\(--stall-timeout 0.2\\) since step 7; it is waiting in "
      "'dp.grad_all_reduce', a transfer with other ranks");
}

TEST(StallWatchdogDeathTest, AnOpThatIsNotATransferIsNamedAsWhereTheRankIs) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const StallWatchdog watchdog(0, 0.2);
        mark_progress("loading the corpus");
        const ScopedOp computing({"mlp.fc1", Phase::Forward, 2, 0, {}, false});
        std::this_thread::sleep_for(10s);
      },
      ::testing::ExitedWithCode(1), "since loading the corpus; it is inside 'mlp.fc1'");
}

TEST(StallWatchdog, MarksThatKeepComingKeepItQuietAndZeroTurnsItOff) {
  {
    const StallWatchdog watchdog(0, 0.3);
    for (int step = 1; step <= 20; ++step) {  // 1 s in all, three timeouts' worth
      std::this_thread::sleep_for(50ms);
      mark_progress("step", step);
    }
  }
  {
    const StallWatchdog off(0, 0);
    std::this_thread::sleep_for(300ms);
  }
  SUCCEED() << "still running: neither watchdog ended the process";
}

}  // namespace
}  // namespace cc::engine
