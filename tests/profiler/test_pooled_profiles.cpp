// pool_profiles: profiles of the same runs taken at different times pool into one database
// whose op times are medians over the rounds, and profiles of different runs refuse to pool
// (join_profiles puts those one after another);
// a run between two profiles weighs them by when it ran.
#include <gtest/gtest.h>

#include "profiler/pooled_profiles.h"
#include "sim/error.h"

namespace cc::profiler {
namespace {

OpRecord op(const std::string& name, int samples, double mean_s) {
  OpRecord r;
  r.name = name;
  r.phase = Phase::Forward;
  r.shape = {512, 768, 256, 1};
  r.dtype = "fp32";
  r.samples = samples;
  r.mean_s = r.median_s = r.p10_s = r.p90_s = mean_s;
  return r;
}

CostDatabase profile(double fc1_s, double run_s, bool with_sweep) {
  CostDatabase db;
  db.dtype = "fp32";
  db.command = "clustercast profile --model small";
  ProfiledRun run;
  run.model = "{}";
  run.micro_batch = 2;
  run.global_batch = 4;
  run.recompute = "none";
  run.timed_steps = 5;
  run.iteration_mean_s = run.iteration_median_s = run.iteration_p10_s = run.iteration_p90_s = run_s;
  db.runs.push_back(run);
  db.ops.push_back(op("fc1", 30, fc1_s));
  db.in_step_collectives.push_back({CollectiveKind::AllReduce, 2, 4096, 10, fc1_s / 100});
  if (with_sweep) db.collectives.push_back(CollectiveCurve{});
  return db;
}

TEST(PooledProfiles, OpTimesAreMediansOverRoundsAndSamplesAddUp) {
  CostDatabase later = profile(0.006, 1.1, false);
  later.ops.front().samples = 10;
  later.ops.push_back(op("fc2", 10, 0.002));  // an op only one round saw is kept as measured
  const CostDatabase pooled = pool_profiles({profile(0.004, 0.9, true), later});
  ASSERT_EQ(pooled.ops.size(), 2u);
  EXPECT_EQ(pooled.ops[0].name, "fc1");
  EXPECT_EQ(pooled.ops[0].samples, 40);
  EXPECT_DOUBLE_EQ(pooled.ops[0].mean_s, (0.004 + 0.006) / 2) << "two rounds: the mean of the middle two";
  EXPECT_EQ(pooled.ops[1].name, "fc2");
  EXPECT_DOUBLE_EQ(pooled.ops[1].mean_s, 0.002);
  ASSERT_EQ(pooled.runs.size(), 1u);
  EXPECT_EQ(pooled.runs[0].timed_steps, 10);
  EXPECT_DOUBLE_EQ(pooled.runs[0].iteration_mean_s, 1.0);
  EXPECT_EQ(pooled.collectives.size(), 1u) << "the first round's sweep";
  ASSERT_EQ(pooled.in_step_collectives.size(), 1u);
  EXPECT_EQ(pooled.in_step_collectives[0].calls, 20);
  EXPECT_DOUBLE_EQ(pooled.in_step_collectives[0].mean_s, (0.004 + 0.006) / 200);
  EXPECT_NE(pooled.command.find("pooled over 2 profiles"), std::string::npos) << pooled.command;
}

// One round caught in a slow spell (26% slow, as one run of a plain profile of `small` was)
// moves neither the ops nor the run: the median is the other rounds'.
TEST(PooledProfiles, ASlowRoundLeavesThePool) {
  const CostDatabase pooled =
      pool_profiles({profile(0.0040, 0.90, true), profile(0.0052, 1.13, false), profile(0.0041, 0.91, false)});
  EXPECT_DOUBLE_EQ(pooled.ops[0].mean_s, 0.0041);
  EXPECT_DOUBLE_EQ(pooled.ops[0].p90_s, 0.0041);
  EXPECT_DOUBLE_EQ(pooled.runs[0].iteration_median_s, 0.91);
  EXPECT_EQ(pooled.ops[0].samples, 90);
  EXPECT_EQ(pooled.runs[0].timed_steps, 15);
}

TEST(PooledProfiles, OneProfilePoolsToItself) {
  const CostDatabase one = profile(0.004, 0.9, true);
  EXPECT_EQ(cost_database_to_text(pool_profiles({one})), cost_database_to_text(one));
}

TEST(PooledProfiles, ProfilesOfOtherRunsDoNotPool) {
  CostDatabase other = profile(0.004, 0.9, false);
  other.runs[0].micro_batch = 4;
  try {
    pool_profiles({profile(0.004, 0.9, true), other});
    FAIL() << "pooled profiles of different runs";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("micro batch 4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pool_profiles({}), SpecError);
}

// Profiles of different runs, each its own job, join into one database: the runs and ops
// one after another, the first sweep, the in-step collectives pooled, every command; joined rounds then pool as usual.
TEST(PooledProfiles, ProfilesOfDifferentRunsJoinRunAfterRun) {
  CostDatabase second = profile(0.008, 1.8, false);
  second.command = "clustercast profile --model small --micro-batch-size 4";
  second.runs[0].micro_batch = 4;
  second.ops[0].shape = {1024, 768, 256, 1};
  const CostDatabase joined = join_profiles({profile(0.004, 0.9, true), second});
  ASSERT_EQ(joined.runs.size(), 2u);
  EXPECT_EQ(joined.runs[0].micro_batch, 2);
  EXPECT_EQ(joined.runs[1].micro_batch, 4);
  ASSERT_EQ(joined.ops.size(), 2u);
  EXPECT_DOUBLE_EQ(joined.ops[0].mean_s, 0.004);
  EXPECT_DOUBLE_EQ(joined.ops[1].mean_s, 0.008);
  EXPECT_EQ(joined.collectives.size(), 1u) << "the first job's sweep";
  ASSERT_EQ(joined.in_step_collectives.size(), 1u) << "one record per (kind, group size, bytes)";
  EXPECT_EQ(joined.in_step_collectives[0].calls, 20);
  EXPECT_DOUBLE_EQ(joined.in_step_collectives[0].mean_s, (0.004 + 0.008) / 200);
  EXPECT_EQ(joined.command,
            "clustercast profile --model small && clustercast profile --model small --micro-batch-size 4");
  const CostDatabase pooled = pool_profiles({joined, join_profiles({profile(0.006, 1.1, false), second})});
  ASSERT_EQ(pooled.runs.size(), 2u);
  EXPECT_DOUBLE_EQ(pooled.ops[0].mean_s, 0.005);

  CostDatabase bf16 = second;
  bf16.dtype = "bf16";
  EXPECT_THROW(join_profiles({profile(0.004, 0.9, true), bf16}), SpecError);
  EXPECT_THROW(join_profiles({}), SpecError);
}

// A run a third of the way from one profile to the next takes a third of the later one's
// price; before the first or after the second it takes the nearer one's whole.
TEST(PooledProfiles, ARunBetweenTwoProfilesWeighsThemByWhenItRan) {
  EXPECT_DOUBLE_EQ(weight_of_later_profile(40, 10, 100), 1.0 / 3);
  EXPECT_DOUBLE_EQ(weight_of_later_profile(10, 10, 100), 0);
  EXPECT_DOUBLE_EQ(weight_of_later_profile(100, 10, 100), 1);
  EXPECT_DOUBLE_EQ(weight_of_later_profile(5, 10, 100), 0);
  EXPECT_DOUBLE_EQ(weight_of_later_profile(120, 10, 100), 1);
  EXPECT_DOUBLE_EQ(weight_of_later_profile(50, 10, 10), 0);  // no interval: the earlier profile
}

}  // namespace
}  // namespace cc::profiler
