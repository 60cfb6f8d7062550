// A TP-group collective inside a step costs what its last-arriving rank took (the others
// also waited for it); calls match across the group's ranks by occurrence, warm-up and
// stalled steps stay out, and records of one (kind, size) pool call-weighted.
#include <gtest/gtest.h>

#include "profiler/in_step_collectives.h"

namespace cc::profiler {
namespace {

RecordedOp call(const char* name, CollectiveKind kind, std::int64_t bytes, long step, double seconds) {
  RecordedOp e;
  e.op.name = name;
  e.op.collective = true;
  e.op.kind = kind;
  e.op.shape = {bytes, 0, 0, 0};
  e.step = step;
  e.duration_s = e.self_s = seconds;
  return e;
}

TEST(InStepCollectives, EachCallCostsItsLastArrivingRank) {
  // Two TP groups of two ranks. In step 2 "tp_reduce" runs twice (two microbatches with one
  // annotation, matched by order); "dp.grad_reduce" is not the TP group's and stays out.
  const auto ar = CollectiveKind::AllReduce;
  const std::vector<std::vector<RecordedOp>> per_rank = {
      {call("tp_reduce", ar, 1024, 2, 5.0), call("tp_reduce", ar, 1024, 2, 2.0), call("dp.grad_reduce", ar, 64, 2, 9.0)},
      {call("tp_reduce", ar, 1024, 2, 1.0), call("tp_reduce", ar, 1024, 2, 4.0), call("dp.grad_reduce", ar, 64, 2, 9.0)},
      {call("tp_reduce", ar, 1024, 2, 3.0), call("tp_reduce", ar, 1024, 2, 8.0)},
      {call("tp_reduce", ar, 1024, 2, 6.0), call("tp_reduce", ar, 1024, 2, 7.0)},
  };
  const std::vector<InStepCollective> out = in_step_collectives(per_rank, {{0, 1}, {2, 3}}, 1, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, ar);
  EXPECT_EQ(out[0].group_size, 2);
  EXPECT_EQ(out[0].bytes, 1024.0);
  EXPECT_EQ(out[0].calls, 4);
  EXPECT_DOUBLE_EQ(out[0].mean_s, (1.0 + 2.0 + 3.0 + 7.0) / 4);
}

TEST(InStepCollectives, WarmUpStalledAndUnmatchedCallsStayOut) {
  const auto ag = CollectiveKind::AllGather, rs = CollectiveKind::ReduceScatter;
  const std::vector<std::vector<RecordedOp>> per_rank = {
      {call("sp_all_gather", ag, 4096, 1, 0.5), call("sp_all_gather", ag, 4096, 2, 2.0),
       call("sp_all_gather", ag, 4096, 3, 9.0), call("tp_reduce", rs, 4096, 4, 3.0), call("tp_reduce", rs, 4096, 4, 1.0)},
      {call("sp_all_gather", ag, 4096, 1, 0.5), call("sp_all_gather", ag, 4096, 2, 4.0),
       call("sp_all_gather", ag, 4096, 3, 9.0), call("tp_reduce", rs, 4096, 4, 5.0)},
  };
  // Step 1 is warm-up, step 3 stalled; rank 1 recorded one of the two reduce-scatters.
  const std::vector<InStepCollective> out = in_step_collectives(per_rank, {{0, 1}}, 2, {3});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, ag);
  EXPECT_EQ(out[0].calls, 1);
  EXPECT_DOUBLE_EQ(out[0].mean_s, 2.0);
  EXPECT_EQ(out[1].kind, rs);
  EXPECT_EQ(out[1].calls, 1);
  EXPECT_DOUBLE_EQ(out[1].mean_s, 3.0);
}

TEST(InStepCollectives, NoneWithoutTensorParallelism) {
  const std::vector<std::vector<RecordedOp>> per_rank = {{call("tp_reduce", CollectiveKind::AllReduce, 8, 1, 1.0)},
                                                         {call("tp_reduce", CollectiveKind::AllReduce, 8, 1, 2.0)}};
  EXPECT_TRUE(in_step_collectives(per_rank, {{0}, {1}}, 1, {}).empty());
}

TEST(InStepCollectives, RecordsOfOneKindAndSizePoolCallWeighted) {
  std::vector<InStepCollective> into = {{CollectiveKind::AllReduce, 2, 1024, 3, 1.0},
                                        {CollectiveKind::AllReduce, 2, 4096, 1, 4.0}};
  add_in_step_collectives(into, {{CollectiveKind::AllReduce, 2, 1024, 1, 5.0},
                                 {CollectiveKind::AllGather, 2, 512, 2, 0.5}});
  ASSERT_EQ(into.size(), 3u);
  EXPECT_EQ(into[0].bytes, 1024.0);
  EXPECT_EQ(into[0].calls, 4);
  EXPECT_DOUBLE_EQ(into[0].mean_s, 2.0);
  EXPECT_EQ(into[1].bytes, 4096.0);
  EXPECT_EQ(into[2].kind, CollectiveKind::AllGather);
}

}  // namespace
}  // namespace cc::profiler
