// Rack-scale clusters through the real binary: simulate and search on gb200-nvl72, and a cluster
// file whose NVLink domain is not whole nodes refused with exit 2, naming the value.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

std::vector<std::string> llama70b_on_two_racks(const char* command) {
  return {command, "--model", "llama3-70b", "--cluster", "gb200-nvl72", "--gpus", "144",
          "--global-batch-size", "144", "--json"};
}

TEST(ClusterDomainCli, SimulateAndSearchRunOnTwoNvl72Racks) {
  const RunResult sim = run_clustercast(with(llama70b_on_two_racks("simulate"), {"--tp", "8", "--pp", "2"}));
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto doc = nlohmann::json::parse(sim.out);
  EXPECT_GT(doc.at("iteration_time_s").get<double>(), 0.0);
  EXPECT_TRUE(doc.at("fits").get<bool>());

  const RunResult found = run_clustercast(with(llama70b_on_two_racks("search"), {"--top", "3"}));
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_FALSE(nlohmann::json::parse(found.out).at("results").empty());
}

TEST(ClusterDomainCli, ADomainOfPartNodesExitsTwoNamingIt) {
  TempDir dir;
  const std::string path = dir.file("rack.json");
  write_file(path, R"({"name": "rack", "gpu": {"name": "B200", "peak_tflops": {"bf16": 2250}, "hbm_gib": 180,
    "hbm_bandwidth_gbs": 8000, "sm_count": 148}, "gpus_per_node": 4, "nvlink_domain_gpus": 6,
    "intra_node": {"bandwidth_gbs": 900}, "inter_node": {"nics_per_node": 4, "nic_bandwidth_gbs": 50}})");
  const RunResult r = run_clustercast({"simulate", "--model", "gpt3-1.3b", "--cluster", path, "--gpus", "8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("nvlink_domain_gpus is 6"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpus_per_node (4)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cc::cli_test
