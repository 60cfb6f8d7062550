// The CPU profiler's recorder and statistics: nested scopes split their time without double
// counting, ops land in the step they ran in, and records summarise only the timed steps.
#include <gtest/gtest.h>

#include <stdexcept>

#include "profiler/host_recorder.h"
#include "profiler/op_statistics.h"

namespace cc::profiler {
namespace {

engine::OpAnnotation scope(const char* name, std::int64_t a = 0, bool collective = false) {
  engine::OpAnnotation op;
  op.name = name;
  op.shape = {a, 0, 0, 0};
  op.collective = collective;
  return op;
}

TEST(HostRecorder, NestedScopesKeepSelfTimeAndStep) {
  HostRecorder r;
  {
    const RecorderInstalled installed(r);
    const engine::ScopedOp step(scope(kStepScope, 7));
    {
      const engine::ScopedOp outer(scope("optimizer.adam", 100));
      const engine::ScopedOp inner(scope("grad_norm", 8, true));
    }
  }
  EXPECT_EQ(engine::active_recorder(), nullptr);  // uninstalled with the scope
  ASSERT_EQ(r.events().size(), 3u);
  const RecordedOp& inner = r.events()[0];
  const RecordedOp& outer = r.events()[1];
  const RecordedOp& step = r.events()[2];
  EXPECT_STREQ(inner.op.name, "grad_norm");
  EXPECT_EQ(inner.self_s, inner.duration_s);  // a leaf is all self time
  EXPECT_DOUBLE_EQ(outer.self_s, outer.duration_s - inner.duration_s);
  EXPECT_DOUBLE_EQ(step.self_s, step.duration_s - outer.duration_s);
  for (const auto& e : r.events()) EXPECT_EQ(e.step, 7);
  EXPECT_GE(outer.start_s, step.start_s);
  EXPECT_GE(step.start_s + step.duration_s, outer.start_s + outer.duration_s);
}

TEST(HostRecorder, ScopesOutsideAStepHaveNoStep) {
  HostRecorder r;
  const RecorderInstalled installed(r);
  { const engine::ScopedOp before(scope("fc1")); }
  { const engine::ScopedOp step(scope(kStepScope, 1)); }
  { const engine::ScopedOp after(scope("fc1")); }
  EXPECT_EQ(r.events()[0].step, -1);
  EXPECT_EQ(r.events()[1].step, 1);
  EXPECT_EQ(r.events()[2].step, -1);
}

TEST(HostRecorder, AnEndThatDoesNotMatchTheOpenScopeIsABug) {
  HostRecorder r;
  r.begin(scope("fc1"));
  EXPECT_THROW(r.end(scope("fc2")), std::logic_error);
}

RecordedOp event(const char* name, long step, double self, std::int64_t elements = 10, bool collective = false) {
  RecordedOp e;
  e.op = scope(name, elements, collective);
  e.step = step;
  e.self_s = self;
  e.duration_s = self;
  return e;
}

TEST(OpStatistics, MeanMedianAndSpreadOverTimedStepsOnly) {
  std::vector<RecordedOp> events;
  events.push_back(event("gelu", 1, 100.0));  // warm-up step: left out
  for (long step = 2; step <= 4; ++step) {
    events.push_back(event("gelu", step, 0.001 * static_cast<double>(step)));
    events.push_back(event("gelu", step, 0.010, 20));  // another shape: another record
    events.push_back(event("tp_reduce", step, 5.0, 10, true));  // collectives come from the sweep
  }
  const auto records = summarize_ops(events, 2, "fp32", 2);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].name, "gelu");
  EXPECT_EQ(records[0].shape, (std::array<std::int64_t, 4>{10, 1, 1, 1}));  // unused dims are 1
  EXPECT_EQ(records[0].samples, 3);
  EXPECT_DOUBLE_EQ(records[0].median_s, 0.003);
  EXPECT_DOUBLE_EQ(records[0].mean_s, 0.003);
  EXPECT_DOUBLE_EQ(records[0].p10_s, 0.002);
  EXPECT_DOUBLE_EQ(records[0].p90_s, 0.004);
  EXPECT_EQ(records[0].tp, 2);
  EXPECT_EQ(records[0].dtype, "fp32");
  EXPECT_EQ(records[1].shape[0], 20);
}

TEST(OpStatistics, CoverageSplitsTheStep) {
  std::vector<RecordedOp> events = {event("fc1", 3, 0.6), event("tp_reduce", 3, 0.3, 10, true)};
  RecordedOp step = event(kStepScope, 3, 0.1);
  step.duration_s = 1.0;
  events.push_back(step);
  const StepCoverage c = step_coverage(events, 2);
  EXPECT_EQ(c.steps, 1);
  EXPECT_DOUBLE_EQ(c.step_s, 1.0);
  EXPECT_DOUBLE_EQ(c.compute_s, 0.6);
  EXPECT_DOUBLE_EQ(c.collective_s, 0.3);
  EXPECT_DOUBLE_EQ(c.unannotated_s, 0.1);
}

TEST(OpStatistics, NearestRankPercentile) {
  EXPECT_EQ(percentile({}, 50), 0.0);
  EXPECT_EQ(percentile({3, 1, 2}, 50), 2.0);
  EXPECT_EQ(percentile({4, 1, 3, 2}, 50), 2.0);
  EXPECT_EQ(percentile({4, 1, 3, 2}, 100), 4.0);
  EXPECT_EQ(percentile({4, 1, 3, 2}, 0), 1.0);
}

}  // namespace
}  // namespace cc::profiler
