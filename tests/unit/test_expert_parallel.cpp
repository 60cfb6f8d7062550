// Expert parallelism as Megatron-Core lays it out: the expert grid folded over the ranks of the
// dense one (its expert RankGenerator, order "tp-cp-ep-dp-pp" with ETP, CP 1 and EDP), rank
// groups counted by hand; the layout rules that refuse EP and ETP, each by its flag; and the
// config's own spelling of them (summary, JSON).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/layout_validation.h"
#include "sim/parallel_config.h"
#include "sim/presets.h"
#include "refusal.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

using Groups = std::vector<std::vector<int>>;

// 16 GPUs as TP 2 x PP 2 x DP 4, with sequence parallelism (Megatron-Core asks for it beside
// EP and TP), micro batch 1 and one microbatch per DP rank.
ParallelConfig sixteen_gpus(int ep, int etp) {
  ParallelConfig c = layout_test::layout(2, 2, 4, 1, 4);
  c.ep = ep;
  c.etp = etp;
  c.sequence_parallel = true;
  return c;
}

TEST(ExpertGrid, EpFourEtpOneOnSixteenGpus) {
  // EDP = TP 2 x CP 1 x DP 4 / (EP 4 x ETP 1) = 2; expert rank = ep + 4·(edp + 2·pp).
  const ParallelConfig c = sixteen_gpus(4, 1);
  EXPECT_EQ(c.expert_dp(), 2);
  const ParallelGrid g = c.expert_grid();
  EXPECT_EQ(g.world_size(), 16);
  EXPECT_EQ(g.order(), "etp-ep-edp-pp");
  EXPECT_EQ(g.groups("ep"), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
  EXPECT_EQ(g.groups("edp"), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}}));
  EXPECT_EQ(g.group(5, "etp"), (std::vector<int>{5}));
  // Dense rank = tp + 2·(dp + 4·pp): the pipeline groups of both grids are the same ranks, as
  // Megatron-Core asserts.
  const Groups pp = {{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}};
  EXPECT_EQ(g.groups("pp"), pp);
  EXPECT_EQ(c.grid().groups("pp"), pp);
}

