// The FP8 run switches beside --fp8-format. --fp8-param-gather: an FP8 run with the distributed
// optimizer keeps Transformer Engine's linear weights in FP8 (Megatron-Core builds them under TE's
// fp8_model_init and keeps them in a uint8 buffer, param_and_grad_buffer.py): one byte each in
// memory and in the parameter all-gather; the embedding, output layer and routers stay 16-bit.
// --fp8-recipe: delayed or tensorwise scaling, priced alike; block scalings refused. Each read,
// priced, checked and written back.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "interop/layout_files.h"
#include "sim/analytic_costs.h"
#include "sim/iteration_costs.h"
#include "sim/layout_validation.h"
#include "sim/memory_model.h"
#include "sim/presets.h"
#include "small_models.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

using layout_test::error_of;

// The simulator tests' GPT (LayerNorm, biased linears, learned positions, untied) with two layers.
ModelSpec small_model() { return test::small_gpt(2); }

ParallelConfig fp8_run(bool fp8_params) {
  ParallelConfig c = layout_test::layout(2, 1, 4, 1, 8);
  c.precision = Precision::FP8;
  c.attention = AttentionKernel::Flash;
  c.distributed_optimizer = true;
  c.fp8_param_gather = fp8_params;
  return c;
}

// Records the collectives an iteration prices.
class Recording final : public CostSource {
 public:
  explicit Recording(const ClusterSpec& cluster) : inner_(cluster, Precision::FP8) {}
  OpCost compute(const ComputeOp& op) const override { return inner_.compute(op); }
  OpCost collective(const CollectiveOp& op) const override {
    recorded.push_back(op);
    return inner_.collective(op);
  }
  std::string describe() const override { return inner_.describe(); }
  double bytes_of(const std::string& name) const {
    double bytes = 0;
    for (const CollectiveOp& op : recorded)
      if (op.name == name) bytes += op.bytes;
    return bytes;
  }
  mutable std::vector<CollectiveOp> recorded;

 private:
  AnalyticCosts inner_;
};

TEST(Fp8ParamGather, KeepsTheLinearWeightsInOneByte) {
  const ModelSpec m = small_model();
  // Per layer on a TP-2 rank: Q, K, V and the projection (4h^2), FC1 and FC2 (2hf) with the QKV and
  // FC1 biases (3h + f) over TP; the projection's and FC2's biases and two LayerNorms (weight and
  // bias) replicated; the final LayerNorm; the embedding and output layer (V/TP x h each) and the
  // learned positions (s x h).
  const std::int64_t h = 256, f = 1024, linear = (4 * h * h + 2 * h * f + 3 * h + f) / 2 + 2 * h + 2 * 2 * h;
  const std::int64_t quantized = 2 * linear + 2 * h, embedding = 2 * (1024 / 2) * h + 128 * h;
  EXPECT_EQ(fp8_weight_parameters(m, fp8_run(true), 0), quantized);
  EXPECT_EQ(fp8_weight_parameters(m, fp8_run(false), 0), 0);
  EXPECT_EQ(stage_parameters(m, fp8_run(true), 0), quantized + embedding);

  const MemoryReport with = memory_model(m, fp8_run(true), MemoryReserve{});
  const MemoryReport without = memory_model(m, fp8_run(false), MemoryReserve{});
  EXPECT_DOUBLE_EQ(without.peak().weights, 2.0 * (quantized + embedding));
  EXPECT_DOUBLE_EQ(with.peak().weights, 1.0 * quantized + 2.0 * embedding);
  // Gradients and the optimizer's fp32 state are the same either way.
  EXPECT_DOUBLE_EQ(with.peak().gradients, without.peak().gradients);
  EXPECT_DOUBLE_EQ(with.peak().optimizer, without.peak().optimizer);
}

TEST(Fp8ParamGather, GathersTheLinearWeightsInOneByte) {
  const ModelSpec m = small_model();
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::int64_t params = stage_parameters(m, fp8_run(true), 0);
  const std::int64_t quantized = fp8_weight_parameters(m, fp8_run(true), 0);
  Recording with(cluster), without(cluster);
  price_iteration(m, cluster, fp8_run(true), with);
  price_iteration(m, cluster, fp8_run(false), without);
  EXPECT_DOUBLE_EQ(without.bytes_of("dp.param_gather"), 2.0 * params);
  EXPECT_DOUBLE_EQ(with.bytes_of("dp.param_gather"), 2.0 * (params - quantized) + 1.0 * quantized);
  // The gradients are reduced as before.
  EXPECT_DOUBLE_EQ(with.bytes_of("dp.grad_reduce"), without.bytes_of("dp.grad_reduce"));
}

TEST(Fp8ParamGather, RoutedExpertsAreGatheredInOneByteRoutersStay16Bit) {
  ModelSpec m = load_model("mixtral-8x7b");
  m.num_layers = 2;
  ParallelConfig c = layout_test::layout(1, 1, 8, 1, 8);
  c.precision = Precision::FP8;
  c.attention = AttentionKernel::Flash;
  c.distributed_optimizer = true;
  c.ep = 8;
  c.fp8_param_gather = true;
  const std::int64_t experts = stage_expert_parameters(m, c, 0);
  ASSERT_GT(experts, 0);
  EXPECT_EQ(fp8_weight_parameters(m, c, 0),
            stage_parameters(m, c, 0) - stage_embedding_parameters(m, c, 0) - 2 * m.router_parameters());
  const ClusterSpec cluster = load_cluster("dgx-h100");
  Recording recorder(cluster);
  price_iteration(m, cluster, c, recorder);
  EXPECT_DOUBLE_EQ(recorder.bytes_of("edp.param_gather"), 1.0 * experts);
}

