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

// The partial distributed optimizer (--num-distributed-optimizer-instances 2): DP 4, one replica
// per node, blocks {0, 1} and {2, 3}. Inside a block each member reduce-scatters and gathers as a
// ring of 2: (n-1)/n = 1/2 of the fp32 gradients G and of the bf16 parameters W; across the blocks
// the members at one place ({0, 2}, {1, 3}) all-reduce their shard G/2, 2(k-1)/k = 1 of it each.
// Per TP rank: blocks 2 x 2 x (G + W)/2, across 2 x 2 x G/2, so 4G + 2W; a ring of 4 instead
// sends 4 x 3/4 x (G + W) = 3G + 3W.
// With PP 2 each stage's DP members sit on nodes of their own as well, and each stage sends its own
// parameters' share.
TEST(CrossNodeTraffic, PartialDistributedOptimizerRingsInsideBlocksThenAcrossThem) {
  const ModelSpec m = load_model("gpt3-1.3b");
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  for (int pp : {1, 2}) {
    ParallelConfig c;
    c.tp = 8;
    c.pp = pp;
    c.dp = 4;
    c.global_batch = 4 * pp;
    c.distributed_optimizer = true;
    double plain = 0, partial = 0;
    for (int s = 0; s < pp; ++s) {
      const double params = static_cast<double>(stage_parameters(m, c, s));
      const double grads = 4 * params, weights = 2 * params;
      plain += 8 * (3 * grads + 3 * weights);
      partial += 8 * (4 * grads + 2 * weights);
    }
    EXPECT_DOUBLE_EQ(bytes_of(cross_node_traffic(m, cluster, c), TrafficKind::DataParallel), plain) << "PP " << pp;
    c.distributed_optimizer_instances = 2;
    EXPECT_DOUBLE_EQ(bytes_of(cross_node_traffic(m, cluster, c), TrafficKind::DataParallel), partial) << "PP " << pp;
  }
}

TEST(CrossNodeTraffic, TensorParallelGroupOfSixteenRingsOverTwoNodes) {
  const ModelSpec m = load_model("gpt3-175b");
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  ParallelConfig c;
  c.tp = 16;  // ranks 0-7 on node 0, 8-15 on node 1
  c.global_batch = 1;  // one microbatch of 1 sequence
  const CrossNodeTraffic t = cross_node_traffic(m, cluster, c);
  EXPECT_TRUE(t.tp_spans_nodes);
  // Without SP every TP collective is an all-reduce of one activation, 2 B x 2048 tokens x
  // 12288 = 50,331,648 B: per layer 2 forward (attention and MLP outputs) and 2 backward
  // (their input gradients), x 96 layers = 384; the embedding's forward sum and the output
  // layer's input gradient, 2 more: 386 x 50,331,648 = 19,428,016,128 B. The vocab-parallel
  // cross-entropy all-reduces 3 fp32 per token: 12 x 2048 = 24,576 B. Total 19,428,040,704 B.
  // A ring member of 16 sends 2(n-1)/n = 1.875 of each: 36,427,576,320 B. The ring 0..15
  // crosses between the nodes twice (7->8, 15->0): 72,855,152,640 B on the pair (0, 1).
  EXPECT_DOUBLE_EQ(bytes_of(t, TrafficKind::TensorParallel), 72855152640.0);
  ASSERT_EQ(t.links.size(), 1u);
  EXPECT_EQ(t.links[0].node_a, 0);
  EXPECT_EQ(t.links[0].node_b, 1);
  EXPECT_EQ(t.links[0].kind, TrafficKind::TensorParallel);
  EXPECT_DOUBLE_EQ(bytes_of(t, TrafficKind::Pipeline), 0.0);
  EXPECT_DOUBLE_EQ(bytes_of(t, TrafficKind::DataParallel), 0.0);
}

