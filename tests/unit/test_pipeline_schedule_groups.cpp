// The interleaved schedule with Megatron-Core's microbatch groups
// (--microbatch-group-size-per-virtual-pipeline-stage), against the orders its own
// documentation writes out (megatron/core/model_parallel_config.py) and its warm-up count
// (schedules.py get_pp_rank_microbatches).
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "sim/pipeline_schedule.h"

namespace cc {
namespace {

// (microbatch, chunk) of a rank's forward (or backward) passes, in run order.
std::vector<std::pair<int, int>> order(const std::vector<PipelinePass>& list, PassKind kind) {
  std::vector<std::pair<int, int>> out;
  for (const PipelinePass& p : list)
    if (p.kind == kind) out.emplace_back(p.microbatch, p.chunk);
  return out;
}

TEST(PipelineScheduleGroups, MegatronCoresDocumentedOrder) {
  // PP 2, 2 chunks, groups of 3, 5 microbatches: "rank 0 | 0 1 2 0 1 2 3 4 3 4", chunks
  // 0 0 0 1 1 1 0 0 1 1 (the last group, from 3, holds the 2 left).
  const auto lists = pipeline_schedule(2, 5, 2, 3);
  const std::vector<std::pair<int, int>> forward = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1},
                                                    {2, 1}, {3, 0}, {4, 0}, {3, 1}, {4, 1}};
  EXPECT_EQ(order(lists[0], PassKind::Forward), forward);
  EXPECT_EQ(order(lists[1], PassKind::Forward), forward);
  // Backward walks the same table with the chunks mirrored.
  const std::vector<std::pair<int, int>> backward = {{0, 1}, {1, 1}, {2, 1}, {0, 0}, {1, 0},
                                                     {2, 0}, {3, 1}, {4, 1}, {3, 0}, {4, 0}};
  EXPECT_EQ(order(lists[0], PassKind::Backward), backward);
  // Warm-up: (PP - rank - 1)·2 + (chunks - 1)·group = 2 + 3 on rank 0, 0 + 3 on rank 1.
  EXPECT_EQ(warmup_passes(0, 2, 5, 2, 3), 5);
  EXPECT_EQ(warmup_passes(1, 2, 5, 2, 3), 3);
  EXPECT_EQ(max_in_flight(lists[0]), 6);
  // "PP=2 VP=2, group 2, 4 microbatches: rank 0 | 0 1 0 1 2 3 2 3".
  const auto even = pipeline_schedule(2, 4, 2, 2);
  EXPECT_EQ(order(even[0], PassKind::Forward),
            (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {3, 0}, {2, 1}, {3, 1}}));
}

TEST(PipelineScheduleGroups, DefaultGroupIsTheStageCount) {
  EXPECT_EQ(pipeline_schedule(4, 8, 2), pipeline_schedule(4, 8, 2, 4));
  EXPECT_EQ(pipeline_schedule(4, 8, 3, 0), pipeline_schedule(4, 8, 3, 4));
}

TEST(PipelineScheduleGroups, EveryAcceptedGroupGivesAWellFormedSchedule) {
  // Megatron-Core accepts group N in [PP, M] with M mod N 0 or >= PP.
  for (int p : {2, 3, 4})
    for (int v : {2, 3})
      for (int m = p; m <= 13; ++m)
        for (int n = p; n <= m; ++n) {
          if (m % n != 0 && m % n < p) continue;
          const auto lists = pipeline_schedule(p, m, v, n);
          for (int s = 0; s < p; ++s) {
            const auto& list = lists[static_cast<std::size_t>(s)];
            ASSERT_EQ(static_cast<int>(list.size()), 2 * m * v);
            std::set<std::pair<int, int>> forward, backward;
            for (const PipelinePass& pass : list) {
              const auto key = std::make_pair(pass.microbatch, pass.chunk);
              if (pass.kind == PassKind::Forward) {
                EXPECT_TRUE(forward.insert(key).second);
              } else {
                EXPECT_TRUE(forward.count(key)) << "backward before forward p=" << p << " m=" << m << " n=" << n;
                EXPECT_TRUE(backward.insert(key).second);
              }
            }
            EXPECT_EQ(max_in_flight(s, p, m, v, n), max_in_flight(list)) << "p=" << p << " m=" << m << " n=" << n;
          }
        }
}

}  // namespace
}  // namespace cc
