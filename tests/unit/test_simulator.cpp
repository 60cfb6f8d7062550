#include <gtest/gtest.h>

#include <cmath>

#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/iteration_costs.h"
#include "sim/presets.h"
#include "sim/simulator.h"
#include "small_models.h"

namespace cc {
namespace {

// A cost source with fixed costs, so schedules can be checked against hand-derived times.
class FixedCosts final : public CostSource {
 public:
  explicit FixedCosts(double comm = 0) : comm_(comm) {}
  OpCost compute(const ComputeOp& op) const override {
    // Only layer GEMMs cost time (1 µs per forward GEMM); everything else is free.
    const std::string name = op.name;
    const bool layer_gemm = op.kind == OpKind::Gemm && name != "logits" && name.rfind("logits", 0) != 0;
    return {layer_gemm ? 1e-6 : 0.0, false};
  }
  OpCost collective(const CollectiveOp& op) const override {
    return {op.kind == CollectiveKind::SendRecv ? comm_ : 0.0, false};
  }
  std::string describe() const override { return "fixed"; }

 private:
  double comm_;
};

ModelSpec small_model(int layers) { return test::small_gpt(layers); }

TEST(Simulator, OneF1BIterationIsMPlusPMinusOneSlots) {
  // Forward = 4 GEMMs = 4 µs per layer; backward = 8 GEMMs = 8 µs. One layer per stage,
  // free communication: iteration = (m + p - 1)·(4 + 8) µs, bubble (p-1)/(m+p-1) of it.
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  const int p = 4, m = 8;
  ParallelConfig c;
  c.pp = p;
  c.global_batch = m;
  const SimResult r = simulate(small_model(p), cluster, c, FixedCosts());
  EXPECT_NEAR(r.iteration_time_s, (m + p - 1) * 12e-6, 1e-12);
  EXPECT_NEAR(r.bubble_fraction, (p - 1.0) / (m + p - 1), 1e-9);
  EXPECT_NEAR(r.breakdown.total(), r.iteration_time_s, 1e-12);
}

TEST(Simulator, InterleavingDividesTheBubbleByTheVirtualStages) {
  // Narayanan 2021: the interleaved bubble is (1/v)·(p-1)/m of the ideal time.
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  const int p = 4, m = 8, v = 2;
  ParallelConfig c;
  c.pp = p;
  c.global_batch = m;
  c.virtual_stages = v;
  const SimResult r = simulate(small_model(p * v), cluster, c, FixedCosts());
  const double ideal = m * v * 12e-6;  // each chunk: one layer, 12 µs forward+backward
  EXPECT_NEAR(r.iteration_time_s, ideal * (1 + (p - 1.0) / (v * m)), 1e-12);
}

TEST(Simulator, BlockingSendsAddTheirTimeToTheCriticalPath) {
  // With a transfer cost d per hop, a 2-stage pipeline with one microbatch runs
  // F0, send, F1, B1, send, B0: 4 + d + 4 + 8 + d + 8 µs.
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  ParallelConfig c;
  c.pp = 2;
  c.global_batch = 1;
  const double d = 3e-6;
  const SimResult r = simulate(small_model(2), cluster, c, FixedCosts(d));
  EXPECT_NEAR(r.iteration_time_s, 24e-6 + 2 * d, 1e-12);
  // Stage 0 idles from its forward's end to its backward's start: both transfers lie on
  // that wait (exposed pipeline communication), stage 1's passes are the bubble.
  EXPECT_EQ(r.reported_stage, 0);
  EXPECT_NEAR(r.breakdown.pp_comm, 2 * d, 1e-12);
  EXPECT_NEAR(r.breakdown.bubble, 12e-6, 1e-12);
}

TEST(Simulator, EveryRankModeAgreesWithSymmetricModeAndShowsStragglers) {
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  const AnalyticCosts costs(cluster, Precision::BF16);
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelConfig c;
  c.tp = 2;
  c.pp = 2;
  c.dp = 4;
  c.micro_batch = 2;
  c.global_batch = 64;
  const SimResult symmetric = simulate(m, cluster, c, costs);
  SimOptions every;
  every.every_rank = true;
  const SimResult all = simulate(m, cluster, c, costs, every);
  EXPECT_EQ(symmetric.iteration_time_s, all.iteration_time_s);
  EXPECT_GT(all.tasks, symmetric.tasks);

  // One GPU 1.5x slower paces its stage, its pipeline, and through the DP reduction every
  // replica: the iteration takes at least that stage's slowed busy time.
  every.stragglers = {{5, 1.5}};
  const SimResult slow = simulate(m, cluster, c, costs, every);
  const double busy = symmetric.breakdown.compute + symmetric.breakdown.tp_comm;
  EXPECT_GE(slow.iteration_time_s, 1.5 * busy);
  EXPECT_GT(slow.iteration_time_s, symmetric.iteration_time_s * 1.2);
}

TEST(Simulator, DataParallelReductionIsExposedAfterTheLastBackwardUnlessOverlapped) {
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  const AnalyticCosts costs(cluster, Precision::BF16);
  const ModelSpec m = load_model("gpt3-175b");
  ParallelConfig c;
  c.tp = 8;
  c.pp = 16;
  c.dp = 8;
  c.sequence_parallel = true;
  c.recompute = RecomputeGranularity::Selective;
  c.global_batch = 1536;
  const SimResult plain = simulate(m, cluster, c, costs);
  // 1.37e9 fp32 gradients per GPU, ring over 8 nodes on one 25 GB/s NIC each: ~0.45 s.
  EXPECT_GT(plain.breakdown.dp_comm, 0.3);
  EXPECT_LT(plain.breakdown.dp_comm, 0.7);
  // Overlap can only hide the reduction behind the stage's last backward pass: buckets
  // become ready during it, and under 1F1B nothing else runs after it.
  c.overlap_grad_reduce = true;
  const SimResult overlapped = simulate(m, cluster, c, costs);
  const double last_backward = price_iteration(m, cluster, c, costs).chunks[0][0].backward.total();
  const double saved = plain.iteration_time_s - overlapped.iteration_time_s;
  EXPECT_GT(saved, 0.5 * last_backward);
  EXPECT_LE(saved, last_backward + 1e-3);
  EXPECT_LT(overlapped.breakdown.dp_comm, plain.breakdown.dp_comm);
}

TEST(Simulator, TrainingDaysFollowFromIterationTime) {
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  const AnalyticCosts costs(cluster, Precision::BF16);
  ParallelConfig c;
  c.tp = 8;
  c.pp = 16;
  c.dp = 8;
  c.global_batch = 1536;
  c.sequence_parallel = true;
  c.recompute = RecomputeGranularity::Selective;
  SimOptions o;
  o.train_tokens = 300e9;
  const SimResult sel = simulate(load_model("gpt3-175b"), cluster, c, costs, o);
  EXPECT_NEAR(sel.training_days, 300e9 / (1536.0 * 2048) * sel.iteration_time_s / 86400, 1e-9);
  // NVIDIA: 24 days with SP + selective; 34 days with full recompute (Narayanan Eq. 4 at
  // 140 TFLOP/s). Our prediction must land near both and keep the gap.
  c.sequence_parallel = false;
  c.recompute = RecomputeGranularity::Full;
  const SimResult full = simulate(load_model("gpt3-175b"), cluster, c, costs, o);
  EXPECT_NEAR(sel.training_days, 24, 24 * 0.1);
  EXPECT_NEAR(full.training_days, 34, 34 * 0.1);
  EXPECT_GT(full.training_days / sel.training_days, 1.25);
}

TEST(Simulator, MemoryDecidesFit) {
  const ClusterSpec cluster = load_cluster("dgx-a100-40gb");
  const AnalyticCosts costs(cluster, Precision::BF16);
  ParallelConfig c;
  c.tp = 8;
  c.pp = 2;
  c.global_batch = 16;
  const SimResult r = simulate(load_model("gpt3-175b"), cluster, c, costs);  // 175B on 16 GPUs
  EXPECT_FALSE(r.fits);
  EXPECT_GT(r.peak_memory_gib, 40);
}

TEST(Simulator, RefusesInvalidLayouts) {
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  const AnalyticCosts costs(cluster, Precision::BF16);
  ParallelConfig c;
  c.tp = 7;
  EXPECT_THROW(simulate(load_model("gpt3-175b"), cluster, c, costs), SpecError);
}

}  // namespace
}  // namespace cc
