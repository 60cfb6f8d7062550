// Context parallelism in the cost and memory model: each CP rank's ops, collectives and bytes
// against hand counts from Transformer Engine's context_parallel.py (AttnFuncWithCPAndKVP2P,
// AttnFuncWithCPAndKVAllGather, AttnFuncWithCPAndQKVOA2A) and Megatron-Core's DP x CP groups.
#include <gtest/gtest.h>

#include <string>

#include "sim/analytic_costs.h"
#include "sim/cross_node_traffic.h"
#include "sim/iteration_costs.h"
#include "sim/layer_program.h"
#include "sim/memory_model.h"
#include "sim/memory_timeline.h"
#include "sim/presets.h"
#include "sim/simulator.h"
#include "sim/step_plan.h"

namespace cc {
namespace {

// Llama 3 8B: h 4096, 32 query heads and 8 key/value heads of 128, FFN 14336, vocab 128256.
ParallelConfig cp_config(int tp, int cp, CpCommType type = CpCommType::P2P) {
  ParallelConfig c;
  c.tp = tp;
  c.cp = cp;
  c.cp_comm_type = type;
  c.attention = AttentionKernel::Flash;
  return c;
}

struct Census {
  int count = 0;
  double bytes = 0, flops = 0;
};

// The ops named `name` in a program: how many, their bytes (collectives) or FLOPs (kernels).
Census census(const OpProgram& program, const std::string& name) {
  Census c;
  for (const ProgramStep& step : program) {
    if (step.is_collective ? name != step.comm.name : name != step.op.name) continue;
    ++c.count;
    c.bytes += step.is_collective ? step.comm.bytes : 0;
    c.flops += step.is_collective ? 0 : step.op.flops;
  }
  return c;
}

TEST(ContextParallelProgram, RingSendsOneKVChunkBesideEachStepAndSplitsTheCausalWorkEvenly) {
  ModelSpec m = load_model("llama3-8b");
  const ParallelConfig c = cp_config(2, 4);
  const LayerShape x = make_layer_shape(m, c, GroupPlacement{2, 1, 2});
  const LayerShape whole = make_layer_shape(m, cp_config(2, 1), GroupPlacement{2, 1, 2});
  EXPECT_EQ(x.tokens, 8192 / 4);  // every GEMM row is a local token
  // K,V of 2048 tokens, 4 of the 8 KV heads (TP 2) of 128, bf16: 2 x 2048 x 512 x 2 B.
  const double kv = 2.0 * 2048 * 512 * 2;
  EXPECT_DOUBLE_EQ(x.kv_bytes(), kv);

  const OpProgram forward = layer_forward(x, Phase::Forward);
  const Census sends = census(forward, "cp.kv_send_recv");
  EXPECT_EQ(sends.count, 3);  // CP - 1
  EXPECT_DOUBLE_EQ(sends.bytes, 3 * kv);
  for (const ProgramStep& step : forward)
    if (step.is_collective && std::string(step.comm.name) == "cp.kv_send_recv") {
      EXPECT_GE(step.hides_behind, 0);
      EXPECT_EQ(forward[static_cast<std::size_t>(step.hides_behind)].op.kind, OpKind::FlashAttention);
      EXPECT_EQ(step.comm.runs_on, CommGroup::ContextRing);
    }
  // Four steps of equal work; together 1/CP of the whole sequence's causal attention.
  const Census attention = census(forward, "flash_attention");
  EXPECT_EQ(attention.count, 4);
  EXPECT_DOUBLE_EQ(attention.flops, census(layer_forward(whole, Phase::Forward), "flash_attention").flops / 4);
  // The GEMMs run on s/CP tokens: 1/CP of the FLOPs without CP.
  EXPECT_DOUBLE_EQ(census(forward, "fc1").flops, census(layer_forward(whole, Phase::Forward), "fc1").flops / 4);

  // Backward: K,V first, K,V with dK,dV twice, dK,dV alone last (TE's p2p_comm_buffers).
  const OpProgram backward = layer_backward(x);
  const Census back_sends = census(backward, "cp.kv_send_recv");
  EXPECT_EQ(back_sends.count, 4);
  EXPECT_DOUBLE_EQ(back_sends.bytes, (1 + 2 + 2 + 1) * kv);
  EXPECT_DOUBLE_EQ(census(backward, "flash_attention.backward").flops,
                   census(layer_backward(whole), "flash_attention.backward").flops / 4);
}

TEST(ContextParallelProgram, CpOfOneKeepsTheProgramAsItWas) {
  ModelSpec m = load_model("llama3-8b");
  const LayerShape x = make_layer_shape(m, cp_config(2, 1), GroupPlacement{2, 1, 2});
  for (const OpProgram& p : {layer_forward(x, Phase::Forward), layer_backward(x)})
    for (const ProgramStep& step : p) {
      if (step.is_collective) EXPECT_FALSE(is_context_parallel(step.comm.runs_on)) << step.comm.name;
      else EXPECT_EQ(std::string(step.op.name).rfind("cp.", 0), std::string::npos) << step.op.name;
    }
  EXPECT_EQ(census(layer_forward(x, Phase::Forward), "flash_attention").count, 1);
}

TEST(ContextParallelProgram, AllToAllTradesTheSequenceSplitForAHeadSplit) {
  ModelSpec m = load_model("llama3-8b");
  const LayerShape x = make_layer_shape(m, cp_config(1, 4, CpCommType::AllToAll), GroupPlacement{1, 1, 1});
  const OpProgram forward = layer_forward(x, Phase::Forward);
  // Q,K,V of 2048 tokens (4096 + 2 x 1024 wide) out, the 4096-wide output back, bf16.
  EXPECT_DOUBLE_EQ(census(forward, "cp.qkv_all_to_all").bytes, 2048.0 * 6144 * 2);
  EXPECT_DOUBLE_EQ(census(forward, "cp.output_all_to_all").bytes, 2048.0 * 4096 * 2);
  EXPECT_EQ(census(forward, "cp.kv_send_recv").count, 0);
  // One attention of the whole 8192-token sequence over 32 / 4 = 8 heads.
  for (const ProgramStep& step : forward)
    if (!step.is_collective && step.op.kind == OpKind::FlashAttention) {
      EXPECT_EQ(step.op.m, 8192);
      EXPECT_EQ(step.op.batch, 8);
    }
  const OpProgram backward = layer_backward(x);
  EXPECT_DOUBLE_EQ(census(backward, "cp.output_grad_all_to_all").bytes, 2048.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(census(backward, "cp.qkv_grad_all_to_all").bytes, 2048.0 * 6144 * 2);
}

TEST(ContextParallelProgram, HierarchicalRunsTheAllToAllInsideGroupsAndTheRingAcrossThem) {
  ModelSpec m = load_model("llama3-8b");
  ParallelConfig c = cp_config(1, 8, CpCommType::AllToAllP2P);
  c.cp_a2a_size = 2;
  const LayerShape x = make_layer_shape(m, c, place_layer_groups(c, 8));
  EXPECT_EQ(x.cp_all_to_all_group.size, 2);
  EXPECT_EQ(x.cp_ring_group.size, 4);
  const OpProgram forward = layer_forward(x, Phase::Forward);
  EXPECT_EQ(census(forward, "cp.qkv_all_to_all").count, 1);
  EXPECT_EQ(census(forward, "cp.kv_send_recv").count, 3);  // ring of 8 / 2
  // The ring's chunk: 1024 local tokens x 2 after the all-to-all, 8 / 2 KV heads: as many bytes.
  EXPECT_DOUBLE_EQ(census(forward, "cp.kv_send_recv").bytes, 3 * (2.0 * 2048 * 512 * 2));
}

TEST(ContextParallelProgram, AllGatherGathersTheWholeSequenceAndReduceScattersItsGradients) {
  ModelSpec m = load_model("llama3-8b");
  const LayerShape x = make_layer_shape(m, cp_config(1, 4, CpCommType::AllGather), GroupPlacement{1, 1, 1});
  // K and V of all 8192 tokens, 1024 wide, bf16.
  const double gathered = 2.0 * 8192 * 1024 * 2;
  EXPECT_DOUBLE_EQ(census(layer_forward(x, Phase::Forward), "cp.kv_all_gather").bytes, gathered);
  EXPECT_DOUBLE_EQ(census(layer_backward(x), "cp.kv_all_gather").bytes, gathered);
  EXPECT_DOUBLE_EQ(census(layer_backward(x), "cp.kv_grad_reduce_scatter").bytes, gathered);
}

TEST(ContextParallelCosts, AllToAllAndCrossNodeRingStepsAtHandCountedTimes) {
  ClusterSpec cluster = load_cluster("dgx-h100");
  AnalyticParams p;  // the documented defaults, not the fitted file
  const AnalyticCosts costs(cluster, Precision::BF16, p);
  const double nvlink = 450e9 * p.nvlink_fraction, nic = 50e9 * p.network_fraction;
  const double bytes = 64e6;
  // Inside a node of 8: each rank sends 7/8 of its buffer over NVLink.
  const CollectiveOp inside{"a2a", CollectiveKind::AllToAll, Phase::Forward, bytes, {8, 1, 8}};
  EXPECT_NEAR(costs.collective(inside).seconds, 2e-6 + 7.0 / 8 * bytes / nvlink, 1e-12);
  // 16 ranks on 2 nodes: 8 of 16 shares leave each rank through the node's 8 NICs.
  const CollectiveOp across{"a2a", CollectiveKind::AllToAll, Phase::Forward, bytes, {16, 2, 8}};
  EXPECT_NEAR(costs.collective(across).seconds, 5e-6 + 8 * 8 * (bytes / 16) / (8 * nic), 1e-12);
  // A ring step between nodes: the crossing hop leaves through one NIC.
  const CollectiveOp ring{"ring", CollectiveKind::SendRecv, Phase::Forward, bytes, {16, 2, 8}};
  EXPECT_NEAR(costs.collective(ring).seconds, 5e-6 + bytes / nic, 1e-12);
}

TEST(ContextParallelMemory, EveryActivationTermIsOfTheLocalTokens) {
  ModelSpec m = load_model("llama3-8b");
  m.seq_length = 32768;
  ParallelConfig c = cp_config(8, 4);
  c.sequence_parallel = true;
  // Per token, TP 8 with SP (Korthikanti's 34/t generalised): norms and inputs 4·2·4096 = 32768
  // B, Q,K,V 2·6144, projection input 2·4096, SwiGLU 3·2·14336: 106496 B; all / 8; plus the
  // fp32 log-sum-exp of 4 heads: 16 B. 8192 local tokens.
  const double per_token = (32768.0 + 106496.0) / 8 + 16;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c), 8192 * per_token);
  // The last stage's logits in fp32 and the output layer's inputs: 8192 tokens, V/8.
  const StageActivations a = stage_activations(m, c, 0);
  EXPECT_DOUBLE_EQ(a.fixed, 8192.0 * (2 * 4096 / 8 + 2 * 4096 / 8 + 4.0 * 128256 / 8));
  EXPECT_DOUBLE_EQ(a.loss_workspace, 8192.0 * 2 * 128256 / 8);
  // p2p: K,V chunk of 8192 tokens x 128 x 2 B x 2 = 4 MiB; forward keeps the 3 received, backward
  // holds 4 chunks' worth and dQ (8192 x 512 x 2 B = 8 MiB): 24 MiB.
  const double kv = 8192.0 * 128 * 2 * 2, dq = 8192.0 * 512 * 2;
  EXPECT_DOUBLE_EQ(a.context_parallel_buffers, std::max(3 * kv, 4 * kv + dq));
  c.cp_comm_type = CpCommType::AllGather;
  EXPECT_DOUBLE_EQ(stage_activations(m, c, 0).context_parallel_buffers, 2 * 4 * kv);  // gathered K,V and dK,dV
  c.cp_comm_type = CpCommType::AllToAll;  // 4 heads over CP 4: the exchanged Q,K,V (768 wide) and output
  EXPECT_DOUBLE_EQ(stage_activations(m, c, 0).context_parallel_buffers, 8192.0 * 768 * 2 + dq);
}

TEST(ContextParallelMemory, TheDistributedOptimizerShardsOverDataTimesContextRanks) {
  const ModelSpec m = load_model("llama3-8b");
  ParallelConfig c = cp_config(8, 4);
  c.dp = 2;
  c.global_batch = 2;
  c.distributed_optimizer = true;
  const MemoryReport r = memory_model(m, c);
  EXPECT_DOUBLE_EQ(r.peak().optimizer, 12.0 * static_cast<double>(stage_parameters(m, c, 0)) / (2 * 4));
}

TEST(ContextParallelCosts, GradientsReduceOverDataTimesContextRanks) {
  // TP 8, CP 4, DP 2 on 8-GPU nodes: rank 0's DP x CP group is ranks 0, 8, ..., 56, one per node.
  const ModelSpec m = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  ParallelConfig c = cp_config(8, 4);
  c.dp = 2;
  c.global_batch = 2;
  const AnalyticCosts costs(cluster, c.precision);
  const IterationCosts priced = price_iteration(m, cluster, c, costs);
  const double grads = 4.0 * static_cast<double>(stage_parameters(m, c, 0));  // fp32 main gradients
  EXPECT_DOUBLE_EQ(priced.grad_reduce_s[0],
                   costs.collective({"dp.grad_reduce", CollectiveKind::AllReduce, Phase::Backward, grads, {8, 8, 1}})
                       .seconds);
  EXPECT_DOUBLE_EQ(priced.bucket_params, 40e6);  // max(40M, 1M x 8)
}

TEST(ContextParallelSimulation, ExposedCpTimeIsInTheBreakdownAndEveryPassHasACpLaneEvent) {
  const ModelSpec m = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  ParallelConfig c = cp_config(2, 8);  // the CP ring spans two nodes
  c.global_batch = 1;
  SimOptions o;
  o.keep_timeline = true;
  const SimResult r = simulate(m, cluster, c, AnalyticCosts(cluster, c.precision), o);
  EXPECT_GT(r.breakdown.cp_comm, 0);
  EXPECT_NEAR(r.breakdown.total(), r.iteration_time_s, 1e-9);
  int passes = 0, cp_events = 0;
  for (const TimelineEvent& e : r.timeline) {
    passes += e.lane == StreamLane::Compute && (e.kind == TaskKind::Forward || e.kind == TaskKind::Backward);
    cp_events += e.lane == StreamLane::Cp;
  }
  EXPECT_EQ(cp_events, passes);
  EXPECT_STREQ(to_string(StreamLane::Cp), "cp");
}

TEST(ContextParallelMemory, TheMemoryCurvePeaksAtTheModelsTotalWithTheCpBuffers) {
  ModelSpec m = load_model("llama3-8b");
  m.num_layers = 4;
  const ClusterSpec cluster = load_cluster("dgx-h100");
  for (auto recompute : {RecomputeGranularity::None, RecomputeGranularity::Full}) {
    ParallelConfig c = cp_config(2, 2);
    c.pp = 2;
    c.global_batch = 8;
    c.recompute = recompute;
    SimOptions o;
    o.keep_timeline = true;
    const SimResult r = simulate(m, cluster, c, AnalyticCosts(cluster, c.precision), o);
    for (const StageMemoryCurve& curve : memory_timeline(r)) {
      const double total = r.memory.stages[static_cast<std::size_t>(curve.stage)].bytes.total();
      EXPECT_NEAR(curve.peak_bytes, total, 1e-9 * total) << "stage " << curve.stage;
    }
  }
}

TEST(ContextParallelTraffic, RingStepsCrossNodesOncePerNodeBoundary) {
  // TP 1, CP 16 on 8-GPU nodes: one CP group over two nodes, ranks 0-7 and 8-15. Per layer the
  // forward ring sends 15 K,V chunks, the backward 16 sends worth 1 + 2 x 14 + 1 chunks, and
  // every ring step crosses the node boundary twice (7 -> 8 and 15 -> 0).
  ModelSpec m = load_model("llama3-8b");
  m.num_layers = 2;
  const ClusterSpec cluster = load_cluster("dgx-h100");
  ParallelConfig c = cp_config(1, 16);
  c.global_batch = 1;
  const CrossNodeTraffic t = cross_node_traffic(m, cluster, c);
  const double kv = 2.0 * 512 * 1024 * 2;  // 512 local tokens, K and V 1024 wide, bf16
  const double per_layer = 15 * kv + (1 + 2 * 14 + 1) * kv;
  EXPECT_DOUBLE_EQ(t.total.at(TrafficKind::ContextParallel), 2 * 2 * per_layer);
}

}  // namespace
}  // namespace cc
