// Megatron-LM's --cross-entropy-loss-fusion and --no-rope-fusion as a user gives them: on the
// simulate command line, in Megatron-LM's own functional-test files, to search and its exports;
// and the launch lines Megatron-LM refuses beside them, refused by name with nothing written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <filesystem>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

const std::string kFunctional = std::string(CLUSTERCAST_SOURCE_DIR) + "/tests/reference/megatron/functional/";
const std::vector<std::string> kLlama = {"simulate", "--model", "llama3-8b", "--gpus", "8", "--tp", "2",
                                         "--micro-batch-size", "1", "--global-batch-size", "32", "--json"};

nlohmann::json simulate_json(const std::vector<std::string>& args) {
  const RunResult r = run_clustercast(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(r.out);
}

TEST(KernelFusionFlags, TheFusedLossIsFasterAndHoldsMoreAndUnfusedRopeIsSlower) {
  const auto plain = simulate_json(kLlama);
  const auto fused_loss = simulate_json(with(kLlama, {"--cross-entropy-loss-fusion"}));
  const auto plain_rope = simulate_json(with(kLlama, {"--no-rope-fusion"}));
  ASSERT_TRUE(plain.contains("iteration_time_s") && fused_loss.contains("config") && plain_rope.contains("config"));
  EXPECT_EQ(fused_loss.at("config").at("cross_entropy_loss_fusion"), true);
  EXPECT_FALSE(plain.at("config").contains("cross_entropy_loss_fusion"));
  EXPECT_EQ(plain_rope.at("config").at("apply_rope_fusion"), false);
  EXPECT_LT(fused_loss.at("iteration_time_s").get<double>(), plain.at("iteration_time_s").get<double>());
  EXPECT_GT(fused_loss.at("peak_memory_gib").get<double>(), plain.at("peak_memory_gib").get<double>());
  EXPECT_GT(plain_rope.at("iteration_time_s").get<double>(), plain.at("iteration_time_s").get<double>());
  EXPECT_EQ(plain_rope.at("peak_memory_gib"), plain.at("peak_memory_gib"));
}

// Megatron-LM's own test cases of both switches are read and simulated as its CI runs them.
TEST(KernelFusionFlags, MegatronsFunctionalTestsOfBothSwitchesAreRead) {
  const auto fused = simulate_json({"simulate", "--config", kFunctional + "gpt3_mcore_te_tp2_pp2_cross_entropy_loss_fusion.args",
                                    "--framework", "megatron-core-ci", "--cluster", "dgx-h100", "--gpus", "8", "--json"});
  ASSERT_TRUE(fused.contains("config"));
  EXPECT_EQ(fused.at("config").at("cross_entropy_loss_fusion"), true);
  const auto rope = simulate_json({"simulate", "--config",
                                   kFunctional + "gpt3_mcore_te_tp1_pp2_rope_embeddings_interleaved_no_fusion.args",
                                   "--framework", "megatron-core-ci", "--cluster", "dgx-h100", "--gpus", "8", "--json"});
  ASSERT_TRUE(rope.contains("config"));
  EXPECT_EQ(rope.at("config").at("apply_rope_fusion"), false);
}

TEST(KernelFusionFlags, SearchAppliesThemAndItsExportsReadBackToTheirOwnPrediction) {
  const TempDir dir;
  const RunResult search = run_clustercast(
      {"search", "--model", "llama3-8b", "--gpus", "16", "--global-batch-size", "64", "--cross-entropy-loss-fusion",
       "--no-rope-fusion", "--top", "1", "--export-megatron", dir.file("best.args"), "--export", dir.file("best.json")});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  const std::string args_text = read_file(dir.file("best.args"));
  EXPECT_NE(args_text.find("--cross-entropy-loss-fusion"), std::string::npos);
  EXPECT_NE(args_text.find("--no-rope-fusion"), std::string::npos);
  const auto json = simulate_json({"simulate", "--config", dir.file("best.json"), "--json"});
  const auto args = simulate_json({"simulate", "--config", dir.file("best.args"), "--json"});
  ASSERT_TRUE(json.contains("config") && args.contains("config"));
  EXPECT_EQ(json.at("config").at("cross_entropy_loss_fusion"), true);
  EXPECT_EQ(json.at("config").at("apply_rope_fusion"), false);
  EXPECT_EQ(args.at("config"), json.at("config"));
  EXPECT_EQ(args.at("iteration_time_s"), json.at("iteration_time_s"));
  // NeMo's base config has no key for the fused loss: refused by name, nothing written.
  const RunResult nemo =
      run_clustercast({"search", "--model", "llama3-8b", "--gpus", "16", "--global-batch-size", "64",
                       "--cross-entropy-loss-fusion", "--top", "1", "--export-nemo", dir.file("n.yaml")});
  EXPECT_EQ(nemo.exit_code, 2);
  EXPECT_NE(nemo.err.find("--cross-entropy-loss-fusion has no key"), std::string::npos) << nemo.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("n.yaml")));
}

TEST(KernelFusionFlags, WhatMegatronRefusesBesideThemIsRefusedByName) {
  struct Case {
    std::vector<std::string> flags;
    const char* message;
  };
  const Case cases[] = {
      {{"--cross-entropy-loss-fusion", "--cross-entropy-fusion-impl", "te"},
       "--cross-entropy-fusion-impl te beside --cross-entropy-loss-fusion: Megatron-LM refuses it"},
      {{"--cross-entropy-fusion-impl", "triton"}, "--cross-entropy-fusion-impl 'triton' is not one of Megatron-LM's: "
                                                  "native, te"},
      {{"--cross-entropy-loss-fusion", "--deterministic-mode", "--framework", "megatron-core-ci"},
       "--deterministic-mode beside --cross-entropy-loss-fusion: Megatron-LM refuses it"},
  };
  for (const Case& c : cases) {
    const RunResult r = run_clustercast(with(kLlama, c.flags));
    EXPECT_EQ(r.exit_code, 2) << c.message;
    EXPECT_TRUE(r.out.empty()) << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  // Without the fusion the implementation changes nothing, as in Megatron-LM.
  const auto te = simulate_json(with(kLlama, {"--cross-entropy-fusion-impl", "te"}));
  EXPECT_EQ(te.at("iteration_time_s"), simulate_json(kLlama).at("iteration_time_s"));
}

}  // namespace
}  // namespace cc::cli_test
