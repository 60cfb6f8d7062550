// The training engine under Megatron-Core's uneven interleaved splits, as users run it
// (`mpirun -np N clustercast train ...`): uneven first/last stages split over chunks, a
// --pipeline-model-parallel-layout string whose first and last chunks hold the embedding or
// the loss alone, the embedding and loss counted as layers, and a microbatch group other than
// PP. Each must compute the serial run's losses and parameter updates (relative 1e-4, fp32,
// dropout off), as tests/cli/test_train_mpi.cpp asks of the even layouts.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "../../cli/mpi_runner.h"

namespace cc::cli_test {
namespace {

struct Split {
  const char* name;
  int ranks;
  int layers;        // --num-layers over tiny's shape
  int global_batch;  // micro batch 1: the microbatch count
  const char* flags;
};

void PrintTo(const Split& s, std::ostream* os) { *os << s.name; }

std::vector<std::string> train_args(int layers, int global_batch, const std::string& flags) {
  std::vector<std::string> args = {"train", "--model", "tiny", "--num-layers", std::to_string(layers),
                                   "--steps", "3", "--micro-batch-size", "1", "--global-batch-size",
                                   std::to_string(global_batch), "--seed", "5", "--lr", "3e-3",
                                   "--warmup-steps", "1", "--eval-windows", "0", "--dropout", "0"};
  std::istringstream words(flags);
  for (std::string w; words >> w;) args.push_back(w);
  return args;
}

class InterleavedUnevenRuns : public ::testing::TestWithParam<Split> {};

TEST_P(InterleavedUnevenRuns, MatchTheSerialRun) {
  const Split& s = GetParam();
  const RunResult serial = run_mpi(1, train_args(s.layers, s.global_batch, ""));
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  const RunResult r = run_mpi(s.ranks, train_args(s.layers, s.global_batch, s.flags));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_matches_serial(parse_train(r.out), parse_train(serial.out), r.out);
}

INSTANTIATE_TEST_SUITE_P(
    Engine, InterleavedUnevenRuns,
    ::testing::Values(
        // 8 layers on PP 3 x 2 chunks: 2 first, 4 middle, 2 last, each halved per chunk.
        Split{"uneven_first_last_two_chunks", 3, 8, 6,
              "--pp 3 --decoder-first-pipeline-num-layers 2 --decoder-last-pipeline-num-layers 2 "
              "--num-virtual-stages-per-pipeline-rank 2"},
        // PP 2 x 2 chunks: the embedding alone, 4, 2, then 2 with the loss; under TP 2 and SP with
        // one recomputed layer per chunk (the empty chunk recomputes none).
        Split{"layout_embedding_alone_tp2_sp_full", 4, 8, 6,
              "--pp 2 --tp 2 --sequence-parallel --pipeline-model-parallel-layout E|tttt|tt|ttL "
              "--recompute-granularity full --recompute-method block --recompute-num-layers 1"},
        // A chunk in the middle of the chain that holds nothing: rank 1's first chunk passes the
        // activation and its gradient straight on.
        Split{"layout_empty_middle_chunk", 2, 8, 6,
              "--pp 2 --pipeline-model-parallel-layout Ettt||tttt|tL --recompute-granularity selective"},
        // 4 layers + embedding + loss = 6 on PP 3 x 2 chunks of 1: the first chunk holds the
        // embedding alone, the last the loss alone.
        Split{"counted_embedding_and_loss", 3, 4, 6,
              "--pp 3 --num-virtual-stages-per-pipeline-rank 2 --account-for-embedding-in-pipeline-split "
              "--account-for-loss-in-pipeline-split"},
        // 5 microbatches in groups of 3 on PP 2 (Megatron-Core's documented example order).
        Split{"microbatch_groups_of_three", 2, 8, 5,
              "--pp 2 --pipeline-model-parallel-layout E|tttt|tt|ttL "
              "--microbatch-group-size-per-virtual-pipeline-stage 3"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace cc::cli_test
