// cross_node_traffic: the bytes an iteration moves between nodes, against hand-derived sums.
#include <gtest/gtest.h>

#include "sim/cross_node_traffic.h"
#include "sim/memory_model.h"
#include "sim/presets.h"

namespace cc {
namespace {

double bytes_of(const CrossNodeTraffic& t, TrafficKind kind) {
  const auto it = t.total.find(kind);
  return it == t.total.end() ? 0 : it->second;
}

TEST(CrossNodeTraffic, PipelineBoundaryCarriesEveryMicrobatchBothWays) {
  const ModelSpec m = load_model("gpt3-175b");
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  ParallelConfig c;
  c.tp = 8;
  c.pp = 2;
  c.global_batch = 4;  // 4 microbatches of 1
  const CrossNodeTraffic t = cross_node_traffic(m, cluster, c);
  // Stage 0 on node 0, stage 1 on node 1. One activation: 2 B x 2048 tokens x 12288 =
  // 50,331,648 B, 1/8 per TP rank = 6,291,456 B; forward and backward, 4 microbatches,
  // 8 TP ranks: 6,291,456 x 2 x 4 x 8 = 402,653,184 B.
  EXPECT_DOUBLE_EQ(bytes_of(t, TrafficKind::Pipeline), 402653184.0);
  EXPECT_DOUBLE_EQ(bytes_of(t, TrafficKind::DataParallel), 0.0);
  EXPECT_FALSE(t.tp_spans_nodes);
  for (const NodeLink& l : t.links) {
    EXPECT_EQ(l.node_a, 0);
    EXPECT_EQ(l.node_b, 1);
  }
}

TEST(CrossNodeTraffic, DataParallelRingOfTwoSendsTheGradientsEachWay) {
  const ModelSpec m = load_model("gpt3-1.3b");
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  ParallelConfig c;
  c.tp = 8;
  c.dp = 2;
  c.global_batch = 2;
  const CrossNodeTraffic t = cross_node_traffic(m, cluster, c);
  // Replica 0 on node 0, replica 1 on node 1. All-reduce over 2 members: each sends
  // 2(n-1)/n = 1 buffer of fp32 gradients (4 B per parameter) to the other; 8 TP ranks.
  const double grads = 4.0 * static_cast<double>(stage_parameters(m, c, 0));
  EXPECT_DOUBLE_EQ(bytes_of(t, TrafficKind::DataParallel), 2 * 8 * grads);
  EXPECT_DOUBLE_EQ(bytes_of(t, TrafficKind::Pipeline), 0.0);
  // Node 0 moves all of it; 8 NICs of 25 GB/s each way.
  EXPECT_DOUBLE_EQ(t.busiest_node_bytes, 2 * 8 * grads);
  EXPECT_NEAR(t.busiest_node_seconds, 2 * 8 * grads / (2 * 8 * 25e9), 1e-12);
}

TEST(CrossNodeTraffic, NothingLeavesASingleNode) {
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelConfig c;
  c.tp = 2;
  c.pp = 2;
  c.dp = 2;
  c.global_batch = 8;
  const CrossNodeTraffic t = cross_node_traffic(m, load_cluster("dgx-a100-80gb"), c);
  EXPECT_TRUE(t.links.empty());
  EXPECT_EQ(t.busiest_node_bytes, 0.0);
}

}  // namespace
}  // namespace cc
