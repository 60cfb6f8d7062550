// The pipeline splits Megatron-Core refuses (transformer_config.py __post_init__, arguments.py,
// schedules.py), each refused by name with what would be valid, and the ones it accepts.
#include <gtest/gtest.h>

#include <string>

#include "refusal.h"
#include "sim/layout_rules.h"
#include "sim/layout_validation.h"
#include "sim/parallel_config.h"
#include "sim/presets.h"
#include "tiny_with_layers.h"

namespace cc {
namespace {

Refusal check(const ParallelConfig& c, const ModelSpec& m) {
  return refusal_of([&] { validate_layout(c, m, 0); });
}

bool has(const Refusal& r, const std::string& text) { return r.message.find(text) != std::string::npos; }

TEST(PipelineSplitRefusals, UnevenInterleavedNeedsEveryStageToDivide) {
  // Llama 3 405B: 7 + 14 x 8 + 7 on PP 16. Each stage splits its layers evenly over its chunks,
  // so the chunks per rank must divide 7 and 8: only 1.
  const ModelSpec m = load_model("llama3-405b");
  ParallelConfig c;
  c.pp = 16;
  c.global_batch = 16;
  c.first_stage_layers = c.last_stage_layers = 7;
  EXPECT_EQ(check(c, m).message, "(no error)");
  c.virtual_stages = 8;
  const Refusal r = check(c, m);
  EXPECT_TRUE(has(r, "8 virtual stages per rank do not divide the stages' layers (first 7, middle 8, last 7)"))
      << r.message;
  EXPECT_TRUE(has(r, "valid virtual stages per rank: 1,")) << r.message;
  EXPECT_EQ(r.field, "--num-virtual-stages-per-pipeline-rank");
  // First 8, last 8 on 128 layers: middle (128 - 16) / 14 = 8; 2, 4 and 8 chunks divide all.
  ModelSpec m128 = m;
  m128.num_layers = 128;
  c.first_stage_layers = c.last_stage_layers = 8;
  c.virtual_stages = 3;
  EXPECT_TRUE(has(check(c, m128), "valid virtual stages per rank: 1, 2, 4, 8,")) << check(c, m128).message;
  c.virtual_stages = 4;
  EXPECT_EQ(check(c, m128).message, "(no error)");
}

TEST(PipelineSplitRefusals, OneWayOfPlacingLayersAtATime) {
  const ModelSpec m = tiny_with_layers(4);
  ParallelConfig c;
  c.pp = 2;
  c.global_batch = 2;
  c.pipeline_layout = "Et|tttL";
  EXPECT_EQ(check(c, m).message, "(no error)");
  c.first_stage_layers = 1;
  EXPECT_TRUE(has(check(c, m), "it cannot be combined with --decoder-first/last-pipeline-num-layers"));
  c.first_stage_layers = 0;
  c.account_for_loss = true;
  EXPECT_TRUE(has(check(c, m), "it cannot be combined with --account-for-loss-in-pipeline-split"));
  c.pipeline_layout.clear();
  c.first_stage_layers = 1;
  EXPECT_TRUE(has(check(c, m), "--account-for-loss-in-pipeline-split cannot be combined with uneven first/last"));
  // Megatron-DeepSpeed partitions uniformly: no layout string, no counted embedding.
  c.first_stage_layers = 0;
  c.framework = "megatron-deepspeed";
  EXPECT_TRUE(has(check(c, m), "megatron-deepspeed partitions layers uniformly")) << check(c, m).message;
}

TEST(PipelineSplitRefusals, CountedEmbeddingAndLossMustDivide) {
  // 5 layers + embedding + loss = 7 do not split over PP 2.
  ParallelConfig c;
  c.pp = 2;
  c.global_batch = 2;
  c.account_for_embedding = c.account_for_loss = true;
  const Refusal r = check(c, tiny_with_layers(5));
  EXPECT_TRUE(has(r, "num_layers 5 + 2 (the embedding and loss counted as layers) = 7 is not divisible by PP 2"))
      << r.message;
  EXPECT_EQ(check(c, tiny_with_layers(6)).message, "(no error)");
}

TEST(PipelineSplitRefusals, LayersPerVirtualStageFollowsMegatronLm) {
  ParallelConfig c;
  c.pp = 2;
  // 6 layers + 2 counted = 8: 4 per rank; chunks of 2 give 2 per rank, chunks of 3 do not divide.
  c.account_for_embedding = c.account_for_loss = true;
  EXPECT_EQ(virtual_stages_from_layers_per_stage(2, 6, c, ""), 2);
  const Refusal r = refusal_of([&] { virtual_stages_from_layers_per_stage(3, 6, c, ""); });
  EXPECT_TRUE(has(r, "--num-layers-per-virtual-pipeline-stage 3 does not divide the 4 layers of each pipeline rank "
                     "(num_layers 6 + 2 = 8 / PP 2)"))
      << r.message;
  // Uneven stages take the chunks per rank instead (Megatron-LM's arguments.py).
  c.account_for_embedding = c.account_for_loss = false;
  c.first_stage_layers = 2;
  EXPECT_TRUE(has(refusal_of([&] { virtual_stages_from_layers_per_stage(1, 6, c, ""); }),
                  "give the chunks per rank with --num-virtual-stages-per-pipeline-rank"));
  EXPECT_EQ(virtual_stages_from_layout("E|tt|tt|ttL", 2, ""), 2);
  EXPECT_TRUE(has(refusal_of([&] { virtual_stages_from_layout("E|tt|tt|ttL", 3, ""); }),
                  "has 4 virtual stages, not a multiple of --pipeline-model-parallel-size 3"));
}

TEST(PipelineSplitRefusals, InterleavedMicrobatchGroups) {
  const ModelSpec m = tiny_with_layers(8);
  ParallelConfig c;
  c.pp = 4;
  c.virtual_stages = 2;
  // Default groups of PP 4: 6 microbatches leave a last group of 2 < PP.
  c.global_batch = 6;
  const Refusal r = check(c, m);
  EXPECT_TRUE(has(r, "microbatch count 6 divisible by PP 4")) << r.message;
  EXPECT_EQ(r.field, "--global-batch-size");
  // Groups of 6 take all 6 at once; of 5 leave 1 < PP 4; of 3 are smaller than PP.
  c.microbatch_group_size = 6;
  EXPECT_EQ(check(c, m).message, "(no error)");
  c.microbatch_group_size = 5;
  EXPECT_TRUE(has(check(c, m), "leaves a last group of 6 mod 5 = 1 microbatches, fewer than PP 4"));
  c.microbatch_group_size = 3;
  EXPECT_TRUE(has(check(c, m), "3 must lie between PP 4 and the microbatch count 6"));
  // 10 microbatches in groups of 6: a last group of 4 = PP, accepted.
  c.global_batch = 10;
  c.microbatch_group_size = 6;
  EXPECT_EQ(check(c, m).message, "(no error)");
  // Without interleaving there is no group to size.
  c.virtual_stages = 1;
  EXPECT_TRUE(has(check(c, m), "is read by the interleaved schedule only"));
}

}  // namespace
}  // namespace cc