TEST(ExpertGrid, EtpTwoIsInnermostAndIsTpWhenNotGiven) {
  // EP 2 x ETP 2, EDP = 8 / 4 = 2; expert rank = etp + 2·(ep + 2·(edp + 2·pp)).
  for (const int etp : {2, 0}) {  // 0: not given, so TP 2 (Megatron-LM's arguments.py)
    const ParallelConfig c = sixteen_gpus(2, etp);
    EXPECT_EQ(c.expert_tp(), 2);
    const ParallelGrid g = c.expert_grid();
    EXPECT_EQ(g.groups("etp"), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
    EXPECT_EQ(g.groups("ep"), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
    EXPECT_EQ(g.group(3, "edp"), (std::vector<int>{3, 7}));
    EXPECT_EQ(g.group(9, "etp-ep"), (std::vector<int>{8, 9, 10, 11}));
  }
}

TEST(ExpertGrid, WithoutExpertParallelismTheGroupsAreTheDenseOnes) {
  // EP 1 and ETP = TP at CP 1: the expert groups are the dense ones (ETP the TP, EDP the DP groups).
  ParallelConfig c = sixteen_gpus(1, 0);
  c.sequence_parallel = false;
  EXPECT_EQ(c.expert_grid().groups("etp"), c.grid().groups("tp"));
  EXPECT_EQ(c.expert_grid().groups("edp"), c.grid().groups("dp"));
}

TEST(ExpertParallelRules, EpMustDivideTheRoutedExperts) {
  const ModelSpec mixtral = load_model("mixtral-8x7b");  // 8 routed experts
  const ParallelConfig c = sixteen_gpus(4, 1);
  ParallelConfig three = c;
  three.ep = 3;
  three.dp = 6;  // TP 2 x DP 6 = 12 ranks per stage, so EP 3 x ETP 1 folds
  three.global_batch = 6;
  const Refusal r = refusal_of([&] { validate_layout(three, mixtral, 24); });
  EXPECT_EQ(r.field, "--expert-model-parallel-size");
  EXPECT_NE(r.message.find("--expert-model-parallel-size 3 does not divide the 8 routed experts"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("valid: 1, 2, 4, 8"), std::string::npos) << r.message;
}

TEST(ExpertParallelRules, EpTimesEtpMustDivideTheRanksOfAStage) {
  const ModelSpec mixtral = load_model("mixtral-8x7b");
  // EP 8 x ETP 2 = 16 ranks, but a stage holds TP 2 x DP 4 = 8.
  const Refusal r = refusal_of([&] { validate_layout(sixteen_gpus(8, 2), mixtral, 16); });
  EXPECT_EQ(r.field, "--expert-model-parallel-size");
  EXPECT_NE(r.message.find("EP 8 x ETP 2 = 16 does not divide TP 2 x CP 1 x DP 4 = 8"), std::string::npos)
      << r.message;
}

TEST(ExpertParallelRules, EpWithTpNeedsSequenceParallelism) {
  ParallelConfig c = sixteen_gpus(4, 1);
  c.sequence_parallel = false;
  const Refusal r = refusal_of([&] { validate_layout(c, load_model("mixtral-8x7b"), 16); });
  EXPECT_EQ(r.field, "--sequence-parallel");
}

TEST(ExpertParallelRules, EtpAboveOneRefusesBiasedExperts) {
  ModelSpec biased = load_model("mixtral-8x7b");
  biased.moe.expert_linear_biases = true;  // as gpt-oss's experts
  const Refusal r = refusal_of([&] { validate_layout(sixteen_gpus(2, 2), biased, 16); });
  EXPECT_EQ(r.field, "--expert-tensor-parallel-size");
}

TEST(ExpertParallelRules, ADenseModelTakesNoExpertParallelism) {
  const ModelSpec gpt = load_model("gpt3-175b");  // 96 heads: TP 2 divides them
  Refusal r = refusal_of([&] { validate_layout(sixteen_gpus(2, 0), gpt, 16); });
  EXPECT_EQ(r.field, "--expert-model-parallel-size");
  EXPECT_NE(r.message.find("has no experts"), std::string::npos) << r.message;
  r = refusal_of([&] { validate_layout(sixteen_gpus(1, 1), gpt, 16); });
  EXPECT_EQ(r.field, "--expert-tensor-parallel-size");
  EXPECT_NE(r.message.find("give TP 2"), std::string::npos) << r.message;
  // ETP given equal to TP is what Megatron-LM sets anyway.
  EXPECT_EQ(refusal_of([&] { validate_layout(sixteen_gpus(1, 2), gpt, 16); }).message, "(no error)");
}

TEST(ExpertParallelRules, AValidMixtureLayoutPassesEveryRule) {
  // Every expert rule passes, and MoE layers are priced, so nothing is refused.
  const Refusal r = refusal_of([&] { validate_layout(sixteen_gpus(4, 1), load_model("mixtral-8x7b"), 16); });
  EXPECT_EQ(r.message, "(no error)");
}

TEST(ExpertParallelConfig, SummaryAndJsonSpellEpAndEtp) {
  const ParallelConfig c = sixteen_gpus(4, 1);
  EXPECT_NE(c.summary().find("dp4 ep4 etp1 allgather sp"), std::string::npos) << c.summary();
  EXPECT_EQ(sixteen_gpus(1, 0).summary().find("ep"), std::string::npos);  // a dense layout reads as before
  ParallelConfig flex = c;
  flex.moe.dispatcher = TokenDispatcher::Flex;
  flex.moe.flex_backend = FlexBackend::HybridEP;
  EXPECT_NE(flex.summary().find("ep4 etp1 flex-hybridep sp"), std::string::npos) << flex.summary();
  const nlohmann::json j = config_to_json(c);
  EXPECT_EQ(j.at("expert_model_parallel_size"), 4);
  EXPECT_EQ(j.at("expert_tensor_parallel_size"), 1);
  const ParallelConfig back = config_from_json(j, "c.json");
  EXPECT_EQ(back.ep, 4);
  EXPECT_EQ(back.etp, 1);
  EXPECT_FALSE(config_to_json(sixteen_gpus(1, 0)).contains("expert_model_parallel_size"));
}

}  // namespace
}  // namespace cc
