// The ranks of a TP group wait for each other at every collective, so an op occurrence
// costs its slowest rank's time; separate groups (DP replicas) stay separate samples.
#include <gtest/gtest.h>

#include "profiler/gathered_events.h"
#include "sim/parallel_grid.h"

namespace cc::profiler {
namespace {

RecordedOp op(const char* name, int layer, long step, double self) {
  RecordedOp e;
  e.op.name = name;
  e.op.layer = layer;
  e.step = step;
  e.self_s = self;
  return e;
}

TEST(SlowestInTpGroups, EachOccurrenceTakesItsSlowestRank) {
  // Ranks 0 and 1 form TP group 0; ranks 2 and 3 form group 1. "gelu" runs twice in layer 0
  // of step 1 (two microbatches with the same annotation): matched by order.
  const std::vector<std::vector<RecordedOp>> per_rank = {
      {op("gelu", 0, 1, 1.0), op("gelu", 0, 1, 5.0), op("fc1", 0, 1, 2.0)},
      {op("gelu", 0, 1, 3.0), op("gelu", 0, 1, 4.0), op("fc1", 0, 1, 1.0)},
      {op("gelu", 0, 1, 7.0), op("gelu", 0, 1, 1.0), op("fc1", 0, 1, 1.0)},
      {op("gelu", 0, 1, 6.0), op("gelu", 0, 1, 2.0), op("fc1", 0, 1, 9.0)},
  };
  const ParallelGrid grid(kDenseGridOrder, {{"tp", 2}, {"dp", 2}});
  const std::vector<RecordedOp> out = slowest_in_groups(per_rank, grid.groups("tp"));
  ASSERT_EQ(out.size(), 6u);
  std::vector<double> seconds;
  for (const auto& e : out) seconds.push_back(e.self_s);
  EXPECT_EQ(seconds, (std::vector<double>{3.0, 5.0, 2.0, 7.0, 2.0, 9.0}));
}

TEST(SlowestInTpGroups, WithoutTensorParallelismEveryRankIsItsOwnGroup) {
  const std::vector<std::vector<RecordedOp>> per_rank = {{op("fc1", 0, 1, 2.0)}, {op("fc1", 0, 1, 3.0)}};
  const ParallelGrid grid(kDenseGridOrder, {{"tp", 1}, {"dp", 2}});
  const std::vector<RecordedOp> out = slowest_in_groups(per_rank, grid.groups("tp"));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].self_s, 2.0);
  EXPECT_EQ(out[1].self_s, 3.0);
}

}  // namespace
}  // namespace cc::profiler
