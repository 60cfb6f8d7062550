// RoPE's base period travels with the model: read from every input format, written into every
// export and read back, so an exported Llama 3 trains with θ = 500,000 (its published value,
// Dubey et al. 2024 Table 3), not Megatron-LM's default of 10,000.
#include <gtest/gtest.h>

#include <fstream>

#include "interop/hf_config.h"
#include "interop/layout_files.h"
#include "sim/model_spec.h"
#include "test_layout_files_support.h"

namespace cc::layout_test {
namespace {

nlohmann::json hf_file(const std::string& name) {
  std::ifstream in(reference("hf-configs/" + name));
  return nlohmann::json::parse(in);
}

TEST(RotaryBase, HuggingFaceConfigsGiveTheirRopeTheta) {
  EXPECT_EQ(model_from_hf_config(hf_file("llama-3.1-8b.json"), "llama", 8192).model.rotary_base, 500000);
  EXPECT_EQ(model_from_hf_config(hf_file("mixtral-8x7b-v0.1.json"), "mixtral", 4096).model.rotary_base, 1e6);
  // Llama 2's file leaves it out: transformers' default, 10,000, as in its paper.
  EXPECT_EQ(model_from_hf_config(hf_file("llama-2-7b-hf.json"), "llama2", 4096).model.rotary_base, 10000);
  // Learned positions have no base: GPT-2's file is read without one.
  EXPECT_EQ(model_from_hf_config(hf_file("gpt2.json"), "gpt2", 1024).model.rotary_base,
            ModelSpec::kDefaultRotaryBase);
}

TEST(RotaryBase, PresetsCarryTheirPublishedBase) {
  EXPECT_EQ(load_model("llama3-8b").rotary_base, 500000);
  EXPECT_EQ(load_model("llama3-405b").rotary_base, 500000);
  EXPECT_EQ(load_model("llama2-7b").rotary_base, 10000);
  EXPECT_EQ(load_model("mixtral-8x7b").rotary_base, 1e6);
}

TEST(RotaryBase, EveryExportWritesItAndReadsItBack) {
  const SimResult r = simulated(load_model("llama3-8b"), layout(1, 1, 8, 1, 64), "dgx-h100");
  const std::string args = megatron_arguments(r, {});
  EXPECT_NE(args.find("--rotary-base 500000\n"), std::string::npos) << args;
  for (const auto& [text, where] : {std::pair{args, std::string("a.args")}, {nemo_yaml(r, {}), "a.yaml"},
                                    {layout_json(r, {}), "a.json"}}) {
    const LayoutFile f = parse_layout_text(text, where);
    ASSERT_TRUE(f.model) << where;
    EXPECT_EQ(f.model->rotary_base, 500000) << where;
  }
}

TEST(RotaryBase, MegatronLeavesItAsideBesideLearnedPositions) {
  // Megatron-LM reads --rotary-base for rope positions only.
  const std::string gpt = "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "
                          "--max-position-embeddings 128 --vocab-size 512 --micro-batch-size 1 "
                          "--global-batch-size 8 --rotary-base 500000\n";
  const LayoutFile learned = parse_layout_text(gpt, "gpt.args");
  ASSERT_TRUE(learned.model);
  EXPECT_EQ(learned.model->rotary_base, ModelSpec::kDefaultRotaryBase);
  const LayoutFile rope = parse_layout_text("--position-embedding-type rope " + gpt, "rope.args");
  ASSERT_TRUE(rope.model);
  EXPECT_EQ(rope.model->rotary_base, 500000);
}

TEST(RotaryBase, OutOfRangeOrOnAnotherPositionKindIsRefused) {
  ModelSpec m = load_model("llama3-8b");
  m.rotary_base = 0;
  EXPECT_NE(error_of([&] { m.validate("m.json"); }).find("rotary_base is 0; it must be a number from 1 to 1e+12"),
            std::string::npos);
  m = load_model("gpt3-175b");
  m.rotary_base = 500000;
  EXPECT_NE(error_of([&] { m.validate("m.json"); }).find("rotary_base 500000 on a model with learned positions"),
            std::string::npos)
      << error_of([&] { m.validate("m.json"); });
  // A RoPE base Megatron-LM's integer flag cannot hold is refused by that export alone.
  ModelSpec odd = load_model("llama3-8b");
  odd.rotary_base = 10000.5;
  const SimResult r = simulated(odd, layout(1, 1, 8, 1, 64), "dgx-h100");
  EXPECT_NE(error_of([&] { megatron_arguments(r, {}); }).find("--rotary-base takes a whole number"),
            std::string::npos);
  EXPECT_NE(nemo_yaml(r, {}).find("rotary_base: 10000.5"), std::string::npos);
}

// One range for every reader: a base the model takes, a NeMo YAML carrying it reads back (it
// once stopped at 2^31 - 1 there), and one past the range is refused by both, with one bound.
TEST(RotaryBase, EveryReaderTakesTheSameRange) {
  ModelSpec big = load_model("llama3-8b");
  big.rotary_base = 5e10;
  big.validate("m.json");
  const std::string yaml = nemo_yaml(simulated(big, layout(1, 1, 8, 1, 64), "dgx-h100"), {});
  const LayoutFile f = parse_layout_text(yaml, "a.yaml");
  ASSERT_TRUE(f.model);
  EXPECT_EQ(f.model->rotary_base, 5e10);
  std::string past = yaml;
  const std::size_t at = past.find("rotary_base: ");
  ASSERT_NE(at, std::string::npos);
  past.replace(at, past.find('\n', at) - at, "rotary_base: 2.0e12");
  EXPECT_NE(error_of([&] { parse_layout_text(past, "a.yaml"); }).find("it must be a number from 1 to 1e+12"),
            std::string::npos)
      << error_of([&] { parse_layout_text(past, "a.yaml"); });
  big.rotary_base = 2e12;
  EXPECT_NE(error_of([&] { big.validate("m.json"); }).find("it must be a number from 1 to 1e+12"), std::string::npos);
}

}  // namespace
}  // namespace cc::layout_test
