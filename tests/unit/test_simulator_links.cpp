// The simulator puts each transfer on the links it crosses: a pipeline send and a DP reduction
// leaving one GPU's NIC at the same time share it. Costs are fixed by hand (FixedTransfers) so
// every expected time is a count of the schedule, written beside the assertion.
#include <gtest/gtest.h>

#include <string>

#include "sim/presets.h"
#include "sim/simulator.h"
#include "small_models.h"

namespace cc {
namespace {

// Forward GEMMs 1 µs each (a layer's forward 4 µs, backward 8 µs), a pipeline send 10 µs, the
// stage's DP gradient all-reduce 20 µs; everything else free.
class FixedTransfers final : public CostSource {
 public:
  OpCost compute(const ComputeOp& op) const override {
    const std::string name = op.name;
    return {op.kind == OpKind::Gemm && name.rfind("logits", 0) != 0 ? 1e-6 : 0.0, false};
  }
  OpCost collective(const CollectiveOp& op) const override {
    if (op.kind == CollectiveKind::SendRecv) return {10e-6, false};
    if (std::string(op.name) == "dp.grad_reduce") return {20e-6, false};
    return {0.0, false};
  }
  std::string describe() const override { return "fixed transfers"; }
};

ModelSpec one_layer_per_stage() { return test::small_gpt(2); }

// PP 2, one microbatch, every GPU a node of its own: every transfer crosses a NIC.
ParallelConfig two_stages(int dp) {
  ParallelConfig c;
  c.pp = 2;
  c.dp = dp;
  c.global_batch = dp;  // one microbatch per replica
  return c;
}

ClusterSpec one_gpu_nodes() {
  ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  cluster.gpus_per_node = 1;
  cluster.nics_per_node = 1;
  return cluster;
}

TEST(SimulatorLinks, APipelineAloneTakesItsPricedTime) {
  // No DP: F0 4, send 10, F1 4, B1 8, send back 10, B0 8 = 44 µs, as before links shared.
  const SimResult r = simulate(one_layer_per_stage(), one_gpu_nodes(), two_stages(1), FixedTransfers());
  EXPECT_NEAR(r.iteration_time_s, 44e-6, 1e-12);
}

TEST(SimulatorLinks, ADpReductionAndAPipelineSendShareTheNic) {
  // Stage 1's backward ends at 4 + 10 + 4 + 8 = 26 µs. Its gradient send to stage 0 and its DP
  // all-reduce both start then and both leave stage 1's NIC: half each, so the 10 µs send ends
  // at 26 + 20 = 46 (the reduction has 10 of its 20 done by then and ends alone at 56). Stage
  // 0's backward runs 46–54, its own reduction (its NIC free) 54–74. Without sharing: send
  // 26–36, backward 36–44, reduction 44–64.
  SimOptions keep;
  keep.keep_timeline = true;
  const SimResult r = simulate(one_layer_per_stage(), one_gpu_nodes(), two_stages(2), FixedTransfers(), keep);
  EXPECT_NEAR(r.iteration_time_s, 74e-6, 1e-12);
  EXPECT_NEAR(r.breakdown.total(), r.iteration_time_s, 1e-12);
  int sends = 0;
  for (const TimelineEvent& e : r.timeline)
    if (e.kind == TaskKind::Send) {
      ++sends;
      // Forward send alone: 10 µs; backward send beside the reduction: 20 µs.
      EXPECT_EQ(e.duration, e.stage == 0 ? 10'000 : 20'000) << e.name << " from stage " << e.stage;
    }
  EXPECT_EQ(sends, 2);
}

TEST(SimulatorLinks, SharingIsTheSameInEveryRankMode) {
  // Each replica's send shares its own NIC with the reduction, which spans both replicas' NICs:
  // the same 74 µs as one symmetric rank per stage.
  SimOptions every;
  every.every_rank = true;
  const SimResult r = simulate(one_layer_per_stage(), one_gpu_nodes(), two_stages(2), FixedTransfers(), every);
  EXPECT_NEAR(r.iteration_time_s, 74e-6, 1e-12);
}

}  // namespace
}  // namespace cc
