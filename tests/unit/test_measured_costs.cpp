// MeasuredCosts: a measured shape prices at its mean; another shape of a measured op is
// interpolated between its measured shapes in log(work)-log(time), beyond them at the nearest
// end's throughput; fused ops cost nothing; collectives follow the sweep at the level the
// profiled steps measured;
// only ops absent from the database fall back to the analytic model, and coverage() says so.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/measured_costs.h"
#include "sim/presets.h"

namespace cc {
namespace {

ComputeOp gemm(const char* name, std::int64_t m, std::int64_t n, std::int64_t k, Phase phase = Phase::Forward) {
  return {name, OpKind::Gemm, phase, m, n, k, 1, 2.0 * m * n * k, 4.0 * (m * k + k * n + m * n)};
}

class Measured : public ::testing::Test {
 protected:
  void SetUp() override {
    db.dtype = "fp32";
    db.machine.backend = "cpu";
    db.fused_ops = {"main_grad_accumulate"};
    db.ops.push_back({"fc1", Phase::Forward, {1024, 1024, 256, 1}, "fp32", 1, 60, 0.0108, 0.0107, 0.0105, 0.0113});
    db.ops.push_back({"fc1", Phase::Forward, {256, 512, 128, 1}, "fp32", 1, 40, 0.00074, 0.00073, 0.0007, 0.0008});
    CollectiveCurve c;
    c.kind = CollectiveKind::AllReduce;
    c.group_size = 2;
    c.latency_s = 5e-6;
    c.bus_bandwidth_gbs = 4.0;
    c.points = {{1024, 256, 5.3e-6, 0.19, 0.19}, {1 << 20, 1 << 18, 2.7e-4, 3.9, 3.9}};
    db.collectives.push_back(c);
  }
  ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  CostDatabase db;
};

TEST_F(Measured, ExactShapeUsesTheMean) {
  const MeasuredCosts costs(db, "db.json", cluster, Precision::FP32);
  const OpCost c = costs.compute(gemm("fc1", 1024, 1024, 256));
  EXPECT_DOUBLE_EQ(c.seconds, 0.0108);
  EXPECT_TRUE(c.measured);
}

TEST_F(Measured, RecomputeUsesTheForwardMeasurement) {
  const MeasuredCosts costs(db, "db.json", cluster, Precision::FP32);
  EXPECT_DOUBLE_EQ(costs.compute(gemm("fc1", 256, 512, 128, Phase::Recompute)).seconds, 0.00074);
}

TEST_F(Measured, BeyondTheMeasuredShapesTheLastThroughputHolds) {
  const MeasuredCosts costs(db, "db.json", cluster, Precision::FP32);
  const ComputeOp wider = gemm("fc1", 2048, 1024, 256);  // 2x the FLOPs of the largest record (0.0108 s)
  const OpCost c = costs.compute(wider);
  EXPECT_NEAR(c.seconds, 2 * 0.0108, 1e-12);
  EXPECT_TRUE(c.measured);
  // Below the smallest (256x512x128 in 0.00074 s), its throughput: half the FLOPs, half the time.
  EXPECT_NEAR(costs.compute(gemm("fc1", 128, 512, 128)).seconds, 0.00074 / 2, 1e-12);
}

TEST_F(Measured, AnOpTimedOnlyAtZeroScalesToZero) {
  db.ops.push_back({"bias_add", Phase::Forward, {64, 64, 1, 1}, "fp32", 1, 10, 0.0, 0.0, 0.0, 0.0});
  const MeasuredCosts costs(db, "db.json", cluster, Precision::FP32);
  const OpCost c = costs.compute(gemm("bias_add", 128, 64, 1));  // another shape: the scaled path
  EXPECT_EQ(c.seconds, 0.0);
  EXPECT_TRUE(c.measured);
}

TEST_F(Measured, BetweenTwoMeasuredShapesTimeIsInterpolatedInLogLog) {
  const MeasuredCosts costs(db, "db.json", cluster, Precision::FP32);
  // The records are 16x apart in FLOPs (256x512x128 -> 1024x1024x256); 512x1024x128 has 4x
  // the smaller one's FLOPs, half way in log(FLOPs): the geometric mean of the two times.
  EXPECT_NEAR(costs.compute(gemm("fc1", 512, 1024, 128)).seconds, std::sqrt(0.00074 * 0.0108), 1e-12);
}

TEST_F(Measured, FusedOpsCostNothingAndUnknownOpsAreAnalyticAndReported) {
  const MeasuredCosts costs(db, "db.json", cluster, Precision::FP32);
  const ComputeOp accumulate{"main_grad_accumulate", OpKind::Elementwise, Phase::Backward, 1000, 1, 1, 1, 1000, 8000};
  EXPECT_EQ(costs.compute(accumulate).seconds, 0.0);
  EXPECT_TRUE(costs.compute(accumulate).measured);
  const ComputeOp flash{"flash_attention", OpKind::FlashAttention, Phase::Forward, 2048, 2048, 128, 8, 1e12, 1e8};
  const OpCost c = costs.compute(flash);
  EXPECT_FALSE(c.measured);
  EXPECT_DOUBLE_EQ(c.seconds, AnalyticCosts(cluster, Precision::FP32, AnalyticParams{}).compute(flash).seconds);
  const std::string coverage = costs.coverage();
  EXPECT_NE(coverage.find("1 from the analytic model"), std::string::npos) << coverage;
  EXPECT_NE(coverage.find("flash_attention (forward)"), std::string::npos) << coverage;
  EXPECT_NE(coverage.find("1 fused"), std::string::npos) << coverage;
}

TEST_F(Measured, ContextParallelCollectivesArePricedAnalyticallyAndNamed) {
  // The database swept an all-reduce on 2 ranks; a CP group of 2 running the same kind was
  // never measured beside attention, so the analytic model prices it.
  const MeasuredCosts costs(db, "db.json", cluster, Precision::FP32);
  const CollectiveOp op{"cp.kv_all_gather", CollectiveKind::AllReduce, Phase::Forward, 1 << 20, {2, 1, 2},
                        CommGroup::Context};
  const OpCost priced = costs.collective(op);
  EXPECT_FALSE(priced.measured);
  EXPECT_DOUBLE_EQ(priced.seconds, AnalyticCosts(cluster, Precision::FP32, AnalyticParams{}).collective(op).seconds);
  EXPECT_NE(costs.coverage().find("cp.kv_all_gather:all_reduce on 2 ranks"), std::string::npos) << costs.coverage();
}

TEST_F(Measured, CollectivesOnAMeasuredGroupUseTheSweep) {
  const MeasuredCosts costs(db, "db.json", cluster, Precision::FP32);
  auto all_reduce = [&](double bytes) {
    return costs.collective({"tp_reduce", CollectiveKind::AllReduce, Phase::Forward, bytes, {2, 1, 2}});
  };
  // At a swept size: the measurement itself.
  EXPECT_DOUBLE_EQ(all_reduce(1 << 20).seconds, 2.7e-4);
  EXPECT_TRUE(all_reduce(1 << 20).measured);
  // Between two sizes: a straight line in log-log, so the geometric middle size takes the
  // geometric mean of the two times.
  EXPECT_NEAR(all_reduce(32768).seconds, std::sqrt(5.3e-6 * 2.7e-4), 1e-15);
  // Beyond the largest: the largest size's bandwidth.
  EXPECT_NEAR(all_reduce(8e6).seconds, 2.7e-4 * 8e6 / (1 << 20), 1e-15);
  // Below the smallest: the fitted latency plus proportional transfer.
  EXPECT_NEAR(all_reduce(512).seconds, 5e-6 + (5.3e-6 - 5e-6) / 2, 1e-15);
  // A group size the sweep never ran, or one spanning nodes: the cluster's analytic fabric.
  const CollectiveOp dp{"dp", CollectiveKind::AllReduce, Phase::Backward, 8e6, {16, 2, 8}};
  EXPECT_FALSE(costs.collective(dp).measured);
  EXPECT_DOUBLE_EQ(costs.collective(dp).seconds, AnalyticCosts(cluster, Precision::FP32, AnalyticParams{}).collective(dp).seconds);
}

TEST_F(Measured, InsideAStepACollectiveTakesTheLevelTheProfiledStepsMeasured) {
  // The steps ran the all-reduce at 3x the sweep at 1 KiB and 2x at 1 MiB.
  db.in_step_collectives = {{CollectiveKind::AllReduce, 2, 1024, 10, 3 * 5.3e-6},
                            {CollectiveKind::AllReduce, 2, 1 << 20, 10, 2 * 2.7e-4}};
  const MeasuredCosts costs(db, "db.json", cluster, Precision::FP32);
  auto all_reduce = [&](double bytes) {
    return costs.collective({"tp_reduce", CollectiveKind::AllReduce, Phase::Forward, bytes, {2, 1, 2}}).seconds;
  };
  EXPECT_NEAR(all_reduce(1024), 3 * 5.3e-6, 1e-15);
  EXPECT_NEAR(all_reduce(1 << 20), 2 * 2.7e-4, 1e-15);
  // Half way in log(bytes), half way between the two levels, on the sweep's own shape.
  EXPECT_NEAR(all_reduce(32768), 2.5 * std::sqrt(5.3e-6 * 2.7e-4), 1e-15);
  // Beyond the records, the nearest one's level.
  EXPECT_NEAR(all_reduce(8e6), 2 * 2.7e-4 * 8e6 / (1 << 20), 1e-15);
}

TEST_F(Measured, AKindTheStepsNeverRanTakesTheLevelOfTheKindsTheyDid) {
  CollectiveCurve gather = db.collectives.front();
  gather.kind = CollectiveKind::AllGather;
  gather.points = {{1024, 256, 2e-6, 0.5, 0.25}, {1 << 20, 1 << 18, 1e-4, 10.5, 5.2}};
  db.collectives.push_back(gather);
  db.in_step_collectives = {{CollectiveKind::AllReduce, 2, 1 << 20, 10, 3 * 2.7e-4}};
  EXPECT_DOUBLE_EQ(in_step_factor(db, gather, 4096), 3.0);
  // A record of its own kind wins over the others'.
  db.in_step_collectives.push_back({CollectiveKind::AllGather, 2, 1 << 20, 4, 2 * 1e-4});
  EXPECT_DOUBLE_EQ(in_step_factor(db, gather, 4096), 2.0);
  // Pipeline sends are no meeting of the group: they borrow no other kind's level.
  CollectiveCurve send = gather;
  send.kind = CollectiveKind::SendRecv;
  EXPECT_DOUBLE_EQ(in_step_factor(db, send, 4096), 1.0);
  // Another group size has no records: the sweep as it is.
  gather.group_size = 4;
  EXPECT_DOUBLE_EQ(in_step_factor(db, gather, 4096), 1.0);
}

TEST_F(Measured, AnotherPrecisionIsRefused) {
  try {
    MeasuredCosts costs(db, "db.json", cluster, Precision::BF16);
    FAIL() << "a bf16 simulation accepted an fp32 database";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("--precision fp32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cc
