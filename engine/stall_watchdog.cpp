#include "engine/stall_watchdog.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "engine/annotations.h"
#include "engine/rank_board.h"

namespace cc::engine {

namespace {

using Clock = std::chrono::steady_clock;

struct Progress {
  std::atomic<Clock::rep> at{0};  // Clock ticks of the last mark
  std::atomic<const char*> what{"start-up"};
  std::atomic<long> step{-1};
};

Progress& progress() {
  static Progress p;
  return p;
}

std::string last_progress_text() {
  const Progress& p = progress();
  const long step = p.step.load(std::memory_order_relaxed);
  const std::string what = p.what.load(std::memory_order_relaxed);
  return step >= 0 ? fmt::format("{} {}", what, step) : what;
}

std::string doing_now_text() {
  const CurrentOp& op = current_op();
  const char* name = op.name.load(std::memory_order_relaxed);
  if (name == nullptr || *name == '\0') return "outside any annotated op";
  return op.collective.load(std::memory_order_relaxed)
             ? fmt::format("waiting in '{}', a transfer with other ranks: one of them has stopped or is stuck", name)
             : fmt::format("inside '{}'", name);
}

// The board of the running watchdog, if it has one: marks are published as they are made, so
// a peer reads the step a stopped rank really reached.
std::atomic<RankBoard*> active_board{nullptr};

void publish_to(RankBoard& board) {
  const Progress& p = progress();
  const CurrentOp& op = current_op();
  const Clock::time_point last{Clock::duration{p.at.load(std::memory_order_acquire)}};
  // The board's clock is CLOCK_MONOTONIC, as steady_clock's is on Linux; converted through the
  // age of the mark so the two need not agree.
  const auto age = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - last).count();
  board.publish(RankBoard::now_ns() - age, p.what.load(std::memory_order_relaxed),
                p.step.load(std::memory_order_relaxed), op.name.load(std::memory_order_relaxed),
                op.collective.load(std::memory_order_relaxed));
}

}  // namespace

void mark_progress(const char* what, long step) {
  Progress& p = progress();
  p.what.store(what, std::memory_order_relaxed);
  p.step.store(step, std::memory_order_relaxed);
  p.at.store(Clock::now().time_since_epoch().count(), std::memory_order_release);
  if (RankBoard* board = active_board.load(std::memory_order_acquire)) publish_to(*board);
}

StallWatchdog::StallWatchdog(int world_rank, double timeout_s, RankBoard* board)
    : rank_(world_rank), timeout_s_(timeout_s), board_(board) {
  active_board.store(board_, std::memory_order_release);
  mark_progress("start-up");
  if (timeout_s_ > 0) thread_ = std::thread([this] { watch(); });
}

StallWatchdog::~StallWatchdog() {
  active_board.store(nullptr, std::memory_order_release);
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void StallWatchdog::publish() { publish_to(*board_); }

std::string StallWatchdog::holders(double stale_s) const {
  if (board_ == nullptr) return "";
  const std::string named = peers_holding_the_job(board_->peers(), stale_s);
  return named.empty() ? "" : "; " + named;
}

void StallWatchdog::watch() {
  // Checked a few times per timeout, at least once a second: the job ends within about a
  // quarter timeout (or a second) of the stall reaching it.
  const auto period = std::chrono::duration<double>(std::clamp(timeout_s_ / 4, 0.01, 1.0));
  std::unique_lock<std::mutex> lock(mutex_);
  // A wake-up far later than asked means this process itself was not running (stopped by
  // SIGSTOP or a debugger, or its machine paused): the stall is then this rank's own.
  double suspended_s = 0;
  Clock::time_point previous = Clock::now();
  // A peer silent for three checks (and two seconds) is not running: a running one publishes
  // at every check.
  const double stale_s = std::max(3 * period.count(), 2.0);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    if (board_ != nullptr) publish();
    const Clock::time_point now = Clock::now();
    const double late = std::chrono::duration<double>(now - previous - period).count();
    previous = now;
    if (late > 1.0) suspended_s += late;
    const Clock::time_point last{Clock::duration{progress().at.load(std::memory_order_acquire)}};
    const double idle = std::chrono::duration<double>(now - last).count();
    if (idle < timeout_s_) {
      suspended_s = 0;
      continue;
    }
    // One write of the whole line, so lines of several ranks do not interleave.
    const std::string line = fmt::format(
        "clustercast: rank {} made no progress for {:.1f} s (--stall-timeout {:g}) since {}; it is {}{}; ending the "
        "job on every rank\n",
        rank_, idle, timeout_s_, last_progress_text(),
        suspended_s > 0 ? fmt::format("itself suspended for {:.1f} s of them (stopped, or its machine paused)",
                                      suspended_s)
                        : doing_now_text(),
        holders(stale_s));
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(1);  // mpirun ends the other ranks of a job one of whose ranks exits without MPI_Finalize
  }
}

}  // namespace cc::engine
