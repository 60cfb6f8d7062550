#include <gtest/gtest.h>

#include "sim/flops.h"
#include "sim/presets.h"

namespace cc {
namespace {

double narayanan(const ModelSpec& m, double batch) {
  const double s = m.seq_length, l = m.num_layers, h = m.hidden_size, v = m.vocab_size;
  return 72 * batch * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
}

TEST(Flops, ModelFlopsAreNarayanansFormulaForGptModels) {
  for (const char* name : {"gpt-22b", "gpt3-175b", "gpt-530b", "gpt-1t", "gpt3-1.3b"}) {
    const ModelSpec m = load_model(name);
    EXPECT_NEAR(model_flops_per_iteration(m, 1536) / narayanan(m, 1536), 1.0, 1e-12) << name;
  }
}

TEST(Flops, FullRecomputeAddsOneForwardPerLayer) {
  // Korthikanti App. A: full recompute adds 24·B·L·s·h²·(1 + s/(6h)).
  const ModelSpec m = load_model("gpt3-175b");
  ParallelConfig c;
  c.global_batch = 64;
  c.pp = 8;
  c.recompute = RecomputeGranularity::Full;
  const double s = m.seq_length, h = m.hidden_size;
  const double extra = 24.0 * 64 * m.num_layers * s * h * h * (1 + s / (6 * h));
  EXPECT_NEAR(hardware_flops_per_iteration(m, c) - model_flops_per_iteration(m, 64), extra, extra * 1e-12);
}

TEST(Flops, SelectiveRecomputeAddsTheAttentionProductsItReruns) {
  const ModelSpec m = load_model("gpt-22b");
  ParallelConfig c;
  c.global_batch = 4;
  c.recompute = RecomputeGranularity::Selective;
  const double s = m.seq_length, h = m.hidden_size;
  const double extra = 4.0 * 4 * m.num_layers * s * s * h;  // QK^T and attention·V, forward
  EXPECT_NEAR(hardware_flops_per_iteration(m, c) - model_flops_per_iteration(m, 4), extra, extra * 1e-12);
  c.attention = AttentionKernel::Flash;  // flash attention never stores scores: nothing to rerun
  EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(m, c), model_flops_per_iteration(m, 4));
}

TEST(Flops, BlockRecomputeCountsOnlyTheRecomputedLayers) {
  const ModelSpec m = load_model("gpt3-175b");
  ParallelConfig c;
  c.global_batch = 64;
  c.pp = 8;  // 12 layers per stage
  c.recompute = RecomputeGranularity::Full;
  c.recompute_method = RecomputeMethod::Block;
  c.recompute_num_layers = 3;
  const double extra = 64.0 * 8 * 3 * layer_forward_flops(m);
  EXPECT_NEAR(hardware_flops_per_iteration(m, c) - model_flops_per_iteration(m, 64), extra, extra * 1e-12);
}

}  // namespace
}  // namespace cc
