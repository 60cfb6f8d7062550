// The simulated timeline is typed: each event says its stage, replica, lane, microbatch and
// chunk, so a viewer (the GUI, the memory curve) reads them instead of parsing names.
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/analytic_costs.h"
#include "sim/pipeline_schedule.h"
#include "sim/presets.h"
#include "sim/simulator.h"

namespace cc {
namespace {

// tiny (4 layers) at PP 2 x DP 2, two chunks per rank, global batch 8 at micro batch 1:
// 8 / (1 x 2) = 4 microbatches per replica, every replica simulated.
SimResult interleaved_every_rank() {
  const ModelSpec m = load_model("tiny");
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  ParallelConfig c;
  c.pp = 2;
  c.dp = 2;
  c.virtual_stages = 2;
  c.global_batch = 8;
  SimOptions o;
  o.keep_timeline = true;
  o.every_rank = true;
  return simulate(m, cluster, c, AnalyticCosts(cluster, c.precision), o);
}

TEST(TimelineEvents, EachPassSaysItsStageReplicaMicrobatchAndChunk) {
  const SimResult r = interleaved_every_rank();
  // (stage, replica) -> the (kind, microbatch, chunk) of its forward and backward passes.
  std::map<std::pair<int, int>, std::set<std::tuple<TaskKind, int, int>>> passes;
  for (const TimelineEvent& e : r.timeline) {
    EXPECT_EQ(e.process, e.stage * 2 + e.replica);  // 2 replicas per stage
    if (e.kind != TaskKind::Forward && e.kind != TaskKind::Backward) continue;
    EXPECT_EQ(e.lane, StreamLane::Compute);
    EXPECT_EQ(e.name, fmt::format("{}{} c{}", e.kind == TaskKind::Forward ? 'F' : 'B', e.microbatch, e.chunk));
    passes[{e.stage, e.replica}].insert({e.kind, e.microbatch, e.chunk});
  }
  // Every rank runs each of 4 microbatches through each of its 2 chunks, forward and backward:
  // 2 x 4 x 2 = 16 passes, on 2 stages x 2 replicas.
  ASSERT_EQ(passes.size(), 4u);
  for (const auto& [rank, set] : passes) {
    EXPECT_EQ(set.size(), 16u) << "stage " << rank.first << " replica " << rank.second;
    for (const auto& [kind, mb, chunk] : set) {
      EXPECT_TRUE(mb >= 0 && mb < 4);
      EXPECT_TRUE(chunk == 0 || chunk == 1);
    }
  }
}

TEST(TimelineEvents, PipelineSendsRideTheP2pLaneAndReductionsTheDpLane) {
  const SimResult r = interleaved_every_rank();
  int sends = 0, reductions = 0;
  for (const TimelineEvent& e : r.timeline) {
    if (e.kind == TaskKind::Send) {
      EXPECT_EQ(e.lane, StreamLane::P2p);
      EXPECT_GE(e.microbatch, 0);
      ++sends;
    }
    if (e.kind == TaskKind::GradReduce) {
      EXPECT_EQ(e.lane, StreamLane::Dp);
      EXPECT_EQ(e.microbatch, -1);  // not a pass's work
      ++reductions;
    }
  }
  // Each replica's 4 microbatches cross 3 virtual-stage boundaries (4 virtual stages) each
  // way: 4 x 3 x 2 = 24 sends per replica, 48 for both.
  EXPECT_EQ(sends, 48);
  EXPECT_GT(reductions, 0);
  EXPECT_STREQ(to_string(StreamLane::Compute), "compute");
  EXPECT_STREQ(to_string(StreamLane::P2p), "p2p");
  EXPECT_STREQ(to_string(StreamLane::Dp), "dp");
}

}  // namespace
}  // namespace cc
