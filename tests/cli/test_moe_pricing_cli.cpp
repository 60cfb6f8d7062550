// MoE layouts through the real binary: Mixtral-8x7B at EP 8 simulates with its expert-parallel
// communication reported as its own term, the dispatcher and the overlap flags change what is
// exposed, and a searched MoE layout exported as JSON reads back to its own prediction.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

nlohmann::json run_json(const std::vector<std::string>& args) {
  const RunResult r = run_clustercast(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(r.out);
}

std::vector<std::string> mixtral_ep8() {
  return {"simulate", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "64", "--tp", "2", "--pp", "4",
          "--ep", "8", "--sequence-parallel", "--json"};
}

TEST(MoePricingCli, MixtralAtEp8SimulatesWithItsExpertCommunication) {
  const nlohmann::json j = run_json(mixtral_ep8());
  ASSERT_TRUE(j.contains("time_breakdown_s"));
  const nlohmann::json& b = j["time_breakdown_s"];
  // EP 8 x ETP 2 spans two 8-GPU nodes: the dispatch leaves the node, so it costs time.
  EXPECT_GT(b["ep_communication"].get<double>(), 0);
  double sum = 0;
  for (const auto& [name, seconds] : b.items()) sum += seconds.get<double>();
  EXPECT_NEAR(sum, j["iteration_time_s"].get<double>(), 1e-6 * sum);  // the terms add up
  EXPECT_EQ(j["parameters_total"], 46702792704);
}

TEST(MoePricingCli, MemoryNamesTheRoutedExpertsShareForMoeModelsOnly) {
  const nlohmann::json j = run_json(mixtral_ep8());
  const nlohmann::json& m = j["memory_gib"];
  ASSERT_TRUE(m.contains("experts"));
  // A share of weights, gradients and optimizer state (the bulk of Mixtral's), not a sixth part.
  const double state = m["weights"].get<double>() + m["gradients"].get<double>() + m["optimizer"].get<double>();
  EXPECT_GT(m["experts"].get<double>(), 0.5 * state);
  EXPECT_LT(m["experts"].get<double>(), state);
  EXPECT_TRUE(j["memory_per_stage"][0]["memory_gib"].contains("experts"));
  const nlohmann::json dense = run_json({"simulate", "--model", "gpt3-1.3b", "--gpus", "8", "--json"});
  EXPECT_FALSE(dense["memory_gib"].contains("experts"));
}

TEST(MoePricingCli, OverlapHidesOnlyWhenAsked) {
  std::vector<std::string> a2a = with(mixtral_ep8(), {"--moe-token-dispatcher-type", "alltoall"});
  // --overlap-moe-expert-parallel-comm needs virtual stages when PP > 1 (Megatron-Core's rule).
  // (and the interleaved schedule a microbatch count divisible by PP: 64 / DP 8 = 8).
  a2a = with(a2a, {"--num-layers-per-virtual-pipeline-stage", "4", "--global-batch-size", "64"});
  const double plain = run_json(a2a)["time_breakdown_s"]["ep_communication"].get<double>();
  const double hidden =
      run_json(with(a2a, {"--overlap-moe-expert-parallel-comm"}))["time_breakdown_s"]["ep_communication"].get<double>();
  EXPECT_GT(plain, 0);
  EXPECT_LT(hidden, plain);
}

TEST(MoePricingCli, AnExportedMoeLayoutReadsBackToItsOwnPrediction) {
  TempDir dir;
  const std::vector<std::string> search = {"search", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus",
                                           "64", "--global-batch-size", "256", "--tp", "2", "--pp", "4"};
  const nlohmann::json found = run_json(with(search, {"--json"}));
  ASSERT_TRUE(found.contains("results"));
  const double best = found["results"][0]["iteration_time_s"].get<double>();
  ASSERT_EQ(run_clustercast(with(search, {"--export", dir.file("best.json")})).exit_code, 0);
  const nlohmann::json back = run_json({"simulate", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "64",
                                        "--config", dir.file("best.json"), "--json"});
  EXPECT_NEAR(back["iteration_time_s"].get<double>(), best, 1e-9 * best);
}

}  // namespace
}  // namespace cc::cli_test
