// A one-off stall in a profiled run's timed steps is left out of its op times; warm-up steps
// and ordinary step-to-step noise are not stalls.
#include <gtest/gtest.h>

#include "profiler/op_statistics.h"

namespace cc::profiler {
namespace {

TEST(StalledSteps, OnlyATimedStepWellAboveTheMedianIsAStall) {
  // Steps 1-2 warm up (step 1 is slow, as a first step is); step 4 stalls as a fresh `tiny`
  // process did on 2026-12-03; step 6 is 10% slow, which is noise.
  const std::vector<double> steps = {0.095, 0.054, 0.050, 0.067, 0.051, 0.055, 0.049};
  EXPECT_EQ(stalled_steps(steps, 3), (std::set<long>{4}));
  // Timed from step 1, the first step is one too: 0.095 s against a median of 0.054 s.
  EXPECT_EQ(stalled_steps(steps, 1).count(1), 1u);
}

TEST(StalledSteps, TooFewTimedStepsToJudgeKeepEveryStep) {
  EXPECT_TRUE(stalled_steps({0.05, 0.09}, 1).empty());
  EXPECT_TRUE(stalled_steps({0.1, 0.1, 0.05, 0.09}, 3).empty());
  EXPECT_TRUE(stalled_steps({}, 1).empty());
}

}  // namespace
}  // namespace cc::profiler
