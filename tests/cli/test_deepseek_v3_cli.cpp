// DeepSeek-V3 at its report's layout (arXiv 2412.19437: 2,048 H800s, PP 16, EP 64 over 8 nodes,
// no TP, ZeRO-1) simulates through the real binary, multi-latent attention and the MTP layer
// priced; its per-stage parameters equal a hand count from the architecture.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

std::vector<std::string> deepseek_v3_report_layout() {
  // 61 layers as 3 + 14 x 4 + 2 (the last stage also holds the MTP layer and the loss).
  return {"simulate", "--model", "deepseek-v3", "--cluster", "h800", "--gpus", "2048", "--pp", "16", "--ep", "64",
          "--decoder-first-pipeline-num-layers", "3", "--decoder-last-pipeline-num-layers", "2",
          "--use-distributed-optimizer", "--global-batch-size", "15360", "--micro-batch-size", "1",
          "--moe-token-dispatcher-type", "alltoall", "--moe-grouped-gemm", "--json"};
}

TEST(DeepSeekV3Cli, TheReportsLayoutSimulatesWithHandCountedStageParameters) {
  const RunResult r = run_clustercast(deepseek_v3_report_layout());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["iteration_time_s"].get<double>(), 0);
  const nlohmann::json& stages = j["memory_per_stage"];
  ASSERT_EQ(stages.size(), 16u);
  // One MoE layer at TP 1, EP 64, h 7168, 128 heads:
  //   MLA: q down 7168 x 1536 = 11,010,048 + norm 1,536; q up 1536 x 128 x 192 = 37,748,736;
  //        kv down 7168 x 576 = 4,128,768 + norm 512; kv up 512 x 128 x 256 = 16,777,216;
  //        output 128 x 128 x 7168 = 117,440,512                             -> 187,107,328
  //   two RMSNorms 14,336; router 256 x 7168 + expert bias 256 = 1,835,264;
  //   shared expert 3 x 7168 x 2048 = 44,040,192; 256 / 64 = 4 local experts: 176,160,768
  //                                                                          -> 409,157,888
  const std::int64_t moe_layer = 409157888;
  EXPECT_EQ(stages[1]["parameters"].get<std::int64_t>(), 4 * moe_layer);
  // The last stage: 2 MoE layers, the MTP layer (an MoE layer, its enorm, hnorm and final norm
  // 3 x 7168, its 2h -> h projection 2 x 7168 x 7168 = 102,760,448, and the embedding table
  // 129,280 x 7168 = 926,679,040 it reads), the final norm 7168 and the output table.
  const std::int64_t table = 926679040;
  EXPECT_EQ(stages[15]["parameters"].get<std::int64_t>(),
            3 * moe_layer + 3 * 7168 + 102760448 + table + 7168 + table);
}

}  // namespace
}  // namespace cc::cli_test
