// Megatron-Core's --pipeline-model-parallel-layout strings, read as its parse_str_to_list and
// validate_layer_layout read them (megatron/core/transformer/pipeline_parallel_layer_layout.py);
// each expected stage list is counted by hand from the string.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "refusal.h"
#include "sim/pipeline_layout_string.h"

namespace cc {
namespace {

std::vector<int> layers_of(const std::vector<LayoutStage>& stages) {
  std::vector<int> out;
  for (const LayoutStage& s : stages) out.push_back(s.transformer_layers);
  return out;
}

Refusal parse_refusal(const std::string& layout) {
  return refusal_of([&] { parse_pipeline_layout(layout); });
}

TEST(PipelineLayoutString, MetasLlama3LayoutWithoutInterleaving) {
  // Llama 3 405B on 16 stages, the first and last one layer short: 7 + 14 x 8 + 7 = 126.
  const auto stages = parse_pipeline_layout("Et*7|(t*8|)*14,t*7L");
  ASSERT_EQ(stages.size(), 16u);
  EXPECT_EQ(stages.front(), (LayoutStage{7, true, false}));
  EXPECT_EQ(stages.back(), (LayoutStage{7, false, true}));
  for (std::size_t j = 1; j < 15; ++j) EXPECT_EQ(stages[j], (LayoutStage{8, false, false})) << j;
  EXPECT_NO_THROW(check_pipeline_layout("Et*7|(t*8|)*14,t*7L", stages, 126, 0, 16, 1));
}

TEST(PipelineLayoutString, StagesMayHoldOnlyTheEmbeddingOrTheLoss) {
  // 128 virtual stages: the embedding alone, 126 of one layer, the loss alone (PP 16 x 8).
  const auto stages = parse_pipeline_layout("E|(t|)*126,L");
  ASSERT_EQ(stages.size(), 128u);
  EXPECT_EQ(stages.front(), (LayoutStage{0, true, false}));
  EXPECT_EQ(stages[1], (LayoutStage{1, false, false}));
  EXPECT_EQ(stages[126], (LayoutStage{1, false, false}));
  EXPECT_EQ(stages.back(), (LayoutStage{0, false, true}));
  EXPECT_NO_THROW(check_pipeline_layout("E|(t|)*126,L", stages, 126, 0, 16, 8));
}

TEST(PipelineLayoutString, RepeatsUnrollAsMegatronCoreDoes) {
  // MCore's own examples with its letters: "xy(ab|cd|ef)*2,pq" -> "xyab|cd|efab|cd|efpq";
  // "(|ab)*2,cd" -> "|ab|abcd". Here "E(t|tt|)*2,L" -> "Et|tt|t|tt|L": the loss alone last.
  EXPECT_EQ(layers_of(parse_pipeline_layout("E(t|tt|)*2,L")), (std::vector<int>{1, 2, 1, 2, 0}));
  // "Et(|t)*2,L" -> "Et|t|tL".
  EXPECT_EQ(layers_of(parse_pipeline_layout("Et(|t)*2,L")), (std::vector<int>{1, 1, 1}));
  // A group may repeat single characters inside it: "(t*3|)*2" -> "ttt|ttt|".
  EXPECT_EQ(layers_of(parse_pipeline_layout("E(t*3|)*2,L")), (std::vector<int>{3, 3, 0}));
  // "|*2" repeats the separator like any character: "Et|*2tL" -> "Et||tL", an empty stage.
  EXPECT_EQ(layers_of(parse_pipeline_layout("Et|*2tL")), (std::vector<int>{1, 0, 1}));
  // Commas are cosmetic anywhere.
  EXPECT_EQ(layers_of(parse_pipeline_layout("E,t,t|t,L")), (std::vector<int>{2, 1}));
}

TEST(PipelineLayoutString, RefusesWhatMegatronCoreRefuses) {
  // MTP layers in a stage of their own before the loss's (Megatron-Core's standalone MTP): the
  // pricing puts them beside the loss.
  const Refusal mtp = parse_refusal("Ettt|(tt|)*29,m|L");
  EXPECT_NE(mtp.message.find("MTP layers m in virtual stage 30 of 32 (Megatron-Core's standalone MTP stage) are "
                             "not modelled"),
            std::string::npos)
      << mtp.message;
  EXPECT_EQ(mtp.field, "--pipeline-model-parallel-layout");
  EXPECT_NE(parse_refusal("Et|tmtL").message.find("a transformer layer t after an MTP layer m"), std::string::npos);
  EXPECT_NE(parse_refusal("Ex|L").message.find("'x' is not a layer"), std::string::npos);
  // Parentheses do not nest: "((t|)*2)*3" leaves "(t|(t|)*3", whose '(' is no layer.
  EXPECT_NE(parse_refusal("E((t|)*2)*3L").message.find("'(' is not a layer"), std::string::npos);
  // A group without a repeat stays as written.
  EXPECT_NE(parse_refusal("E(t|)L").message.find("'(' is not a layer"), std::string::npos);
  EXPECT_NE(parse_refusal("tE|tL").message.find("the embedding E comes once, as the first layer"),
            std::string::npos);
  EXPECT_NE(parse_refusal("EtE|tL").message.find("the embedding E comes once"), std::string::npos);
  // An empty stage before the embedding: Megatron-Core builds the embedding on the first.
  EXPECT_NE(parse_refusal("|Et|tL").message.find("the embedding E comes once"), std::string::npos);
  EXPECT_NE(parse_refusal("EtL|t").message.find("the loss L comes once, as the last layer"), std::string::npos);
  EXPECT_NE(parse_refusal("Et|tL|").message.find("the loss L comes once"), std::string::npos);
  EXPECT_NE(parse_refusal("Et|t").message.find("the last layer must be the loss L"), std::string::npos);
  EXPECT_NE(parse_refusal("").message.find("the first layer must be the embedding E"), std::string::npos);
  EXPECT_NE(parse_refusal("Et*99999999999L").message.find("more than 1000000 times"), std::string::npos);
  EXPECT_NE(parse_refusal("E(t|)*600000,L").message.find("expands to more than 1000000 characters"),
            std::string::npos);
}

TEST(PipelineLayoutString, ChecksAgainstTheRun) {
  const std::string layout = "Et|tt|t|ttL";  // 4 stages, 6 layers
  const auto stages = parse_pipeline_layout(layout);
  EXPECT_NO_THROW(check_pipeline_layout(layout, stages, 6, 0, 2, 2));
  EXPECT_NO_THROW(check_pipeline_layout(layout, stages, 6, 0, 4, 1));
  const Refusal count = refusal_of([&] { check_pipeline_layout(layout, stages, 6, 0, 3, 1); });
  EXPECT_NE(count.message.find("has 4 virtual stages, not a multiple of --pipeline-model-parallel-size 3"),
            std::string::npos)
      << count.message;
  const Refusal depth = refusal_of([&] { check_pipeline_layout(layout, stages, 6, 0, 2, 1); });
  EXPECT_NE(depth.message.find("2 per rank, but the run has 1 per rank"), std::string::npos) << depth.message;
  const Refusal layers = refusal_of([&] { check_pipeline_layout(layout, stages, 8, 0, 2, 2); });
  EXPECT_NE(layers.message.find("places 6 transformer layers t, but the model has num_layers 8"), std::string::npos)
      << layers.message;
  EXPECT_EQ(layers.field, "--pipeline-model-parallel-layout");
  EXPECT_EQ(layout_virtual_stages(layout, stages, 2, ""), 2);
}

// Megatron-Core's DeepSeek-V3 recipe layout (Megatron-Bridge, PP 16): the MTP layer beside the
// loss in the last stage, counted against mtp_num_layers.
TEST(PipelineLayoutString, MtpLayersSitBesideTheLossAndMatchTheModel) {
  const std::string layout = "Et*4|(t*4|)*14tmL";
  const auto stages = parse_pipeline_layout(layout);
  ASSERT_EQ(stages.size(), 16u);
  EXPECT_EQ(stages.back(), (LayoutStage{1, false, true, 1}));
  EXPECT_NO_THROW(check_pipeline_layout(layout, stages, 61, 1, 16, 1));
  const Refusal none = refusal_of([&] { check_pipeline_layout(layout, stages, 61, 0, 16, 1); });
  EXPECT_NE(none.message.find("places 1 MTP layers m, but the model has mtp_num_layers 0"), std::string::npos)
      << none.message;
  const std::string without = "Et*4|(t*4|)*14tL";
  const Refusal missing =
      refusal_of([&] { check_pipeline_layout(without, parse_pipeline_layout(without), 61, 1, 16, 1); });
  EXPECT_NE(missing.message.find("places 0 MTP layers m, but the model has mtp_num_layers 1; give 1 m before the loss"),
            std::string::npos)
      << missing.message;
}

}  // namespace
}  // namespace cc
