// Gemma 2's soft caps, cap * tanh(x / cap), on the attention scores and on the output logits:
// read from its HuggingFace config, run on the unfused attention Megatron-Bridge and NeMo give it
// (flash refused by name), priced as one more pass over the capped tensor each way, and the tanh
// output kept for backward.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>

#include "interop/hf_config.h"
#include "interop/layout_files.h"
#include "sim/layer_program.h"
#include "sim/layout_validation.h"
#include "sim/memory_model.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

using layout_test::error_of;
using layout_test::reference;

ModelSpec gemma2(int seq_length = 4096) {
  std::ifstream in(reference("hf-configs/gemma-2-9b.json"));
  return model_from_hf_config(nlohmann::json::parse(in), "gemma-2-9b.json", seq_length).model;
}

ParallelConfig unfused_tp(int tp) {
  ParallelConfig c;
  c.tp = tp;
  c.sequence_parallel = true;
  c.micro_batch = 1;
  c.global_batch = 8;
  c.attention = AttentionKernel::Unfused;
  return c;
}

std::optional<ComputeOp> find_op(const OpProgram& program, const std::string& name) {
  for (const ProgramStep& s : program)
    if (!s.is_collective && name == s.op.name) return s.op;
  return std::nullopt;
}

TEST(SoftCap, Gemma2sConfigGivesBothCaps) {
  const ModelSpec m = gemma2();
  EXPECT_EQ(m.attention_softcap, 50.0);  // attn_logit_softcapping in the file
  EXPECT_EQ(m.final_logit_softcap, 30.0);  // final_logit_softcapping
  std::ifstream in(reference("hf-configs/gemma-7b.json"));
  const ModelSpec gemma1 = model_from_hf_config(nlohmann::json::parse(in), "gemma-7b.json", 4096).model;
  EXPECT_EQ(gemma1.attention_softcap, 0.0);
  EXPECT_EQ(gemma1.final_logit_softcap, 0.0);
}

TEST(SoftCap, TheAttentionRunsUnfusedAndFlashIsRefusedByName) {
  const ModelSpec m = gemma2();
  EXPECT_EQ(default_attention("megatron-core", m), AttentionKernel::Unfused);
  EXPECT_EQ(default_attention("megatron-core", load_model("llama3-8b")), AttentionKernel::Flash);
  ParallelConfig c = unfused_tp(8);
  c.attention = AttentionKernel::Flash;
  const std::string e = error_of([&] { validate_layout(c, m, 8); });
  EXPECT_NE(e.find("attn_logit_softcapping 50"), std::string::npos) << e;
  EXPECT_NE(e.find("use --attention-backend unfused"), std::string::npos) << e;
}

TEST(SoftCap, EachCapIsOnePassOverItsTensorEachWay) {
  const ModelSpec m = gemma2();
  const ParallelConfig c = unfused_tp(8);
  const LayerShape x = make_layer_shape(m, c, GroupPlacement{8, 1, 8});
  const std::int64_t scores = std::int64_t{1} * (16 / 8) * 4096 * 4096;  // b x heads/t x s x s
  const std::optional<ComputeOp> forward = find_op(layer_forward(x, Phase::Forward), "attention_softcap");
  const std::optional<ComputeOp> backward = find_op(layer_backward(x), "attention_softcap.backward");
  ASSERT_TRUE(forward && backward);
  EXPECT_EQ(forward->m, scores);
  EXPECT_EQ(forward->bytes, 2.0 * 2 * scores);   // read the scores, write the capped ones (bf16)
  EXPECT_EQ(backward->bytes, 3.0 * 2 * scores);  // the gradient in and out, the tanh output read
  const std::int64_t logits = std::int64_t{4096} * (256000 / 8);  // tokens x the rank's vocabulary slice
  const std::optional<ComputeOp> logit_cap = find_op(output_forward(x), "logit_softcap");
  ASSERT_TRUE(logit_cap && find_op(output_backward(x), "logit_softcap.backward"));
  EXPECT_EQ(logit_cap->m, logits);
  // Without the caps, no such pass.
  ModelSpec plain = m;
  plain.attention_softcap = plain.final_logit_softcap = 0;
  const LayerShape y = make_layer_shape(plain, c, GroupPlacement{8, 1, 8});
  EXPECT_FALSE(find_op(layer_forward(y, Phase::Forward), "attention_softcap"));
  EXPECT_FALSE(find_op(output_forward(y), "logit_softcap"));
}

TEST(SoftCap, EachCapKeepsItsTanhOutputForBackward) {
  const ModelSpec m = gemma2();
  ModelSpec plain = m;
  plain.attention_softcap = plain.final_logit_softcap = 0;
  const ParallelConfig c = unfused_tp(8);
  const double s = 4096, b = 1, e = 2, heads = 16.0 / 8, vocab = 256000.0 / 8;
  // One more bf16 element per attention score in each layer; one per logit on the last stage.
  EXPECT_DOUBLE_EQ(layer_activation_bytes_without_recompute(m, c) - layer_activation_bytes_without_recompute(plain, c),
                   e * heads * s * s * b);
  EXPECT_DOUBLE_EQ(stage_activations(m, c, 0).fixed - stage_activations(plain, c, 0).fixed, e * s * b * vocab);
}

TEST(SoftCap, ExportsThatCannotSayItRefuseTheModelAndJsonKeepsIt) {
  ParallelConfig c = unfused_tp(8);
  c.dp = 1;
  const SimResult r = layout_test::simulated(gemma2(), c, "dgx-h100");
  EXPECT_NE(error_of([&] { nemo_yaml(r, {}); }).find("soft-capped attention scores or logits (Gemma 2)"),
            std::string::npos);
  // Gemma 2's GeGLU stops the Megatron export first; a capped SwiGLU model reaches the cap's refusal.
  ModelSpec capped = load_model("llama3-8b");
  capped.attention_softcap = 50;
  EXPECT_NE(error_of([&] { megatron_arguments(layout_test::simulated(capped, c, "dgx-h100"), {}); })
                .find("soft-capped attention scores or logits (Gemma 2)"),
            std::string::npos);
  const LayoutFile back = parse_layout_text(layout_json(r, {}), "g.json");
  ASSERT_TRUE(back.model);
  EXPECT_EQ(back.model->attention_softcap, 50.0);
  EXPECT_EQ(back.model->final_logit_softcap, 30.0);
  EXPECT_EQ(back.config.attention, AttentionKernel::Unfused);
}

}  // namespace
}  // namespace cc
