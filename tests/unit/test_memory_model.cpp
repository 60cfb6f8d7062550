// Korthikanti et al. 2022, Table 2: activation bytes per transformer layer, reproduced
// exactly for each parallelism/recompute combination and each of the paper's models.
#include <gtest/gtest.h>

#include "sim/memory_model.h"
#include "sim/presets.h"
#include "sim/units.h"

namespace cc {
namespace {

struct Table2Row {
  const char* name;
  int tp;
  bool sp;
  RecomputeGranularity recompute;
  // Formula from Table 2, in units of s·b·h bytes; `a` heads, `s` sequence, `h` hidden.
  double (*formula)(double a, double s, double h, double t);
};

const Table2Row kRows[] = {
    {"no parallelism", 1, false, RecomputeGranularity::None,
     [](double a, double s, double h, double) { return 34 + 5 * a * s / h; }},
    {"tensor parallel", 8, false, RecomputeGranularity::None,
     [](double a, double s, double h, double t) { return 10 + 24 / t + 5 * a * s / (h * t); }},
    {"tensor + sequence parallel", 8, true, RecomputeGranularity::None,
     [](double a, double s, double h, double t) { return 34 / t + 5 * a * s / (h * t); }},
    {"tensor parallel + selective", 8, false, RecomputeGranularity::Selective,
     [](double, double, double, double t) { return 10 + 24 / t; }},
    {"tensor + sequence + selective", 8, true, RecomputeGranularity::Selective,
     [](double, double, double, double t) { return 34 / t; }},
    {"full recompute", 8, false, RecomputeGranularity::Full, [](double, double, double, double) { return 2.0; }},
};

class Table2 : public ::testing::TestWithParam<const char*> {};

TEST_P(Table2, EveryCombinationMatchesThePaperExactly) {
  const ModelSpec m = load_model(GetParam());
  for (const auto& row : kRows) {
    for (int micro_batch : {1, 4}) {
      ParallelConfig c;
      c.tp = row.tp;
      c.sequence_parallel = row.sp;
      c.recompute = row.recompute;
      c.micro_batch = micro_batch;
      const double sbh = static_cast<double>(m.seq_length) * micro_batch * m.hidden_size;
      const double expected = sbh * row.formula(m.num_attention_heads, m.seq_length, m.hidden_size, row.tp);
      EXPECT_DOUBLE_EQ(layer_activation_bytes(m, c), expected) << row.name << ", b=" << micro_batch;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Korthikanti, Table2, ::testing::Values("gpt-22b", "gpt3-175b", "gpt-530b", "gpt-1t"));

TEST(MemoryModel, FirstStageHoldsAllLayersWorthUnder1F1BAndInterleavingAddsThePaperFactor) {
  // Korthikanti Sec. 4.2: under 1F1B the first stage keeps p microbatches of L/p layers
  // (= L layers' worth); interleaving multiplies that by 1 + (p-1)/(p·m).
  const ModelSpec m = load_model("gpt3-175b");
  ParallelConfig c;
  c.tp = 8;
  c.pp = 8;
  c.sequence_parallel = true;
  c.recompute = RecomputeGranularity::Selective;
  c.global_batch = 64;
  const double layer = layer_activation_bytes(m, c);
  const double sbh_over_t = 2048.0 * 12288 / 8;
  const double embedding_masks = 8 * sbh_over_t;  // p microbatches of the embedding dropout mask
  auto report = memory_model(m, c);
  EXPECT_EQ(report.stages[0].in_flight, 8);
  EXPECT_DOUBLE_EQ(report.stages[0].bytes.activations, 96 * layer + embedding_masks);

  c.virtual_stages = 3;
  report = memory_model(m, c);
  const double factor = 1.0 + 7.0 / (8.0 * 3.0);
  EXPECT_EQ(report.stages[0].in_flight, 8 * 3 + 8 - 1);
  EXPECT_NEAR(report.stages[0].bytes.activations - embedding_masks * factor, 96 * layer * factor, 1.0);
}

TEST(MemoryModel, LastStageAddsOutputLayerTermsAndPeakIsTheLargestStage) {
  const ModelSpec m = load_model("gpt-22b");
  ParallelConfig c;
  c.tp = 8;
  c.micro_batch = 4;
  c.global_batch = 4;
  c.sequence_parallel = true;
  c.recompute = RecomputeGranularity::Selective;
  const auto report = memory_model(m, c);
  // p = 1: Korthikanti Sec. 4.3's δ(p=1) term 4sbh/t·(1 + v/h) plus the embedding mask sbh/t.
  const double sbh_t = 2048.0 * 4 * 6144 / 8;
  const double extra = sbh_t * (4.0 * (1 + 51200.0 / 6144)) + sbh_t;
  EXPECT_DOUBLE_EQ(report.stages[0].bytes.activations - report.stages[0].loss_peak_extra,
                   48 * layer_activation_bytes(m, c) + extra);
  // At the peak the loss also has the bf16 logits beside their fp32 copy: 2 B x s x b x v/t
  // (Megatron-Core's cross-entropy begins with logits.float()); nothing recomputes here.
  EXPECT_DOUBLE_EQ(report.stages[0].loss_peak_extra, 2.0 * 2048 * 4 * 51200 / 8);
  EXPECT_EQ(report.peak_stage, 0);
}

// GPT-3 175B's layout for the bytes-per-parameter tests: TP 8, PP 8, DP 4 (stage 3 is a middle one).
ParallelConfig tp8_pp8_dp4() {
  ParallelConfig c;
  c.tp = 8;
  c.pp = 8;
  c.dp = 4;
  c.global_batch = 64;
  return c;
}

TEST(MemoryModel, WeightsGradientsAndAdamStateFollowMegatronBytesPerParameter) {
  // Megatron-LM distributed-optimizer docs: bf16 params + fp32 grads = 18 B/param,
  // 6 + 12/d with the distributed optimizer.
  const ModelSpec m = load_model("gpt3-175b");
  ParallelConfig c = tp8_pp8_dp4();
  const auto plain = memory_model(m, c);
  const double params = static_cast<double>(plain.stages[3].parameters);
  EXPECT_DOUBLE_EQ(plain.stages[3].bytes.weights + plain.stages[3].bytes.gradients + plain.stages[3].bytes.optimizer,
                   18 * params);
  c.distributed_optimizer = true;
  const auto sharded = memory_model(m, c);
  EXPECT_DOUBLE_EQ(sharded.stages[3].bytes.weights + sharded.stages[3].bytes.gradients +
                       sharded.stages[3].bytes.optimizer,
                   (6 + 12.0 / 4) * params);
}

// The partial distributed optimizer shards the state over DP / instances: 6 + 12/(d/n).
TEST(MemoryModel, PartialDistributedOptimizerShardsOverEachInstancesBlock) {
  const ModelSpec m = load_model("gpt3-175b");
  ParallelConfig c = tp8_pp8_dp4();
  c.distributed_optimizer = true;
  c.distributed_optimizer_instances = 2;
  const StageMemory s = memory_model(m, c).stages[3];
  EXPECT_DOUBLE_EQ(s.bytes.weights + s.bytes.gradients + s.bytes.optimizer, (6 + 12.0 / 2) * static_cast<double>(s.parameters));
}

// --grad-reduce-in-bf16 (Megatron-LM arguments.py: accumulate_allreduce_grads_in_fp32 off for bf16):
// bf16 main gradients, 2 B/param, and the optimizer steps on an fp32 copy of its shard's gradients
// (4 B/param of the shard beside master weights and moments), as for fp16: 4 + 16/d. An fp16 run
// already keeps its gradients in fp16 and an fp32 run in fp32: the switch changes neither.
TEST(MemoryModel, GradientsReducedInBf16HoldTwoBytesAndTheOptimizerAnFp32Copy) {
  const ModelSpec m = load_model("gpt3-175b");
  ParallelConfig c = tp8_pp8_dp4();
  c.distributed_optimizer = true;
  c.grad_reduce_in_bf16 = true;
  const auto bf16 = memory_model(m, c);
  const StageMemory& s = bf16.stages[3];
  const double params = static_cast<double>(s.parameters);
  EXPECT_DOUBLE_EQ(s.bytes.gradients, 2 * params);
  EXPECT_DOUBLE_EQ(s.bytes.weights + s.bytes.gradients + s.bytes.optimizer, (4 + 16.0 / 4) * params);
  for (Precision p : {Precision::FP16, Precision::FP32}) {
    c.precision = p;
    c.grad_reduce_in_bf16 = false;
    const MemoryBreakdown without = memory_model(m, c).stages[3].bytes;
    c.grad_reduce_in_bf16 = true;
    const MemoryBreakdown with = memory_model(m, c).stages[3].bytes;
    EXPECT_EQ(with.gradients, without.gradients) << to_string(p);
    EXPECT_EQ(with.optimizer, without.optimizer) << to_string(p);
  }
}

TEST(MemoryModel, StageParametersAddUpToTheModel) {
  // Summed over stages and TP ranks, the per-GPU parameters are the model's parameters,
  // plus the tied output copy on the last stage and the replicated (norm, bias) tensors.
  const ModelSpec m = load_model("gpt3-175b");
  ParallelConfig c;
  c.pp = 4;
  std::int64_t total = 0;
  for (int s = 0; s < c.pp; ++s) total += stage_parameters(m, c, s);
  const std::int64_t tied_copy = std::int64_t{m.vocab_size} * m.hidden_size;
  EXPECT_EQ(total, m.total_parameters() + tied_copy);
}

TEST(MemoryModel, FullRecomputeKeepsLayerInputsPlusOneLayerWorkingSet) {
  const ModelSpec m = load_model("gpt-22b");
  ParallelConfig c;
  c.tp = 8;
  c.micro_batch = 4;
  c.global_batch = 4;
  c.recompute = RecomputeGranularity::Full;
  const auto uniform = memory_model(m, c);
  const double input = 2.0 * 2048 * 4 * 6144;
  const double working = layer_activation_bytes_without_recompute(m, c);
  const double sbh_t = 2048.0 * 4 * 6144 / 8;
  const double output_terms = 2.0 * 2048 * 4 * 6144 + 2 * sbh_t + 4.0 * 2048 * 4 * 51200 / 8;
  const double embedding_mask = 2048.0 * 4 * 6144;
  EXPECT_DOUBLE_EQ(uniform.stages[0].bytes.activations, 48 * input + working + output_terms + embedding_mask);
  // The rerun layer's working set (1.3 GB) outgrows the loss's workspace (bf16 logits,
  // 105 MB), and the two never meet: the workspace adds nothing.
  EXPECT_EQ(uniform.stages[0].loss_peak_extra, 0.0);

  // Block method with 12 of 48 layers recomputed keeps everything for the other 36; those
  // are freed (backward runs last layer first) before the 12 rerun, so no working set adds.
  c.recompute_method = RecomputeMethod::Block;
  c.recompute_num_layers = 12;
  const auto block = memory_model(m, c);
  const double logits_bf16 = 2.0 * 2048 * 4 * 51200 / 8;  // no working set here: the loss's workspace shows
  EXPECT_DOUBLE_EQ(block.stages[0].bytes.activations,
                   12 * input + 36 * working + output_terms + embedding_mask + logits_bf16);
  // With every layer in the block, one rerun layer is back beside the 48 inputs.
  c.recompute_num_layers = 48;
  EXPECT_DOUBLE_EQ(memory_model(m, c).stages[0].bytes.activations,
                   48 * input + working + output_terms + embedding_mask);
}

}  // namespace
}  // namespace cc
