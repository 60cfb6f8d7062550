// Collective costs against hand-derived values (SimGrid's habit: the expected value's
// derivation sits beside the assertion).
#include <gtest/gtest.h>

#include "sim/analytic_costs.h"
#include "sim/parallel_layout.h"
#include "sim/presets.h"

namespace cc {
namespace {

class Collectives : public ::testing::Test {
 protected:
  ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  AnalyticParams params;
  AnalyticCosts costs{cluster, Precision::BF16, params};
};

TEST_F(Collectives, RingAllReduceInsideANode) {
  // n = 8 on NVLink: 2(n-1)·α + 2(n-1)/n · S / busbw, busbw = 300 GB/s · nvlink_fraction.
  const double S = 256e6, busbw = 300e9 * params.nvlink_fraction, alpha = 2e-6;
  const CollectiveOp op{"ar", CollectiveKind::AllReduce, Phase::Forward, S, {8, 1, 8}};
  EXPECT_NEAR(costs.collective(op).seconds, 14 * alpha + 1.75 * S / busbw, 1e-12);
}

TEST_F(Collectives, AllGatherAndReduceScatterMoveHalfOfAllReduce) {
  const double S = 64e6, busbw = 300e9 * params.nvlink_fraction, alpha = 2e-6;
  for (auto kind : {CollectiveKind::AllGather, CollectiveKind::ReduceScatter}) {
    const CollectiveOp op{"x", kind, Phase::Forward, S, {8, 1, 8}};
    EXPECT_NEAR(costs.collective(op).seconds, 7 * alpha + 0.875 * S / busbw, 1e-12);
  }
}

TEST_F(Collectives, OneRankPerNodeRidesOneNicEach) {
  // DP group of 8 GPUs on 8 nodes (TP fills each node): ring bound by one 25 GB/s NIC.
  const double S = 1e9, busbw = 25e9 * params.network_fraction;
  const CollectiveOp op{"dp", CollectiveKind::AllReduce, Phase::Backward, S, {8, 8, 1}};
  const double ring = 14 * 5e-6 + 1.75 * S / busbw;
  const double tree = 2 * (3 * 5e-6) + 1.75 * S / (busbw * params.tree_bandwidth_fraction);
  EXPECT_NEAR(costs.collective(op).seconds, std::min(ring, tree), 1e-12);
}

TEST_F(Collectives, FullNodesAcrossTheNetworkShareAllEightNics) {
  // 64 ranks on 8 nodes: the node's 8 NICs carry its ring traffic: busbw = min(NVLink, 8·25 GB/s).
  EXPECT_DOUBLE_EQ(costs.bus_bandwidth({64, 8, 8}),
                   std::min(300e9 * params.nvlink_fraction, 8 * 25e9 * params.network_fraction));
  // Two ranks per node use two NICs.
  EXPECT_DOUBLE_EQ(costs.bus_bandwidth({8, 4, 2}), 2 * 25e9 * params.network_fraction);
}

TEST_F(Collectives, SmallMessagesAcrossManyNodesPreferTheTree) {
  const CollectiveOp op{"norm", CollectiveKind::AllReduce, Phase::Backward, 8, {128, 128, 1}};
  const double ring_latency = 2 * 127 * 5e-6;
  EXPECT_LT(costs.collective(op).seconds, ring_latency / 5);
}

TEST(Collectives2, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::AllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::AllGather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::ReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::SendRecv, 2), 1.0);
}

TEST(ParallelLayout, TensorInnermostThenDataThenPipeline) {
  const ParallelLayout layout(8, 4, 2);  // 64 ranks
  EXPECT_EQ(layout.rank({3, 2, 1}), (1 * 4 + 2) * 8 + 3);
  const RankCoords c = layout.coords(53);
  EXPECT_EQ(c.tp, 5);
  EXPECT_EQ(c.dp, 2);
  EXPECT_EQ(c.pp, 1);
  EXPECT_EQ(layout.tp_group(53), (std::vector<int>{48, 49, 50, 51, 52, 53, 54, 55}));
  EXPECT_EQ(layout.dp_group(53), (std::vector<int>{37, 45, 53, 61}));
  EXPECT_EQ(layout.pp_group(53), (std::vector<int>{21, 53}));
  const GroupPlacement dp = place_group(layout.dp_group(53), 8);
  EXPECT_EQ(dp.nodes, 4);
  EXPECT_EQ(dp.per_node, 1);
  const ParallelLayout small_tp(2, 4, 1);
  const GroupPlacement dp2 = place_group(small_tp.dp_group(0), 8);  // {0, 2, 4, 6}: one node
  EXPECT_EQ(dp2.nodes, 1);
  EXPECT_EQ(dp2.per_node, 4);
}

}  // namespace
}  // namespace cc
