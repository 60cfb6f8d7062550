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

TEST(KernelFusionFlags, TheFusedLossIsFasterAndHoldsMoreAndUnfusedRopeIsSlower) {
  const auto plain = json_output(kLlama);
  const auto fused_loss = json_output(with(kLlama, {"--cross-entropy-loss-fusion"}));
  const auto plain_rope = json_output(with(kLlama, {"--no-rope-fusion"}));
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
  const auto fused = json_output({"simulate", "--config", kFunctional + "gpt3_mcore_te_tp2_pp2_cross_entropy_loss_fusion.args",
                                    "--framework", "megatron-core-ci", "--cluster", "dgx-h100", "--gpus", "8", "--json"});
  ASSERT_TRUE(fused.contains("config"));
  EXPECT_EQ(fused.at("config").at("cross_entropy_loss_fusion"), true);
  const auto rope = json_output({"simulate", "--config",
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
  const auto json = json_output({"simulate", "--config", dir.file("best.json"), "--json"});
  const auto args = json_output({"simulate", "--config", dir.file("best.args"), "--json"});
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

// Megatron-LM's deterministic mode asserts the plain loss: the export of a run of the
// functional-test stack with the fused loss leaves --deterministic-mode out, as that stack's own
// fused-loss tests do, and reads back to its own prediction.
TEST(KernelFusionFlags, TheFunctionalTestStacksExportOfTheFusedLossLeavesDeterministicModeOut) {
  const TempDir dir;
  const RunResult search = run_clustercast(
      {"search", "--model", "llama3-8b", "--gpus", "8", "--global-batch-size", "64", "--framework", "megatron-core-ci",
       "--cross-entropy-loss-fusion", "--top", "1", "--export-megatron", dir.file("ci.args"), "--export",
       dir.file("ci.json")});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  const std::string text = read_file(dir.file("ci.args"));
  EXPECT_NE(text.find("--cross-entropy-loss-fusion"), std::string::npos);
  EXPECT_EQ(text.find("--deterministic-mode"), std::string::npos) << text;
  const auto args = json_output({"simulate", "--config", dir.file("ci.args"), "--json"});
  const auto json = json_output({"simulate", "--config", dir.file("ci.json"), "--json"});
  ASSERT_TRUE(args.contains("iteration_time_s") && json.contains("iteration_time_s"));
  EXPECT_EQ(args.at("iteration_time_s"), json.at("iteration_time_s"));
  // Without the fusion the stack's deterministic kernels are written, as before.
  const RunResult plain = run_clustercast({"search", "--model", "llama3-8b", "--gpus", "8", "--global-batch-size", "64",
                                           "--framework", "megatron-core-ci", "--top", "1", "--export-megatron",
                                           dir.file("plain.args")});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(read_file(dir.file("plain.args")).find("--deterministic-mode"), std::string::npos);
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
  // te in a file beside the fusion on the command line is the same run: refused too.
  const TempDir dir;
  write_file(dir.file("te.args"), "--cross-entropy-fusion-impl te\n");
  const RunResult split = run_clustercast(with(kLlama, {"--config", dir.file("te.args"), "--cross-entropy-loss-fusion"}));
  EXPECT_EQ(split.exit_code, 2);
  EXPECT_NE(split.err.find("--cross-entropy-fusion-impl te beside --cross-entropy-loss-fusion"), std::string::npos)
      << split.err;
  // A stack whose Megatron-LM has no fused loss refuses it, in simulate and in search.
  const RunResult old_stack = run_clustercast(with(kLlama, {"--cross-entropy-loss-fusion", "--framework", "megatron-2021"}));
  EXPECT_EQ(old_stack.exit_code, 2);
  EXPECT_NE(old_stack.err.find("--cross-entropy-loss-fusion under stack 'megatron-2021'"), std::string::npos)
      << old_stack.err;
  const RunResult old_search = run_clustercast({"search", "--model", "llama3-8b", "--gpus", "8", "--global-batch-size",
                                                "32", "--cross-entropy-loss-fusion", "--framework", "megatron-deepspeed"});
  EXPECT_EQ(old_search.exit_code, 2);
  EXPECT_NE(old_search.err.find("stacks with it: megatron-core, megatron-core-ci, nemo"), std::string::npos)
      << old_search.err;
  // Megatron-LM's checkpoint formats only; the FSDP ones need an FSDP it asserts.
  for (const auto& [format, message] : {std::pair{"bogus", "--ckpt-format 'bogus' is not one of Megatron-LM's"},
                                        std::pair{"torch_dcp", "--ckpt-format torch_dcp needs --use-torch-fsdp2"}}) {
    const RunResult r = run_clustercast(with(kLlama, {"--ckpt-format", format}));
    EXPECT_EQ(r.exit_code, 2) << format;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  // Without the fusion the implementation changes nothing, as in Megatron-LM.
  const auto te = json_output(with(kLlama, {"--cross-entropy-fusion-impl", "te"}));
  EXPECT_EQ(te.at("iteration_time_s"), json_output(kLlama).at("iteration_time_s"));
}

}  // namespace
}  // namespace cc::cli_test
