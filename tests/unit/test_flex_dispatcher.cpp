// The flex dispatcher (DeepEP, HybridEP): a token is sent once to each EP rank holding one of its
// experts and once over the network to each other node among them, relayed there over NVLink.
// The expected counts are checked against hand counts and against a simulated router; the price
// against a hand count; the switches against Megatron-Core's rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sim/analytic_costs.h"
#include "sim/expert_routing.h"
#include "sim/layer_program.h"
#include "sim/layout_validation.h"
#include "sim/parallel_config.h"
#include "sim/presets.h"
#include "sim/step_plan.h"
#include "sim/units.h"
#include "refusal.h"
#include "program_steps.h"
#include "small_models.h"

namespace cc {
namespace {

MoeSpec routing(int experts, int topk, int groups = 0, int group_topk = 0) {
  MoeSpec m;
  m.num_experts = experts;
  m.router_topk = topk;
  m.router_num_groups = groups;
  m.router_group_topk = group_topk;
  return m;
}

TEST(ExpertRouting, HandCounts) {
  // One pick reaches one holder; one expert per holder makes every pick a holder of its own.
  EXPECT_DOUBLE_EQ(expected_holders_reached(routing(64, 1), 8), 1.0);
  EXPECT_DOUBLE_EQ(expected_holders_reached(routing(16, 4), 16), 4.0);
  // 8 experts over 4 holders, top-2: a holder is missed with C(6,2)/C(8,2) = 15/28.
  EXPECT_NEAR(expected_holders_reached(routing(8, 2), 4), 4.0 * 13 / 28, 1e-12);
  // Groups of 2 experts, 2 of 4 picked, 2 groups per holder (2 holders): the holder has j of the
  // picked groups with chance 1/6, 4/6, 1/6 for j = 0, 1, 2, and with one it is missed when both
  // picks fall in the other picked group, C(2,2)/C(4,2) = 1/6: 2 x (4/6 x 5/6 + 1/6) = 13/9,
  // below the unlimited 2 x (1 - C(4,2)/C(8,2)) = 11/7.
  EXPECT_NEAR(expected_holders_reached(routing(8, 2, 4, 2), 2), 13.0 / 9, 1e-12);
  EXPECT_NEAR(expected_holders_reached(routing(8, 2), 2), 11.0 / 7, 1e-12);
  // Two groups of 4, one picked, over 4 holders of 2: both picks in one holder with chance
  // 2 x C(2,2)/C(4,2) = 1/3, so 1/3 x 1 + 2/3 x 2 = 5/3 holders.
  EXPECT_NEAR(expected_holders_reached(routing(8, 2, 2, 1), 4), 5.0 / 3, 1e-12);
}

// DeepSeek-V3's router over EP 64 on 8 nodes, drawn: M of the G groups uniformly, then top-k
// distinct experts among theirs uniformly; the ranks and nodes reached, averaged.
TEST(ExpertRouting, MatchesADrawnRouterForDeepSeekV3) {
  const MoeSpec m = routing(256, 8, 8, 4);
  std::mt19937 rng(7);
  std::vector<int> groups(8), experts;
  double ranks = 0, nodes = 0;
  const int draws = 40000;
  for (int t = 0; t < draws; ++t) {
    std::iota(groups.begin(), groups.end(), 0);
    std::shuffle(groups.begin(), groups.end(), rng);
    experts.clear();
    for (int g = 0; g < 4; ++g)
      for (int i = 0; i < 32; ++i) experts.push_back(groups[static_cast<std::size_t>(g)] * 32 + i);
    std::shuffle(experts.begin(), experts.end(), rng);
    std::set<int> rank_set, node_set;
    for (int k = 0; k < 8; ++k) {
      rank_set.insert(experts[static_cast<std::size_t>(k)] / 4);   // 256 / 64 experts per rank
      node_set.insert(experts[static_cast<std::size_t>(k)] / 32);  // 8 ranks of 4 per node
    }
    ranks += static_cast<double>(rank_set.size());
    nodes += static_cast<double>(node_set.size());
  }
  // 40,000 draws: the means' standard errors are below 0.005.
  EXPECT_NEAR(expected_holders_reached(m, 64), ranks / draws, 0.02);
  EXPECT_NEAR(expected_holders_reached(m, 8), nodes / draws, 0.02);
  EXPECT_LE(expected_holders_reached(m, 8), 4.0);  // node-limited: at most M nodes
}

ModelSpec small_moe() {
  ModelSpec m = test::small_base("small-moe");
  m.moe.num_experts = 8;
  m.moe.router_topk = 2;
  m.moe.ffn_hidden_size = 32;
  return m;
}

ParallelConfig flex(int ep, int dp) {
  ParallelConfig c;
  c.dp = dp;
  c.ep = ep;
  c.micro_batch = 1;
  c.global_batch = dp;
  c.moe.dispatcher = TokenDispatcher::Flex;
  c.moe.load_imbalance = 1.0;
  return c;
}

using test::find_step;

TEST(FlexDispatcher, SendsOneCopyPerRankReachedAndRelaysAcrossNodes) {
  // EP 2 on one node: top-2 of 8 experts reach 11/7 of the 2 ranks on average; 16 tokens of
  // h 64 in BF16. Nothing leaves the node, nothing is gathered over ETP.
  const StepPlan one_node = step_plan(small_moe(), flex(2, 2));
  const ProgramStep* dispatch = find_step(one_node.ops.moe_forward, "moe.dispatch_all_to_all");
  ASSERT_NE(dispatch, nullptr);
  EXPECT_EQ(dispatch->comm.kind, CollectiveKind::AllToAll);
  EXPECT_NEAR(dispatch->comm.bytes, 2.0 * 16 * 64 * 11 / 7, 1e-9);
  EXPECT_EQ(dispatch->comm.node_relay_share, 0.0);
  ASSERT_NE(find_step(one_node.ops.moe_forward, "moe.combine_all_to_all"), nullptr);
  ASSERT_NE(find_step(one_node.ops.moe_backward, "moe.dispatch_grad_all_to_all"), nullptr);

  // EP 16 over DP 16 spans 2 nodes of 8 GPUs; with 16 experts, one per rank, top-2 reaches 2
  // ranks (distinct experts), and nodes
  // 2 x (1 - C(8,2)/C(16,2)) = 2 x 92/120, of which the other node is half.
  ModelSpec m = small_moe();
  m.moe.num_experts = 16;
  const ParallelConfig c = flex(16, 16);
  const LayerOps two_nodes = layer_ops(make_layer_shape(m, c, place_layer_groups(c, 8)), RecomputeScope::Nothing);
  const ProgramStep* wide = find_step(two_nodes.moe_forward, "moe.dispatch_all_to_all");
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->comm.group.nodes, 2);
  EXPECT_NEAR(wide->comm.bytes, 2.0 * 16 * 64 * 2, 1e-9);
  EXPECT_NEAR(wide->comm.node_relay_share, (2.0 * 92 / 120 / 2) / 2, 1e-12);
}

TEST(FlexDispatcher, ARelayedAllToAllIsPacedByItsNicShareOrItsNvlinkForwarding) {
  const ClusterSpec cluster = load_cluster("dgx-h100");  // one 50 GB/s NIC per GPU, non-blocking
  ASSERT_EQ(cluster.nics_per_node, cluster.gpus_per_node);
  const AnalyticParams p;
  const AnalyticCosts costs(cluster, Precision::BF16, p);
  const double bytes = 64e6;  // one copy per rank reached
  CollectiveOp op{"moe.dispatch_all_to_all", CollectiveKind::AllToAll, Phase::Forward, bytes, {16, 2, 8},
                  CommGroup::Expert, 0.4};
  const double nic = cluster.inter_node.bandwidth_gbs * kGB * p.network_fraction;
  const double nvlink = cluster.intra_node.bandwidth_gbs * kGB * p.nvlink_fraction;
  const double latency = cluster.inter_node.latency_us * 1e-6;
  // Each GPU sends 40% of its copies over its own NIC; 7/8 of them cross NVLink once.
  EXPECT_NEAR(costs.collective(op).seconds, latency + std::max(0.4 * bytes / nic, bytes * 7 / 8 / nvlink), 1e-12);
  // A plain all-to-all of as many bytes sends the other node's half of them over the NIC.
  op.node_relay_share = 0;
  EXPECT_NEAR(costs.collective(op).seconds, latency + std::max(0.5 * bytes / nic, bytes * 7 / 16 / nvlink), 1e-12);
}

TEST(FlexDispatcher, SwitchesFollowMegatronCore) {
  const ModelSpec m = small_moe();
  EXPECT_EQ(refusal_of([&] { validate_layout(flex(2, 2), m, 2); }).message, "(no error)");
  ParallelConfig overlap = flex(2, 2);
  overlap.moe.overlap_ep_comm = true;  // alltoall or flex, as Megatron-Core allows
  EXPECT_EQ(refusal_of([&] { validate_layout(overlap, m, 2); }).message, "(no error)");

  ParallelConfig etp = flex(2, 4);
  etp.etp = 2;
  const Refusal r = refusal_of([&] { validate_layout(etp, m, 4); });
  EXPECT_EQ(r.field, "--moe-token-dispatcher-type");
  EXPECT_NE(r.message.find("flex with expert tensor parallel size 2 is not modelled"), std::string::npos);

  ParallelConfig ep1 = flex(1, 2);  // DeepEP: "DeepEP dispatcher requires TPxEP > 1"
  EXPECT_NE(refusal_of([&] { validate_layout(ep1, m, 2); }).message.find("flex with the deepep backend needs "
                                                                         "--expert-model-parallel-size > 1"),
            std::string::npos);
  ep1.moe.flex_backend = FlexBackend::HybridEP;
  EXPECT_EQ(refusal_of([&] { validate_layout(ep1, m, 2); }).message, "(no error)");

  ParallelConfig padded = flex(2, 2);
  padded.moe.capacity_factor = 1.0;
  padded.moe.pad_to_capacity = true;
  EXPECT_EQ(refusal_of([&] { validate_layout(padded, m, 2); }).field, "--moe-pad-expert-input-to-capacity");

  ParallelConfig stray = flex(2, 2);
  stray.moe.dispatcher = TokenDispatcher::AllToAll;
  stray.moe.flex_backend = FlexBackend::HybridEP;
  EXPECT_EQ(refusal_of([&] { validate_layout(stray, m, 2); }).field, "--moe-flex-dispatcher-backend");

  const Refusal nccl = refusal_of([] { flex_backend_from("ncclep", "the run"); });
  EXPECT_NE(nccl.message.find("ncclep (NCCL EP through Transformer Engine) is not modelled"), std::string::npos);
  EXPECT_EQ(token_dispatcher_from("flex", "the run"), TokenDispatcher::Flex);
}

}  // namespace
}  // namespace cc
