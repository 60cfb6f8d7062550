#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "engine/pipeline_links.h"
#include "sim/pipeline_schedule.h"

namespace cc {
namespace {

// Properties every valid schedule has: each (microbatch, chunk) runs forward once and
// backward once, the forward first; backward chunks mirror forward chunks.
void expect_well_formed(const std::vector<std::vector<PipelinePass>>& lists, int m, int v) {
  for (const auto& list : lists) {
    ASSERT_EQ(static_cast<int>(list.size()), 2 * m * v);
    std::set<std::pair<int, int>> forward_done, backward_done;
    for (const auto& p : list) {
      const auto key = std::make_pair(p.microbatch, p.chunk);
      ASSERT_GE(p.microbatch, 0);
      ASSERT_LT(p.microbatch, m);
      if (p.kind == PassKind::Forward) {
        EXPECT_TRUE(forward_done.insert(key).second);
      } else {
        EXPECT_TRUE(forward_done.count(key)) << "backward before forward";
        EXPECT_TRUE(backward_done.insert(key).second);
      }
    }
  }
}

TEST(PipelineSchedule, OneF1BHasWarmupSteadyAndCooldown) {
  const auto lists = pipeline_schedule(4, 8, 1);
  expect_well_formed(lists, 8, 1);
  // Stage 0 warms up with p-1 = 3 forwards, then alternates, then drains 3 backwards.
  const auto& s0 = lists[0];
  const std::vector<PipelinePass> head = {{PassKind::Forward, 0, 0},  {PassKind::Forward, 1, 0},
                                          {PassKind::Forward, 2, 0},  {PassKind::Forward, 3, 0},
                                          {PassKind::Backward, 0, 0}, {PassKind::Forward, 4, 0}};
  EXPECT_EQ(std::vector<PipelinePass>(s0.begin(), s0.begin() + 6), head);
  // The last stage alternates from the start.
  EXPECT_EQ(lists[3][0], (PipelinePass{PassKind::Forward, 0, 0}));
  EXPECT_EQ(lists[3][1], (PipelinePass{PassKind::Backward, 0, 0}));
  for (int s = 0; s < 4; ++s) EXPECT_EQ(max_in_flight(lists[static_cast<std::size_t>(s)]), 4 - s);
}

TEST(PipelineSchedule, FewerMicrobatchesThanStagesLimitsWarmup) {
  const auto lists = pipeline_schedule(8, 2, 1);
  expect_well_formed(lists, 2, 1);
  EXPECT_EQ(max_in_flight(lists[0]), 2);
}

TEST(PipelineSchedule, InterleavedFollowsMegatronOrder) {
  const int p = 4, m = 8, v = 2;
  const auto lists = pipeline_schedule(p, m, v);
  expect_well_formed(lists, m, v);
  // Warm-up on stage 0: (p-1)·2 + (v-1)·p = 10 forwards: microbatches 0-3 on chunk 0,
  // 0-3 on chunk 1, then 4-5 on chunk 0.
  const auto& s0 = lists[0];
  EXPECT_EQ(warmup_passes(0, p, m, v), 10);
  EXPECT_EQ(s0[3], (PipelinePass{PassKind::Forward, 3, 0}));
  EXPECT_EQ(s0[4], (PipelinePass{PassKind::Forward, 0, 1}));
  EXPECT_EQ(s0[8], (PipelinePass{PassKind::Forward, 4, 0}));
  // The first backward runs the last chunk of microbatch 0.
  EXPECT_EQ(s0[11], (PipelinePass{PassKind::Backward, 0, 1}));
  // Korthikanti Sec. 4.2: in flight = p·v + p - 1 on the first stage.
  EXPECT_EQ(max_in_flight(s0), p * v + p - 1);
}

TEST(PipelineSchedule, InFlightFormulaMatchesTheScheduleItself) {
  for (int p : {1, 2, 3, 4, 8})
    for (int v : {1, 2, 3})
      for (int m : {1, 2, 4, 8, 12, 24}) {
        if (v > 1 && (p < 2 || m % p != 0)) continue;
        const auto lists = pipeline_schedule(p, m, v);
        for (int s = 0; s < p; ++s)
          EXPECT_EQ(max_in_flight(s, p, m, v), max_in_flight(lists[static_cast<std::size_t>(s)]))
              << "p=" << p << " v=" << v << " m=" << m << " stage " << s;
      }
}


// The CUDA backend sends activations and gradients over NCCL point-to-point, one
// communicator per link and direction, where messages match in the order they were issued
// (no tags, unlike MPI). That is only correct if, on every link, the receiver's list takes
// the messages in the order the sender's list produces them.
TEST(PipelineSchedule, EveryLinkReceivesInTheOrderItSends) {
  for (int p : {2, 3, 4, 8})
    for (int v : {1, 2, 3})
      for (int m : {1, 2, 3, 4, 8, 12, 16}) {
        if (v > 1 && m % p != 0) continue;
        const auto lists = pipeline_schedule(p, m, v);
        // Message = (forward?, receiving virtual stage, microbatch); per (sender stage, direction).
        using Message = std::tuple<bool, int, int>;
        std::map<std::pair<int, bool>, std::vector<Message>> sent, received;
        for (int s = 0; s < p; ++s)
          for (const PipelinePass& pass : lists[static_cast<std::size_t>(s)]) {
            const int vs = pass.chunk * p + s;
            const bool fwd = pass.kind == PassKind::Forward;
            // A forward pass receives from virtual stage vs-1 and sends to vs+1; backward the reverse.
            const int from = fwd ? vs - 1 : vs + 1, to = fwd ? vs + 1 : vs - 1;
            if (from >= 0 && from < p * v) received[{from % p, fwd}].emplace_back(fwd, vs, pass.microbatch);
            if (to >= 0 && to < p * v) sent[{s, fwd}].emplace_back(fwd, to, pass.microbatch);
          }
        EXPECT_EQ(sent, received) << "p=" << p << " v=" << v << " m=" << m;
      }
}


// Every transfer of every schedule: sender and receiver pick the same link, that link joins
// exactly their two stages, the sender is its sending end for the direction, and the link
// is one the backend creates.
TEST(PipelineSchedule, SenderAndReceiverAgreeOnEveryTransfersLink) {
  using engine::pipeline_link;
  for (int p : {2, 3, 4, 8})
    for (int v : {1, 2, 3})
      for (int m : {1, 4, 8}) {
        if (v > 1 && m % p != 0) continue;
        const auto lists = pipeline_schedule(p, m, v);
        for (int s = 0; s < p; ++s)
          for (const PipelinePass& pass : lists[static_cast<std::size_t>(s)]) {
            const bool fwd = pass.kind == PassKind::Forward;
            const int vs = pass.chunk * p + s, to = fwd ? vs + 1 : vs - 1;
            if (to < 0 || to >= p * v) continue;
            const int peer = to % p;
            const int link = pipeline_link(s, p, fwd, true);
            SCOPED_TRACE("p=" + std::to_string(p) + " v=" + std::to_string(v) + " stage " + std::to_string(s));
            EXPECT_EQ(pipeline_link(peer, p, fwd, false), link);
            EXPECT_EQ(std::set<int>({link, (link + 1) % p}), std::set<int>({s, peer}));
            EXPECT_TRUE(engine::sends_on_link(s, link, fwd));
            EXPECT_FALSE(engine::sends_on_link(peer, link, fwd));
            EXPECT_LT(link, engine::pipeline_links_used(p, v > 1));
          }
      }
}

}  // namespace
}  // namespace cc
