// The ranks' shared board in one process: two boards of one name are one shared-memory
// object, so what rank 1 publishes rank 0 reads; a slot that stops being published is named as
// a stopped rank, a published one outside a transfer as the rank that is stuck; a rank's
// watchdog, fired, names the silent peer. (The whole path with mpirun and SIGSTOP:
// tests/cli/test_stall_watchdog.cpp.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "engine/annotations.h"
#include "engine/rank_board.h"
#include "engine/stall_watchdog.h"

namespace cc::engine {
namespace {

using namespace std::chrono_literals;

std::string board_name(const char* test) { return "/clustercast-test-" + std::to_string(::getpid()) + "-" + test; }

TEST(RankBoard, WhatOneRankPublishesTheOthersReadAndTheNameIsGoneOnceMapped) {
  const std::string name = board_name("roundtrip");
  RankBoard rank0(name, 3, 0), rank1(name, 3, 1);
  rank0.unlink_name();
  EXPECT_TRUE(rank0.peers().empty());  // rank 1 has not published; rank 2 is on no board here
  rank1.publish(RankBoard::now_ns() - 2'000'000'000, "step", 12, "dp.grad_all_reduce", true);
  const auto peers = rank0.peers();
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_EQ(peers[0].rank, 1);
  EXPECT_EQ(peers[0].pid, ::getpid());
  EXPECT_EQ(peers[0].step, 12);
  EXPECT_EQ(peers[0].progress, "step");
  EXPECT_EQ(peers[0].op, "dp.grad_all_reduce");
  EXPECT_TRUE(peers[0].collective);
  EXPECT_NEAR(peers[0].since_progress_s, 2.0, 0.5);
  EXPECT_LT(peers[0].since_heartbeat_s, 0.5);
  // The name was removed: a board opened under it now is a new, empty one.
  RankBoard later(name, 3, 2);
  later.unlink_name();
  EXPECT_TRUE(later.peers().empty());
  // Names longer than a slot's field are cut, not overrun.
  rank1.publish(RankBoard::now_ns(), "step", 1, std::string(200, 'x').c_str(), false);
  EXPECT_EQ(rank0.peers()[0].op, std::string(63, 'x'));
}

TEST(RankBoard, ASilentPeerIsNamedStoppedBeforeABusyOne) {
  RankView waiting{0, 100, 0.1, 9.0, 4, true, "step", "dp.grad_all_reduce"};
  RankView busy{1, 101, 0.2, 9.0, 4, false, "step", "mlp.fc1"};
  RankView silent{2, 102, 8.5, 9.0, 4, false, "step", "attention.core"};
  EXPECT_EQ(peers_holding_the_job({waiting}, 3), "");  // waits like this rank: nothing to name
  EXPECT_EQ(peers_holding_the_job({waiting, busy}, 3),
            "rank 1 (pid 101) is running but inside 'mlp.fc1' for 9.0 s, since step 4");
  EXPECT_EQ(peers_holding_the_job({waiting, busy, silent}, 3),
            "rank 2 (pid 102) has given no sign of life for 8.5 s, since step 4: it is stopped or dead");
}

TEST(StallWatchdogDeathTest, AFiredWatchdogNamesThePeerWhoseSlotWentSilent) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string name = board_name("watchdog");
  EXPECT_EXIT(
      {
        RankBoard mine(name, 2, 0);
        RankBoard peer(name, 2, 1);
        mine.unlink_name();
        peer.publish(RankBoard::now_ns(), "step", 3, "mlp.fc2", false);  // then nothing: stopped
        const StallWatchdog watchdog(0, 2.5, &mine);
        mark_progress("step", 3);
        const ScopedOp waiting({"dp.grad_all_reduce", Phase::Backward, -1, -1, {}, true});
        std::this_thread::sleep_for(20s);
      },
      ::testing::ExitedWithCode(1),
      "rank 0 made no progress .* waiting in 'dp.grad_all_reduce'.*; rank 1 \\(pid [0-9]+\\) has given no sign of "
      "life for [0-9.]+ s, since step 3: it is stopped or dead; ending the job");
}

}  // namespace
}  // namespace cc::engine
