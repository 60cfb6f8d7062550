// A measured step in the simulator's categories: every collective of the TP group is
// tensor-parallel communication whatever its name, so a sequence-parallel step's all-gathers
// and the vocab-parallel loss's all-reduces are not mistaken for host time outside the scopes.
#include <gtest/gtest.h>

#include "profiler/step_breakdown.h"

namespace cc::profiler {
namespace {

RecordedOp scope(const char* name, long step, double self, bool collective, Phase phase = Phase::Forward) {
  RecordedOp e;
  e.op.name = name;
  e.op.phase = phase;
  e.op.collective = collective;
  e.step = step;
  e.self_s = self;
  e.duration_s = self;
  return e;
}

TEST(StepBreakdown, EveryTensorParallelCollectiveCountsAsTensorParallelCommunication) {
  const std::vector<RecordedOp> events = {
      scope(kStepScope, 3, 0.5, false),  // self time: outside every scope
      scope("qkv", 3, 10.0, false),
      scope("qkv", 3, 1.0, false, Phase::Recompute),
      scope("tp_reduce", 3, 1.0, true),
      scope("tp_reduce.input_grad", 3, 2.0, true),
      scope("sp_all_gather", 3, 4.0, true),
      scope("sp_all_gather.wgrad_input", 3, 8.0, true),
      scope("cross_entropy.all_reduce", 3, 16.0, true),
      scope("tp.sp_grad_reduce", 3, 32.0, true),
      scope("p2p.recv", 3, 64.0, true),
      scope("dp.grad_all_reduce", 3, 128.0, true),
      scope("grad_norm", 3, 256.0, true),
      scope("optimizer.adam", 3, 512.0, false),
  };
  const MeasuredBreakdown b = step_breakdown(events, 3);
  EXPECT_EQ(b.steps, 1);
  EXPECT_DOUBLE_EQ(b.time.compute, 10.0);
  EXPECT_DOUBLE_EQ(b.time.recompute, 1.0);
  EXPECT_DOUBLE_EQ(b.time.tp_comm, 1.0 + 2.0 + 4.0 + 8.0 + 16.0 + 32.0);
  EXPECT_DOUBLE_EQ(b.time.pp_comm, 64.0);
  EXPECT_DOUBLE_EQ(b.time.dp_comm, 128.0 + 256.0);
  EXPECT_DOUBLE_EQ(b.time.optimizer, 512.0);
  EXPECT_DOUBLE_EQ(b.unannotated, 0.5);
}

TEST(StepBreakdown, WarmUpStepsAreLeftOutAndTheRestAveraged) {
  const std::vector<RecordedOp> events = {
      scope(kStepScope, 1, 9.0, false), scope("qkv", 1, 90.0, false),  // warm-up
      scope(kStepScope, 2, 1.0, false), scope("qkv", 2, 2.0, false),
      scope(kStepScope, 3, 3.0, false), scope("qkv", 3, 4.0, false),
  };
  const MeasuredBreakdown b = step_breakdown(events, 2);
  EXPECT_EQ(b.steps, 2);
  EXPECT_DOUBLE_EQ(b.time.compute, 3.0);
  EXPECT_DOUBLE_EQ(b.unannotated, 2.0);
}

}  // namespace
}  // namespace cc::profiler