TEST(Fp8ParamGather, NeedsFp8AndTheDistributedOptimizerAsInMegatron) {
  const ModelSpec m = small_model();
  ParallelConfig bf16 = fp8_run(true);
  bf16.precision = Precision::BF16;
  EXPECT_NE(error_of([&] { validate_layout(bf16, m, 8); }).find("--fp8-param-gather needs FP8 training (--fp8-format)"),
            std::string::npos);
  ParallelConfig plain = fp8_run(true);
  plain.distributed_optimizer = false;
  EXPECT_NE(error_of([&] { validate_layout(plain, m, 8); }).find("--fp8-param-gather needs --use-distributed-optimizer"),
            std::string::npos);
  EXPECT_NO_THROW(validate_layout(fp8_run(true), m, 8));
}

TEST(Fp8ParamGather, ReadFromMegatronFlagsAndWrittenBack) {
  const std::string flags = "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --seq-length 128 --vocab-size 1024 "
                            "--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size 2 --bf16 "
                            "--fp8-format hybrid --use-distributed-optimizer --fp8-param-gather\n";
  const LayoutFile f = parse_layout_text(flags, "f.args");
  EXPECT_TRUE(f.config.fp8_param_gather);
  EXPECT_TRUE(f.ignored.empty() || std::find(f.ignored.begin(), f.ignored.end(), "--fp8-param-gather") == f.ignored.end());
  const SimResult r = layout_test::simulated(small_model(), fp8_run(true), "dgx-h100");
  const std::string args = megatron_arguments(r, {});
  EXPECT_NE(args.find("--fp8-param-gather"), std::string::npos);
  EXPECT_TRUE(parse_layout_text(args, "best.args").config.fp8_param_gather);
  // The layout JSON keeps it, and a layout without it reads as before.
  EXPECT_TRUE(config_from_json(config_to_json(fp8_run(true)), "j").fp8_param_gather);
  EXPECT_FALSE(config_to_json(fp8_run(false)).contains("fp8_param_gather"));
  // NeMo's base config has no key for it: that export refuses it by name.
  EXPECT_NE(error_of([&] { nemo_yaml(r, MemoryReserve{}); }).find("--fp8-param-gather has no key"), std::string::npos);
}

// Megatron-LM's --fp8-recipe: the per-tensor scalings are read and kept, the block scalings refused
// by name.
TEST(Fp8Recipe, PerTensorScalingsAreReadBlockScalingsRefused) {
  EXPECT_EQ(fp8_recipe_from("delayed", "f"), Fp8Recipe::Delayed);
  EXPECT_EQ(fp8_recipe_from("tensorwise", "f"), Fp8Recipe::Tensorwise);
  for (const char* block : {"mxfp8", "blockwise"})
    EXPECT_NE(error_of([&] { fp8_recipe_from(block, "f"); }).find(std::string("FP8 recipe '") + block + "' is not modelled"),
              std::string::npos);
  EXPECT_NE(error_of([&] { fp8_recipe_from("fp4", "f"); }).find("valid: delayed, tensorwise"), std::string::npos);
  ParallelConfig bf16 = fp8_run(false);
  bf16.precision = Precision::BF16;
  bf16.fp8_recipe = Fp8Recipe::Tensorwise;
  EXPECT_NE(error_of([&] { validate_layout(bf16, small_model(), 8); }).find("--fp8-recipe tensorwise is an FP8 recipe"),
            std::string::npos);
}

// Current scaling is priced as delayed scaling (the fitted FP8 fraction covers both), and is written
// back wherever it can be said.
TEST(Fp8Recipe, TensorwiseIsPricedAsDelayedAndWrittenBack) {
  ParallelConfig tensorwise = fp8_run(true);
  tensorwise.fp8_recipe = Fp8Recipe::Tensorwise;
  const SimResult delayed_run = layout_test::simulated(small_model(), fp8_run(true), "dgx-h100");
  const SimResult tensorwise_run = layout_test::simulated(small_model(), tensorwise, "dgx-h100");
  EXPECT_DOUBLE_EQ(tensorwise_run.iteration_time_s, delayed_run.iteration_time_s);
  const std::string args = megatron_arguments(tensorwise_run, {});
  EXPECT_NE(args.find("--fp8-recipe tensorwise"), std::string::npos);
  EXPECT_EQ(parse_layout_text(args, "best.args").config.fp8_recipe, Fp8Recipe::Tensorwise);
  EXPECT_EQ(megatron_arguments(delayed_run, {}).find("--fp8-recipe"), std::string::npos);  // Megatron-LM's default
  EXPECT_EQ(config_from_json(config_to_json(tensorwise), "j").fp8_recipe, Fp8Recipe::Tensorwise);
  EXPECT_FALSE(config_to_json(fp8_run(true)).contains("fp8_recipe"));
  EXPECT_NE(error_of([&] { nemo_yaml(tensorwise_run, MemoryReserve{}); }).find("--fp8-recipe tensorwise has no key"),
            std::string::npos);
  const std::string flags = "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --seq-length 128 --vocab-size 1024 "
                            "--micro-batch-size 1 --bf16 --fp8-format hybrid --fp8-recipe ";
  EXPECT_EQ(parse_layout_text(flags + "tensorwise\n", "f.args").config.fp8_recipe, Fp8Recipe::Tensorwise);
  EXPECT_NE(error_of([&] { parse_layout_text(flags + "mxfp8\n", "f.args"); }).find("FP8 recipe 'mxfp8' is not modelled"),
            std::string::npos);
}

}  // namespace
}  // namespace cc
