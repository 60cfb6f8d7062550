// The host side of a pass (a two-machine flow shop: host issues, device runs), tensor-parallel
// communication overlapped with GEMMs (--tp-comm-overlap), and Megatron-Core's interleaved
// schedule whose sends do not block. Expected values are hand-derived beside each assertion.
#include <gtest/gtest.h>

#include <string>

#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/iteration_costs.h"
#include "sim/layer_program.h"
#include "sim/layout_validation.h"
#include "sim/presets.h"
#include "sim/simulator.h"

namespace cc {
namespace {

// One op of a program: `host` seconds to issue, `device` seconds to run.
ProgramCost op(double host, double device) {
  ProgramCost p;
  p.host_s = host;
  p.compute_s = device;
  p.span_s = host + device;
  return p;
}

TEST(FlowShop, SpanIsTheLongestHostPrefixPlusDeviceSuffix) {
  // Ops (host, device): (1, 5), (3, 1), (3, 1). Host 7, device 7.
  // span = max over k of host(1..k) + device(k..3) = max(1 + 7, 4 + 2, 7 + 1) = 8.
  ProgramCost p = op(1, 5);
  p += op(3, 1);
  p += op(3, 1);
  EXPECT_DOUBLE_EQ(p.host_s, 7);
  EXPECT_DOUBLE_EQ(p.device(), 7);
  EXPECT_DOUBLE_EQ(p.span_s, 8);
}

TEST(FlowShop, HostAheadHidesItsCostDeviceAheadHidesNothing) {
  // A big kernel then small ones: the host issues the small ones while the big one runs.
  // (1, 10), (2, 0.5) x 4: host 9, device 12; span = 1 + 12 = 13 (k = 1).
  ProgramCost device_bound = op(1, 10);
  for (int i = 0; i < 4; ++i) device_bound += op(2, 0.5);
  EXPECT_DOUBLE_EQ(device_bound.span_s, 13);
  // Small ones only: the device waits for each. (2, 0.5) x 4: span = 8 + 0.5 = 8.5.
  const ProgramCost host_bound = op(2, 0.5).repeated(4);
  EXPECT_DOUBLE_EQ(host_bound.span_s, 8.5);
}

TEST(FlowShop, RepeatingAddsTheSlowerMachinePerRepetition) {
  // One layer (1, 5), (3, 1): host 4, device 6, span max(1 + 6, 4 + 1) = 7. Three layers:
  // 7 + 2 * max(4, 6) = 19; straight composition agrees.
  ProgramCost layer = op(1, 5);
  layer += op(3, 1);
  ProgramCost three = layer;
  three += layer;
  three += layer;
  EXPECT_DOUBLE_EQ(layer.repeated(3).span_s, 19);
  EXPECT_DOUBLE_EQ(three.span_s, 19);
  EXPECT_DOUBLE_EQ(layer.repeated(3).host_s, 12);
  EXPECT_DOUBLE_EQ(layer.repeated(0).span_s, 0);
}

TEST(FlowShop, HostOnlyWorkDelaysWhatFollows) {
  // 2 s of Python, then (1, 5): span = 2 + 1 + 5 = 8.
  ProgramCost p = ProgramCost::host_only(2);
  p += op(1, 5);
  EXPECT_DOUBLE_EQ(p.span_s, 8);
  EXPECT_DOUBLE_EQ(p.device(), 5);
}

ModelSpec tiny_model() {
  ModelSpec m;
  m.name = "tiny-test";
  m.num_layers = 4;
  m.hidden_size = 256;
  m.num_attention_heads = 4;
  m.num_query_groups = 4;
  m.ffn_hidden_size = 1024;
  m.vocab_size = 1024;
  m.seq_length = 128;
  return m;
}

TEST(HostBound, ASmallModelWaitsForTheHostAndTheBreakdownSaysSo) {
  // 1 ms of host time per kernel dwarfs every kernel of a 256-wide model on an A100: each pass
  // takes its host time, and the breakdown books the wait as host, summing to the iteration.
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  AnalyticParams p;
  p.host_launch_s = 1e-3;
  const AnalyticCosts costs(cluster, Precision::BF16, p);
  ParallelConfig c;
  c.global_batch = 2;
  const ModelSpec m = tiny_model();
  const IterationCosts priced = price_iteration(m, cluster, c, costs);
  const PassCost& forward = priced.chunks[0][0].forward;
  EXPECT_GT(forward.host_s, 10 * forward.device());
  // PP 1: no sync between passes, so the pass costs its host time exactly.
  EXPECT_DOUBLE_EQ(forward.total(), forward.host_s);
  const SimResult r = simulate(m, cluster, c, costs);
  EXPECT_GT(r.breakdown.host, 0.5 * r.iteration_time_s);
  EXPECT_NEAR(r.breakdown.total(), r.iteration_time_s, 1e-9);
  // No host cost: the same run is device-bound and books no host wait.
  const SimResult device_only = simulate(m, cluster, c, AnalyticCosts(cluster, Precision::BF16, AnalyticParams{}));
  EXPECT_EQ(device_only.breakdown.host, 0.0);
  EXPECT_LT(device_only.iteration_time_s, r.iteration_time_s / 5);
}

TEST(HostBound, APassAfterABlockingExchangeStartsWithHostAndDeviceIdle) {
  // Under 1F1B with blocking sends (Megatron's batched p2p ends in a device sync) every pass
  // starts from a standing start: its span. Without a pipeline the host runs ahead, and a
  // pass costs max(host, device) alone.
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  AnalyticParams p;
  p.host_launch_s = 20e-6;
  const AnalyticCosts costs(cluster, Precision::BF16, p);
  ParallelConfig c;
  c.global_batch = 4;
  const ModelSpec m = tiny_model();
  const PassCost flat = price_iteration(m, cluster, c, costs).chunks[0][0].forward;
  EXPECT_DOUBLE_EQ(flat.total(), std::max(flat.host_s, flat.device()));
  c.pp = 2;
  ASSERT_TRUE(pipeline_sends_block(c));
  const PassCost synced = price_iteration(m, cluster, c, costs).chunks[0][0].forward;
  EXPECT_GT(synced.total(), std::max(synced.host_s, synced.device()));
}

ParallelConfig sp_layout() {
  ParallelConfig c;
  c.tp = 8;
  c.sequence_parallel = true;
  c.micro_batch = 1;
  c.global_batch = 8;
  c.attention = AttentionKernel::Flash;
  return c;
}

TEST(TpCommOverlap, HidesSequenceParallelCollectivesBehindTheirGemms) {
  // GPT-3 175B on TP 8 with SP: each forward all-gather and reduce-scatter (50 MB) runs beside
  // the GEMM that consumes or produces it; only what outlasts the GEMM, plus the interference
  // share, stays exposed.
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const AnalyticCosts costs(cluster, Precision::BF16, AnalyticParams{});
  const ModelSpec m = load_model("gpt3-175b");
  ParallelConfig c = sp_layout();
  const LayerCosts blocking = price_layers(m, cluster, c, costs);
  c.tp_comm_overlap = true;
  const LayerCosts overlapped = price_layers(m, cluster, c, costs);
  EXPECT_DOUBLE_EQ(overlapped.forward.compute_s, blocking.forward.compute_s);
  EXPECT_LT(overlapped.forward.comm_exposed_s, 0.5 * blocking.forward.comm_exposed_s);
  EXPECT_LT(overlapped.backward.comm_exposed_s, blocking.backward.comm_exposed_s);
  EXPECT_GT(overlapped.forward.comm_exposed_s, 0.0);  // interference is not free
}

TEST(TpCommOverlap, NeedsSequenceParallelismAsInMegatron) {
  ParallelConfig c = sp_layout();
  c.sequence_parallel = false;
  c.tp_comm_overlap = true;
  try {
    validate(c, load_model("gpt3-175b"), load_cluster("dgx-h100"), 8);
    FAIL() << "TP comm overlap without SP was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("--tp-comm-overlap needs --sequence-parallel"), std::string::npos) << e.what();
  }
}

TEST(InterleavedSends, MegatronCoreDoesNotBlockTheSenderTheStacksOf2021Do) {
  // Megatron-Core's interleaved schedule posts its sends (--overlap-p2p-communication, on by
  // default); Megatron-LM of 2021 waited on each batched exchange. Same layout, same costs:
  // the blocking stack can only be slower, and 1F1B without interleaving blocks in both.
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  const AnalyticCosts costs(cluster, Precision::BF16, AnalyticParams{});
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelConfig c;
  c.tp = 2;
  c.pp = 4;
  c.global_batch = 16;
  c.virtual_stages = 2;
  c.framework = "megatron-core";
  EXPECT_FALSE(pipeline_sends_block(c));
  const double core = simulate(m, cluster, c, costs).iteration_time_s;
  c.framework = "megatron-2021";
  EXPECT_TRUE(pipeline_sends_block(c));
  const double legacy = simulate(m, cluster, c, costs).iteration_time_s;
  EXPECT_GT(legacy, core);
  c.virtual_stages = 1;
  c.framework = "megatron-core";
  EXPECT_TRUE(pipeline_sends_block(c));
}

}  // namespace
}  // namespace cc
