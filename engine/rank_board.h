// rank_board.h — what every rank of a job on this machine is doing, readable by the others
// when the job stalls. A stopped rank cannot say that it stopped; its peers can see that it
// has stopped saying anything. Each rank's stall watchdog (stall_watchdog.h) writes its own
// slot of a shared-memory board once per check — a heartbeat, its last progress and the op
// it is in — and, when it fires, reads the other slots to name the rank that holds the job.
//
// The board is a POSIX shared-memory object with one slot per world rank; the ranks of one
// machine share one, and the name is unlinked once they have all mapped it, so nothing is
// left behind however the job ends. Ranks on other machines are not on this machine's board.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cc::engine {

// What one rank last published: plain data in shared memory, every field read and written
// through std::atomic_ref (the characters one at a time). Times are CLOCK_MONOTONIC
// nanoseconds, one clock for every process of a machine.
struct RankSlot {
  std::int64_t heartbeat_ns;  // 0: this slot's rank is not on this machine (or not started)
  std::int64_t progress_ns;
  std::int64_t step;  // -1: none
  std::int32_t pid;
  std::int32_t collective;  // the op below is a transfer with other ranks
  char progress[32];        // what the last progress mark was ("step", "start-up", ...)
  char op[64];              // the annotated op it is in; empty: none
};

struct RankView {  // a copy of a slot, as one rank read it
  int rank = 0;
  int pid = 0;
  double since_heartbeat_s = 0;
  double since_progress_s = 0;
  long step = -1;
  bool collective = false;
  std::string progress, op;
};

class RankBoard {
 public:
  // Opens (creating when first) the board `name` ("/clustercast-...") with `world` slots.
  // Throws SpecError when shared memory cannot be had; the job then runs without a board.
  RankBoard(const std::string& name, int world, int rank);
  ~RankBoard();
  RankBoard(const RankBoard&) = delete;
  RankBoard& operator=(const RankBoard&) = delete;

  // Removes the name (every rank of the machine has mapped it by then); the mapping stays.
  void unlink_name();
  // Writes this rank's slot.
  void publish(std::int64_t progress_ns, const char* progress, long step, const char* op, bool collective);
  // Every other rank of this machine that has published, as read now.
  std::vector<RankView> peers() const;

  static std::int64_t now_ns();

 private:
  std::string name_;
  int world_, rank_;
  RankSlot* slots_ = nullptr;
};

// A sentence naming what holds the job, from this rank's view of its peers: a rank that has
// not published for `stale_s` (stopped or dead), else one that is not waiting on others
// (stuck inside an op); empty when nothing on this machine explains it.
std::string peers_holding_the_job(const std::vector<RankView>& peers, double stale_s);

}  // namespace cc::engine
