#include <gtest/gtest.h>

#include "sim/error.h"
#include "sim/json_fields.h"
#include "sim/layout_validation.h"
#include "sim/parallel_config.h"
#include "sim/presets.h"
#include "sim/step_plan.h"

namespace cc {
namespace {

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelSpec, ParameterCountIsNarayananEquation2) {
  // P = 12·L·h²·(1 + 13/(12h) + (v+s)/(12·L·h)), which leaves out the final LayerNorm.
  for (const char* name : {"gpt3-175b", "gpt-530b", "gpt-1t", "gpt-22b"}) {
    const ModelSpec m = load_model(name);
    const double L = m.num_layers, h = m.hidden_size, v = m.vocab_size, s = m.seq_length;
    const double narayanan = 12 * L * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * L * h));
    EXPECT_DOUBLE_EQ(static_cast<double>(m.total_parameters() - 2 * m.hidden_size), narayanan) << name;
  }
  EXPECT_NEAR(load_model("gpt3-175b").total_parameters() / 1e9, 174.6, 0.1);
}

TEST(ModelSpec, LlamaPresetsHaveTheirPublishedSizes) {
  EXPECT_NEAR(load_model("llama2-7b").total_parameters() / 1e9, 6.74, 0.01);
  EXPECT_NEAR(load_model("llama2-70b").total_parameters() / 1e9, 68.98, 0.02);
  EXPECT_NEAR(load_model("llama3-8b").total_parameters() / 1e9, 8.03, 0.01);
  EXPECT_NEAR(load_model("llama3-405b").total_parameters() / 1e9, 405.9, 0.2);
}

// HuggingFace config.json import: tests/unit/test_hf_import.cpp.

TEST(ModelSpec, ErrorsNameTheFileAndTheField) {
  const auto missing = nlohmann::json::parse(R"({"num_layers": 4, "num_attention_heads": 4, "vocab_size": 256, "seq_length": 64})");
  EXPECT_EQ(error_of([&] { model_from_json(missing, "model file 'm.json'"); }),
            "model file 'm.json': field 'hidden_size' is missing");
  const auto wrong = nlohmann::json::parse(R"({"num_layers": 4, "hidden_size": "big", "num_attention_heads": 4, "vocab_size": 256, "seq_length": 64})");
  EXPECT_NE(error_of([&] { model_from_json(wrong, "m"); }).find("'hidden_size' must be an integer"), std::string::npos);
  const auto heads = nlohmann::json::parse(R"({"num_layers": 4, "hidden_size": 100, "num_attention_heads": 3, "vocab_size": 256, "seq_length": 64})");
  EXPECT_NE(error_of([&] { model_from_json(heads, "m"); }).find("not divisible by num_attention_heads 3"), std::string::npos);
  EXPECT_NE(error_of([] { parse_json("{\"a\": ", "model file 'x.json'"); }).find("model file 'x.json': not valid JSON"),
            std::string::npos);
}

TEST(Presets, UnknownNamesListTheValidOnes) {
  const std::string e = error_of([] { load_model("gpt-9000"); });
  EXPECT_NE(e.find("'gpt-9000'"), std::string::npos);
  EXPECT_NE(e.find("gpt3-175b"), std::string::npos);
  EXPECT_NE(error_of([] { load_cluster("dgx-z"); }).find("dgx-a100-80gb"), std::string::npos);
}

