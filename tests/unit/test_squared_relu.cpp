// Squared ReLU, Nemotron-4's MLP activation (Megatron-LM's --squared-relu, NeMo's
// activation: squared-relu, transformers' relu2): two matrices as GeLU, no biases, one compiled
// kernel each way (megatron/core/activations.py under jit_fuser). Read from every format,
// priced, and written back into every export.
#include <gtest/gtest.h>

#include <string>

#include "interop/layout_files.h"
#include "program_steps.h"
#include "sim/layer_program.h"
#include "sim/memory_model.h"
#include "sim/presets.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

using layout_test::error_of;
using layout_test::reference;

// Nemotron-4 15B's shape (Megatron-LM's gpt3_15b_8t_release functional test) on GPT-3's preset.
ModelSpec nemotron_like(Activation a) {
  ModelSpec m = load_model("gpt3-1.3b");
  m.name = "nemotron-like";
  m.num_layers = 4;
  m.hidden_size = 6144;
  m.num_attention_heads = 48;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 24576;
  m.seq_length = 4096;
  m.vocab_size = 256000;
  m.position_embedding = PositionEmbedding::Rope;
  m.activation = a;
  m.qkv_bias = m.projection_bias = false;
  m.mlp_bias = false;
  return m;
}

ParallelConfig tp8() {
  ParallelConfig c = layout_test::layout(8, 1, 1, 4, 4);
  c.sequence_parallel = true;
  c.attention = AttentionKernel::Flash;
  return c;
}

TEST(SquaredRelu, IsOneKernelEachWayOverTheFc1Output) {
  const LayerShape x = make_layer_shape(nemotron_like(Activation::SquaredReLU), tp8(), GroupPlacement{8, 1, 8});
  const OpProgram forward = layer_forward(x, Phase::Forward), backward = layer_backward(x);
  const ProgramStep* f = test::find_step(forward, "squared_relu");
  const ProgramStep* b = test::find_step(backward, "squared_relu.backward");
  ASSERT_TRUE(f && b);
  EXPECT_EQ(test::find_step(forward, "gelu"), nullptr);
  EXPECT_EQ(test::find_step(forward, "swiglu"), nullptr);
  // The rank's FC1 output: 4 x 4,096 tokens by 24,576 / 8 columns of bf16. Forward reads it and
  // writes relu(x)^2; backward reads the gradient and x, writes the input gradient.
  const double elements = 4.0 * 4096 * (24576 / 8);
  EXPECT_DOUBLE_EQ(f->op.bytes, 2 * 2 * elements);
  EXPECT_DOUBLE_EQ(b->op.bytes, 3 * 2 * elements);
}

TEST(SquaredRelu, KeepsWhatAnUnbiasedGeluMlpKeeps) {
  // Both keep FC1's output (the activation's input) and the activation's output (FC2's input),
  // and have the same two matrices: the same parameters and the same memory.
  const ModelSpec relu2 = nemotron_like(Activation::SquaredReLU), gelu = nemotron_like(Activation::GeLU);
  EXPECT_EQ(relu2.total_parameters(), gelu.total_parameters());
  const MemoryReport a = memory_model(relu2, tp8()), b = memory_model(gelu, tp8());
  EXPECT_DOUBLE_EQ(a.peak().activations, b.peak().activations);
  EXPECT_DOUBLE_EQ(a.peak().weights, b.peak().weights);
  // A SwiGLU MLP of the same width keeps more: both FC1 halves.
  EXPECT_GT(memory_model(nemotron_like(Activation::SwiGLU), tp8()).peak().activations, a.peak().activations);
}

TEST(SquaredRelu, ExpertsNameTheirOwnKernel) {
  ModelSpec m = nemotron_like(Activation::SquaredReLU);
  m.moe.num_experts = 8;
  m.moe.router_topk = 2;
  m.moe.ffn_hidden_size = 4096;
  ParallelConfig c = tp8();
  c.ep = 1;
  const LayerShape x = moe_layer_shape(make_layer_shape(m, c, GroupPlacement{8, 1, 8}));
  const OpProgram forward = layer_forward(x, Phase::Forward), backward = layer_backward(x);
  EXPECT_NE(test::find_step(forward, "expert_squared_relu"), nullptr);
  EXPECT_NE(test::find_step(backward, "expert_squared_relu.backward"), nullptr);
  EXPECT_EQ(test::find_step(forward, "expert_gelu"), nullptr);
}

TEST(SquaredRelu, ModelJsonKeepsItAndRefusesItBesideBiases) {
  const ModelSpec m = nemotron_like(Activation::SquaredReLU);
  const nlohmann::json j = model_to_json(m);
  EXPECT_EQ(j.at("activation"), "squared_relu");
  EXPECT_FALSE(j.contains("mlp_bias"));  // none is squared ReLU's convention
  EXPECT_EQ(model_from_json(j, "m").activation, Activation::SquaredReLU);
  nlohmann::json biased = j;
  biased["mlp_bias"] = true;
  EXPECT_NE(error_of([&] { model_from_json(biased, "m"); }).find("squared-ReLU MLP with biases is not modelled"),
            std::string::npos);
}

TEST(SquaredRelu, MegatronFilesReadItAndItsRules) {
  // Nemotron-4 15B's release run: --squared-relu beside --disable-bias-linear.
  const LayoutFile f = read_layout_file(reference("megatron/functional/gpt3_15b_8t_release.args"));
  ASSERT_TRUE(f.model);
  EXPECT_EQ(f.model->activation, Activation::SquaredReLU);
  EXPECT_FALSE(f.model->dense_mlp_bias());
  EXPECT_EQ(f.model->ffn_hidden_size, 24576);
  const std::string model = "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --vocab-size 128 ";
  // Megatron-LM's default biases beside squared ReLU: its TransformerConfig raises.
  EXPECT_NE(error_of([&] { parse_layout_text(model + "--squared-relu\n", "f"); }).find("--disable-bias-linear"),
            std::string::npos);
  // arguments.py asserts not args.swiglu under --squared-relu.
  EXPECT_NE(error_of([&] { parse_layout_text(model + "--squared-relu --swiglu --disable-bias-linear\n", "f"); })
                .find("name two MLP activations"),
            std::string::npos);
  const LayoutFile read = parse_layout_text(model + "--squared-relu --disable-bias-linear\n", "f");
  EXPECT_EQ(read.model->activation, Activation::SquaredReLU);
  EXPECT_EQ(read.model->ffn_hidden_size, 256);  // 4h, as for GeLU: no gated 8h/3
}

TEST(SquaredRelu, EveryExportWritesItAndReadsBack) {
  const SimResult r = layout_test::simulated(nemotron_like(Activation::SquaredReLU), tp8(), "dgx-h100");
  const std::string args = megatron_arguments(r, {});
  EXPECT_NE(args.find("--squared-relu"), std::string::npos);
  EXPECT_NE(args.find("--disable-bias-linear"), std::string::npos);
  EXPECT_EQ(parse_layout_text(args, "m.args").model->activation, Activation::SquaredReLU);
  const std::string yaml = nemo_yaml(r, {});
  EXPECT_NE(yaml.find("activation: squared-relu"), std::string::npos);
  // Megatron-Core's fused bias-activation takes GeLU and SwiGLU only.
  EXPECT_NE(yaml.find("bias_activation_fusion: false"), std::string::npos);
  const LayoutFile back = parse_layout_text(yaml, "n.yaml");
  EXPECT_EQ(back.model->activation, Activation::SquaredReLU);
  EXPECT_FALSE(back.model->dense_mlp_bias());
}

}  // namespace
}  // namespace cc
