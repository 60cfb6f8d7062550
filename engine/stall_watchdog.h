// stall_watchdog.h — ends an MPI job whose rank has stopped making progress. A rank that is
// stopped, stuck in a kernel or waiting for such a rank would otherwise hold every rank of the
// job in its next collective for ever; MPI itself never times out.
//
// The engine marks progress at each start-up phase and each completed step (mark_progress);
// a thread of each rank checks the time since the last mark, and past the stall timeout prints
// one line naming the rank, its last progress and the op it is in (from the annotations: a
// collective or transfer means it waits for another rank) and, from the ranks' shared board,
// the peer that holds the job (a stopped one), then exits with status 1, on which mpirun ends
// the job's other ranks.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace cc::engine {

inline constexpr double kDefaultStallTimeoutSeconds = 600;

// Marks progress: `what` (a string literal: "start-up", "step", "checkpoint", ...) and the
// step it belongs to (-1: none).
void mark_progress(const char* what, long step = -1);

class RankBoard;

class StallWatchdog {
 public:
  // timeout_s 0 turns the watchdog off. With a board (rank_board.h), each check publishes
  // this rank's state there, and the line it prints names the peer that holds the job.
  StallWatchdog(int world_rank, double timeout_s, RankBoard* board = nullptr);
  ~StallWatchdog();
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

 private:
  void watch();
  void publish();                              // this rank's state onto the board
  std::string holders(double stale_s) const;  // "; rank R ... stopped or dead", or ""

  int rank_;
  double timeout_s_;
  RankBoard* board_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace cc::engine
