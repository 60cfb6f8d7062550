// Expert parallelism and the MoE switches through the real binary: bad input exits 2 naming the
// value and what is valid, with nothing on stdout; a valid MoE layout still meets the one refusal
// of what is not priced yet, never a dense prediction.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

// `simulate` with `args` after the model and GPUs: exit 2, nothing on stdout, `expected` in the message.
void expect_refused(const std::vector<std::string>& args, const std::string& expected) {
  const RunResult r = run_clustercast(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
}

TEST(ExpertParallelCli, EpThatDoesNotDivideTheExpertsNamesTheValidOnes) {
  expect_refused({"simulate", "--model", "mixtral-8x7b", "--gpus", "48", "--ep", "3"},
                 "--expert-model-parallel-size 3 does not divide the 8 routed experts of model 'mixtral-8x7b'; valid: "
                 "1, 2, 4, 8");
}

TEST(ExpertParallelCli, EpTimesEtpMustDivideTheRanksOfAStage) {
  expect_refused({"simulate", "--model", "mixtral-8x7b", "--gpus", "16", "--tp", "2", "--pp", "2",
                  "--sequence-parallel", "--expert-model-parallel-size", "8", "--expert-tensor-parallel-size", "2"},
                 "EP 8 x ETP 2 = 16 does not divide TP 2 x CP 1 x DP 4 = 8");
}

TEST(ExpertParallelCli, MoeSwitchesOnADenseModelAreRefusedByName) {
  expect_refused({"simulate", "--model", "gpt3-13b", "--gpus", "8", "--ep", "2"}, "has no experts (dense); valid: 1");
  expect_refused({"simulate", "--model", "gpt3-13b", "--gpus", "8", "--moe-grouped-gemm"},
                 "--moe-grouped-gemm is a mixture-of-experts option, but model 'gpt3-13b' has no experts");
  expect_refused({"simulate", "--model", "gpt3-13b", "--gpus", "8", "--moe-load-imbalance", "1.2"},
                 "--moe-load-imbalance is a mixture-of-experts option");
}

TEST(ExpertParallelCli, BadMoeSwitchesNameTheirFlag) {
  const std::vector<std::string> mixtral = {"simulate", "--model", "mixtral-8x7b", "--gpus", "8", "--ep", "8"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = mixtral;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_refused(with({"--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", "ncclep"}),
                 "--moe-flex-dispatcher-backend ncclep (NCCL EP through Transformer Engine) is not modelled; valid: "
                 "deepep, hybridep");
  expect_refused(with({"--moe-enable-deepep"}), "--moe-enable-deepep needs --moe-token-dispatcher-type flex");
  expect_refused(with({"--moe-flex-dispatcher-backend", "hybridep"}),
                 "--moe-flex-dispatcher-backend hybridep chooses the flex dispatcher's kernels, but the dispatcher is "
                 "allgather");
  expect_refused(with({"--moe-expert-capacity-factor", "0"}), "--moe-expert-capacity-factor is 0; it must be a finite number > 0");
  expect_refused(with({"--moe-pad-expert-input-to-capacity"}),
                 "--moe-pad-expert-input-to-capacity needs --moe-expert-capacity-factor");
  expect_refused(with({"--moe-load-imbalance", "0.5"}), "--moe-load-imbalance is 0.5");
  expect_refused(with({"--overlap-moe-expert-parallel-comm"}),
                 "--overlap-moe-expert-parallel-comm works with --moe-token-dispatcher-type alltoall or flex");
}

TEST(ExpertParallelCli, MultiLatentAttentionWithContextParallelismIsRefusedByItsPricing) {
  // DeepSeek-V3 is priced (tests/cli/test_deepseek_v3_cli.cpp); MLA under CP is not.
  expect_refused({"simulate", "--model", "deepseek-v3", "--gpus", "4096", "--pp", "16", "--ep", "64", "--cp", "2",
                  "--decoder-first-pipeline-num-layers", "3", "--decoder-last-pipeline-num-layers", "2"},
                 "prices without context parallelism; --context-parallel-size is 2, use 1");
}

}  // namespace
}  // namespace cc::cli_test
