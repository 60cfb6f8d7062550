// `search` over an MoE model from the command line: the EP and ETP lists bound the layouts it
// tries, the MoE run-time switches reach every layout, and what no layout could change (a bad
// switch, an EP that does not divide the experts, expert lists on a dense model) is refused once,
// by name, with exit status 2.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

std::vector<std::string> mixtral_search() {
  return {"search", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "64", "--global-batch-size", "256",
          "--tp", "2", "--pp", "4", "--sequence-parallel", "--micro-batch-size", "1", "--top", "50"};
}

TEST(MoeSearchCli, EpAndEtpListsBoundTheLayoutsAndSwitchesReachEveryOne) {
  const RunResult r = run_clustercast(with(mixtral_search(), {"--ep", "4,8", "--etp", "1", "--moe-token-dispatcher-type",
                                                              "alltoall", "--moe-grouped-gemm", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["results"].empty());
  std::set<int> eps;
  for (const auto& entry : j["results"]) {
    const nlohmann::json& c = entry["config"];
    eps.insert(c.value("expert_model_parallel_size", 1));
    EXPECT_EQ(c["expert_tensor_parallel_size"], 1);
    EXPECT_EQ(c["moe_token_dispatcher_type"], "alltoall");
    EXPECT_EQ(c["moe_grouped_gemm"], true);
  }
  EXPECT_EQ(eps, (std::set<int>{4, 8}));
}

TEST(MoeSearchCli, WithoutListsEveryEpThatDividesTheExpertsIsTried) {
  const RunResult r = run_clustercast(with(mixtral_search(), {"--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::set<int> eps;
  for (const auto& entry : j["results"])
    eps.insert(entry["config"].value("expert_model_parallel_size", 1));
  // Mixtral's 8 experts: EP 1, 2, 4, 8 all fold into TP 2 x DP 8 = 16 ranks per stage.
  EXPECT_EQ(eps, (std::set<int>{1, 2, 4, 8}));
}

TEST(MoeSearchCli, WhatNoLayoutCouldChangeIsRefusedOnceByName) {
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const std::vector<Case> cases = {
      {with(mixtral_search(), {"--ep", "3"}), "valid: 1, 2, 4, 8"},
      {with(mixtral_search(), {"--moe-expert-capacity-factor", "0"}), "--moe-expert-capacity-factor is 0"},
      {with(mixtral_search(), {"--moe-pad-expert-input-to-capacity"}), "needs --moe-expert-capacity-factor"},
      {with(mixtral_search(), {"--moe-load-imbalance", "0.5"}), "--moe-load-imbalance is 0.5"},
      {with(mixtral_search(), {"--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", "ncclep"}),
       "ncclep (NCCL EP through Transformer Engine) is not modelled"},
      {{"search", "--model", "gpt3-1.3b", "--gpus", "8", "--global-batch-size", "64", "--ep", "2"}, "no experts"},
      {{"search", "--model", "gpt3-1.3b", "--gpus", "8", "--global-batch-size", "64", "--moe-grouped-gemm"},
       "has no experts"},
  };
  for (const Case& c : cases) {
    const RunResult r = run_clustercast(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.names << "\n" << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("no valid layout"), std::string::npos) << r.err;  // named, not counted per layout
  }
}

}  // namespace
}  // namespace cc::cli_test
