// Context parallelism through the real binary: the CP layouts of Megatron-Bridge's Llama 3
// pre-training recipes, entered as the flags a user would type, simulate as written; and an
// export of a CP layout reads back to the same prediction.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

// NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/recipes/llama/h100/llama3.py at commit
// 067f987df03b8355b03192d88d70f1709fedf51a: every pre-training recipe with
// context_parallel_size > 1, its GPU count from the recipe's name, its layout as the recipe
// sets it (micro batch 1, global batch 512, the distributed optimizer).
struct BridgeRecipe {
  const char* name;
  const char* model;
  int gpus, tp, pp, virtual_stages, cp, seq_length;
  bool sequence_parallel;
  std::vector<std::string> extra;
};

std::vector<BridgeRecipe> bridge_cp_recipes() {
  return {
      {"llama3_8b_pretrain_2gpu", "llama3-8b", 2, 1, 1, 1, 2, 8192, false, {}},
      {"llama3_8b_pretrain_16gpu_16k", "llama3-8b", 16, 4, 2, 1, 2, 16384, true, {}},
      {"llama3_8b_pretrain_32gpu_64k", "llama3-8b", 32, 4, 2, 1, 4, 65536, true, {}},
      {"llama3_8b_pretrain_64gpu_128k", "llama3-8b", 64, 4, 2, 1, 8, 131072, true, {}},
      {"llama3_70b_pretrain_32gpu", "llama3-70b", 32, 4, 4, 5, 2, 8192, true, {}},
      {"llama3_70b_pretrain_32gpu_16k", "llama3-70b", 32, 8, 2, 1, 2, 16384, true, {}},
      {"llama3_70b_pretrain_256gpu_64k", "llama3-70b", 256, 8, 4, 1, 8, 65536, true, {}},
      {"llama31_70b_pretrain_32gpu_128k", "llama3-70b", 32, 4, 4, 5, 2, 131072, true, {}},
      {"llama31_405b_pretrain_256gpu_128k",
       "llama3-405b",
       256,
       8,
       8,
       2,
       4,
       131072,
       true,
       {"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split", "--tp-comm-overlap"}},
  };
}

std::vector<std::string> recipe_flags(const BridgeRecipe& r) {
  std::vector<std::string> args = {"simulate",
                                   "--model",
                                   r.model,
                                   "--cluster",
                                   "dgx-h100",
                                   "--gpus",
                                   std::to_string(r.gpus),
                                   "--tensor-model-parallel-size",
                                   std::to_string(r.tp),
                                   "--pipeline-model-parallel-size",
                                   std::to_string(r.pp),
                                   "--context-parallel-size",
                                   std::to_string(r.cp),
                                   "--seq-length",
                                   std::to_string(r.seq_length),
                                   "--micro-batch-size",
                                   "1",
                                   "--global-batch-size",
                                   "512",
                                   "--use-distributed-optimizer",
                                   "--overlap-grad-reduce",
                                   "--overlap-param-gather",
                                   "--bf16",
                                   "--json"};
  if (r.sequence_parallel) args.push_back("--sequence-parallel");
  if (r.virtual_stages > 1) {
    args.push_back("--num-virtual-stages-per-pipeline-rank");
    args.push_back(std::to_string(r.virtual_stages));
  }
  args.insert(args.end(), r.extra.begin(), r.extra.end());
  return args;
}

TEST(ContextParallelCli, MegatronBridgesCpRecipesSimulateAsWritten) {
  for (const BridgeRecipe& r : bridge_cp_recipes()) {
    const auto doc = json_output(recipe_flags(r));
    if (doc.empty()) {
      ADD_FAILURE() << r.name;
      continue;
    }
    const auto& c = doc.at("config");
    EXPECT_EQ(c.at("context_parallel_size"), r.cp) << r.name;
    EXPECT_EQ(c.at("cp_comm_type"), "p2p") << r.name;  // Megatron-Core's default
    EXPECT_EQ(c.at("data_parallel_size"), r.gpus / (r.tp * r.pp * r.cp)) << r.name;
    EXPECT_EQ(c.at("virtual_pipeline_stages"), r.virtual_stages) << r.name;
    EXPECT_GT(doc.at("iteration_time_s").get<double>(), 0) << r.name;
  }
}

// Each export of a CP layout `search` found (JSON, Megatron-LM arguments, NeMo YAML) is read
// back by `simulate --config` as the same layout with the same prediction.
TEST(ContextParallelCli, ExportsOfACpLayoutRoundTrip) {
  const TempDir dir;
  const RunResult found = run_clustercast(
      {"search", "--model", "llama3-70b", "--cluster", "dgx-h100", "--gpus", "64", "--seq-length", "32768",
       "--global-batch-size", "64", "--tp", "4", "--cp", "2", "--pp", "4", "--cp-comm-type", "a2a",
       "--micro-batch-size", "1", "--sequence-parallel", "--use-distributed-optimizer", "--use-flash-attn", "--json",
       "--export", dir.file("cp.json"), "--export-megatron", dir.file("cp.args"), "--export-nemo", dir.file("cp.yaml")});
  ASSERT_EQ(found.exit_code, 0) << found.err;
  const auto best = nlohmann::json::parse(found.out).at("results").at(0);
  EXPECT_EQ(best.at("config").at("context_parallel_size"), 2);
  EXPECT_EQ(best.at("config").at("cp_comm_type"), "a2a");
  for (const char* file : {"cp.json", "cp.args", "cp.yaml"}) {
    const auto again = json_output({"simulate", "--config", dir.file(file), "--json"});
    ASSERT_FALSE(again.empty()) << file;
    EXPECT_EQ(again.at("config"), best.at("config")) << file;
    EXPECT_EQ(again.at("iteration_time_s"), best.at("iteration_time_s")) << file;
    EXPECT_EQ(again.at("peak_memory_gib"), best.at("peak_memory_gib")) << file;
  }
}

}  // namespace
}  // namespace cc::cli_test