TEST(Presets, EveryPresetLoadsAndValidates) {
  EXPECT_GE(model_preset_names().size(), 19u);
  for (const auto& name : model_preset_names()) EXPECT_NO_THROW(load_model(name)) << name;
  EXPECT_GE(cluster_preset_names().size(), 5u);
  for (const auto& name : cluster_preset_names()) EXPECT_NO_THROW(load_cluster(name)) << name;
  const ClusterSpec azure = load_cluster("azure-nd-a100-v4");
  EXPECT_EQ(azure.gpus_per_node, 8);
  EXPECT_EQ(azure.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(azure.inter_node.bandwidth_gbs, 25);
  EXPECT_DOUBLE_EQ(azure.gpu.hbm_gib, 40);
}

class InvalidLayout : public ::testing::Test {
 protected:
  ModelSpec m = load_model("gpt3-175b");
  ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  ParallelConfig c = [] {
    ParallelConfig c;
    c.tp = 8;
    c.pp = 8;
    c.dp = 2;
    c.global_batch = 64;
    return c;
  }();
  std::string check(int gpus = 0) {
    return error_of([&] { validate(c, m, cluster, gpus); });
  }
};

TEST_F(InvalidLayout, ProductsOfSizesDoNotWrap) {
  // Micro batch 65,536 x DP 65,536 = 2^32 wrapped a 32-bit int to 0 and the divisibility
  // check died of SIGFPE (`simulate --dp 65536 --micro-batch-size 65536`).
  c.tp = 1;
  c.pp = 1;
  c.dp = 65536;
  c.micro_batch = 65536;
  c.global_batch = 65536;
  EXPECT_NE(check(65536).find("not divisible by micro batch 65536 x DP 65536 = 4294967296"), std::string::npos)
      << check(65536);
  // TP 8 x PP 8,192 x DP 65,536 = 2^32 GPUs, which a 32-bit product reported as 0.
  c.micro_batch = 1;
  c.tp = 8;
  c.pp = 8192;
  c.dp = 65536;
  EXPECT_NE(check(8).find("= 4294967296"), std::string::npos) << check(8);
}

TEST_F(InvalidLayout, EachRuleNamesItsValue) {
  EXPECT_EQ(check(), "(no error)");
  EXPECT_NE(check(100).find("--gpus 100 is not TP 8 x PP 8 x DP 2 = 128"), std::string::npos);
  c.tp = 5;
  EXPECT_NE(check().find("--tensor-model-parallel-size 5 does not divide num_attention_heads 96"), std::string::npos);
  c.tp = 1;
  c.sequence_parallel = true;
  EXPECT_NE(check().find("--sequence-parallel needs --tensor-model-parallel-size > 1"), std::string::npos);
  c.sequence_parallel = false;
  c.tp = 8;
  c.pp = 5;
  EXPECT_NE(check().find("num_layers 96 is not divisible by PP 5"), std::string::npos);
  c.pp = 8;
  c.global_batch = 63;
  EXPECT_NE(check().find("--global-batch-size 63 is not divisible by micro batch 1 x DP 2"), std::string::npos);
  c.global_batch = 64;
  c.virtual_stages = 5;
  EXPECT_NE(check().find("not divisible by PP 8 x virtual stages 5"), std::string::npos);
  c.virtual_stages = 3;
  c.global_batch = 36;  // 18 microbatches per pipeline, not a multiple of PP 8
  EXPECT_NE(check().find("microbatch count 18 divisible by PP 8"), std::string::npos);
  c.virtual_stages = 1;
  c.global_batch = 64;
  c.recompute = RecomputeGranularity::Full;
  c.recompute_num_layers = 5;  // 12 layers per stage
  EXPECT_NE(check().find("--recompute-num-layers 5 does not divide the 12 layers"), std::string::npos);
  c.recompute = RecomputeGranularity::None;
  c.precision = Precision::FP8;
  EXPECT_NE(check().find("precision fp8 is not supported by A100-SXM4-80GB"), std::string::npos);
}

TEST_F(InvalidLayout, UnevenStagesMustAddUp) {
  m = load_model("llama3-405b");  // 126 layers: Meta's 7 + 14·8 + 7 on 16 stages
  c.pp = 16;
  c.first_stage_layers = 7;
  c.last_stage_layers = 7;
  EXPECT_EQ(check(), "(no error)");
  EXPECT_EQ(stage_layer_count(m, c, 0), 7);
  EXPECT_EQ(stage_layer_count(m, c, 5), 8);
  c.first_stage_layers = 6;
  EXPECT_NE(check().find("do not divide over 14 middle stages"), std::string::npos);
}

}  // namespace
}  // namespace cc
