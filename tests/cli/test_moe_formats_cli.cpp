// MoE layouts through the real binary's Megatron-LM and NeMo exports: `search --export-megatron`
// and `--export-nemo` write the expert model flags and keys, and `simulate --config` reads each
// file back to the prediction of the layout that was exported (issue 31, acceptance 7).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

void expect_exports_read_back(const std::vector<std::string>& search) {
  const TempDir dir;
  const nlohmann::json found = json_output(with(search, {"--json"}));
  ASSERT_TRUE(found.contains("results"));
  const nlohmann::json& best = found["results"][0];
  // The model's own count (search's JSON lists layouts, not the model): the preset simulated alone.
  const nlohmann::json model = json_output({"simulate", "--model", search.at(2), "--gpus", "1", "--json"});
  const RunResult s = run_clustercast(
      with(search, {"--export-megatron", dir.file("best.args"), "--export-nemo", dir.file("best.yaml")}));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  for (const char* file : {"best.args", "best.yaml"}) {
    const nlohmann::json back = json_output({"simulate", "--config", dir.file(file), "--json"});
    ASSERT_TRUE(back.contains("iteration_time_s")) << file;
    EXPECT_EQ(back["iteration_time_s"], best["iteration_time_s"]) << file;
    EXPECT_EQ(back["peak_memory_gib"], best["peak_memory_gib"]) << file;
    EXPECT_EQ(back["parameters_total"], model["parameters_total"]) << file;
    EXPECT_EQ(back["parameters_active"], model["parameters_active"]) << file;
    EXPECT_EQ(back["config"]["expert_model_parallel_size"], best["config"]["expert_model_parallel_size"]) << file;
  }
  const std::string args = read_file(dir.file("best.args"));
  EXPECT_NE(args.find("--num-experts "), std::string::npos) << args;
  EXPECT_NE(read_file(dir.file("best.yaml")).find("num_moe_experts: "), std::string::npos);
}

TEST(MoeFormatsCli, MixtralsMegatronAndNemoExportsReadBackToTheirPrediction) {
  expect_exports_read_back({"search", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "64",
                            "--global-batch-size", "256", "--tp", "2", "--pp", "4"});
}

TEST(MoeFormatsCli, Qwen3MoesMegatronAndNemoExportsReadBackToTheirPrediction) {
  expect_exports_read_back({"search", "--model", "qwen3-30b-a3b", "--cluster", "dgx-h100", "--gpus", "32",
                            "--global-batch-size", "256", "--tp", "1", "--pp", "2"});
}

TEST(MoeFormatsCli, ModelFlagsOnTheCommandLineMakeAPresetMoe) {
  // --num-experts over a dense preset: Megatron-LM's defaults fill the rest (top-2, experts as
  // wide as the FFN), and the count follows: 8 experts of 3 x 4096 x 14336 per layer.
  const nlohmann::json dense = json_output({"simulate", "--model", "llama3-8b", "--gpus", "8", "--json"});
  const nlohmann::json moe = json_output({"simulate", "--model", "llama3-8b", "--gpus", "8", "--num-experts", "8", "--json"});
  const long long expert = 3LL * 4096 * 14336, router = 4096LL * 8;
  EXPECT_EQ(moe["parameters_total"].get<long long>() - dense["parameters_total"].get<long long>(),
            32 * (7 * expert + router));
  EXPECT_EQ(moe["parameters_active"].get<long long>() - dense["parameters_active"].get<long long>(),
            32 * (expert + router));
}

}  // namespace
}  // namespace cc::cli_test