TEST(CrossNodeTraffic, FullRecomputationRepeatsTheForwardTensorParallelCollectives) {
  const ModelSpec m = load_model("gpt3-175b");
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  ParallelConfig c;
  c.tp = 16;
  c.global_batch = 1;
  const double plain = bytes_of(cross_node_traffic(m, cluster, c), TrafficKind::TensorParallel);
  c.recompute = RecomputeGranularity::Full;
  // Each of the 96 layers reruns its forward: 2 more all-reduces of 50,331,648 B, 1.875 per
  // ring member, twice across the node pair: 96 x 2 x 50,331,648 x 1.875 x 2 = 36,238,786,560 B.
  EXPECT_DOUBLE_EQ(bytes_of(cross_node_traffic(m, cluster, c), TrafficKind::TensorParallel) - plain, 36238786560.0);
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

// Mixtral-8x7B on 8 GPUs in two nodes of 4 (no NVLink across them), TP 1, one microbatch of one
// sequence per replica. Every one of its 32 layers is MoE.
struct MixtralOnTwoNodes {
  ModelSpec m = load_model("mixtral-8x7b");
  ClusterSpec cluster = [] {
    ClusterSpec c = load_cluster("dgx-h100");
    c.gpus_per_node = 4;
    c.nvlink_domain_gpus = 0;
    return c;
  }();
  ParallelConfig c = [] {
    ParallelConfig c;
    c.dp = 8;
    c.ep = 8;
    c.global_batch = 8;
    return c;
  }();
  // One all-to-all's buffer at the mean rank: bf16 x 32,768 tokens x top-2 x 4,096 (the busiest
  // rank's is the load imbalance times it).
  double buffer() const { return 2.0 * m.seq_length * m.moe.router_topk * static_cast<double>(m.hidden_size); }
};

TEST(CrossNodeTraffic, ExpertAllToAllSendsAnEighthOfItsBufferToEachOtherMember) {
  MixtralOnTwoNodes x;
  x.c.moe.dispatcher = TokenDispatcher::AllToAll;
  const CrossNodeTraffic t = cross_node_traffic(x.m, x.cluster, x.c);
  // Per layer and microbatch four all-to-alls (dispatch and combine, forward and backward), 32
  // layers: 128. In each, every member sends 1/8 of its buffer to each of the 4 members on the
  // other node: half of it leaves; 8 members: 4 buffers cross between the nodes.
  EXPECT_NEAR(bytes_of(t, TrafficKind::ExpertParallel), 128 * 4 * x.buffer(), 1e-6 * x.buffer());
  for (const NodeLink& l : t.links) EXPECT_TRUE(l.node_a == 0 && l.node_b == 1);
}

TEST(CrossNodeTraffic, FlexDispatcherSendsOneCopyPerOtherNodeATokenReaches) {
  MixtralOnTwoNodes x;
  x.c.moe.dispatcher = TokenDispatcher::Flex;
  const CrossNodeTraffic t = cross_node_traffic(x.m, x.cluster, x.c);
  // A token's two experts are two of the 8 EP ranks (one expert each): the buffer holds 2 copies
  // per token, as the all-to-all's top-2 rows. The other node holds 4 of the 8 experts, so it is
  // reached with probability 1 - C(4,2)/C(8,2) = 22/28, by one network copy: 11/28 of the
  // buffer leaves. 128 exchanges, 8 members.
  EXPECT_NEAR(bytes_of(t, TrafficKind::ExpertParallel), 128 * 8 * x.buffer() * 11.0 / 28.0, 1e-6 * x.buffer());
}

TEST(CrossNodeTraffic, ExpertGroupsInsideOneNodeLeaveNothingButTheirExpertGradients) {
  MixtralOnTwoNodes x;
  x.c.moe.dispatcher = TokenDispatcher::AllToAll;
  x.c.ep = 4;  // EP groups 0-3 and 4-7, each on its node; expert DP 2 pairs rank r with r + 4
  const CrossNodeTraffic t = cross_node_traffic(x.m, x.cluster, x.c);
  EXPECT_EQ(bytes_of(t, TrafficKind::ExpertParallel), 0.0);
  // Each rank's experts: 32 layers x 2 local experts x 3 matrices of 4,096 x 14,336, fp32
  // gradients, all-reduced over its pair (each sends one buffer to the other): 4 pairs.
  const double expert_grads = 4.0 * 32 * 2 * 3 * 4096.0 * 14336.0;
  // The dense gradients ring over DP 8 in rank order, crossing between the nodes twice with
  // 2(n-1)/n = 1.75 buffers each.
  const double dense_grads =
      4.0 * static_cast<double>(stage_parameters(x.m, x.c, 0) - stage_expert_parameters(x.m, x.c, 0));
  EXPECT_DOUBLE_EQ(bytes_of(t, TrafficKind::DataParallel), 4 * 2 * expert_grads + 2 * 1.75 * dense_grads);
}

}  // namespace
}  // namespace cc
