// Numbers on the real command line (interop/strict_numbers.h, called by cli/run_cli.cpp): base-10
// digits whatever the leading zeros, and an empty value refused with the flag and the range —
// what the bad-input corpus cannot write (its arguments split on whitespace, so no empty one).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

TEST(StrictNumbersCli, LeadingZerosAreDecimal) {
  // A model TP 10 divides and TP 8 (what C's base 0 makes of 010) does not: 10 heads.
  const RunResult r = run_clustercast({"simulate", "--num-layers", "2", "--hidden-size", "640", "--num-attention-heads",
                                       "10", "--gpus", "010", "--tp", "010", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto config = nlohmann::json::parse(r.out).at("config");
  EXPECT_EQ(config.at("tensor_model_parallel_size"), 10);
  EXPECT_EQ(config.at("data_parallel_size"), 1);
}

TEST(StrictNumbersCli, AnEmptyValueIsRefusedNamingTheFlagAndTheRange) {
  const RunResult r = run_clustercast({"simulate", "--model", "gpt3-175b", "--gpus", "8", "--tp", ""});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "clustercast: --tensor-model-parallel-size '' is not an integer; it must be a whole number from "
            "-2147483648 to 2147483647\n");
}

TEST(StrictNumbersCli, AnEmptyRealIsRefusedToo) {
  const RunResult r =
      run_clustercast({"simulate", "--model", "gpt3-175b", "--gpus", "8", "--tp", "8", "--memory-headroom", ""});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--memory-headroom '' is not a number"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cc::cli_test
