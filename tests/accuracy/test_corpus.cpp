// The corpus loader: the overlap columns a row states override its stack's defaults, and an
// empty one leaves them.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "accuracy/corpus.h"
#include "sim/error.h"

namespace cc::accuracy {
namespace {

constexpr const char* kHeader =
    "id,source,model,num_layers,hidden_size,num_attention_heads,num_query_groups,ffn_hidden_size,swiglu,"
    "normalization,seq_length,vocab_size,cluster,gpus,framework,attention,precision,tp,pp,dp,virtual_stages,"
    "first_stage_layers,last_stage_layers,sequence_parallel,recompute_granularity,recompute_method,"
    "recompute_num_layers,micro_batch,global_batch,distributed_optimizer,overlap_grad_reduce,overlap_param_gather,"
    "tp_comm_overlap,iteration_time_s,peak_memory_gib,assumed,note\n";

// A NeMo run of a Llama-shaped model on 64 H100s, TP 4 with SP, distributed optimizer, with
// the three overlap columns given as `overlaps` ("grad,param,tp").
std::string row(const std::string& id, const std::string& overlaps) {
  return id + ",test,llama,80,8192,64,8,28672,1,rmsnorm,8192,128256,dgx-h100,64,nemo,flash,bf16,4,8,2,1,,,1,none,,,1,"
              "256,1," +
         overlaps + ",20.0,,,\n";
}

std::string corpus_with(const std::string& rows) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("corpus-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "test.csv") << kHeader << rows;
  return dir.string();
}

TEST(CorpusLoader, StatedOverlapsOverrideTheStacksDefaults) {
  const auto rows = load_corpus(corpus_with(row("stack-default", ",,") + row("all-off", "0,0,0") +
                                            row("tp-overlap", ",,1")));
  ASSERT_EQ(rows.size(), 3u);
  // NeMo overlaps the DP reduction and the parameter gather by default; nobody overlaps TP
  // communication unless asked.
  EXPECT_TRUE(rows[0].config.overlap_grad_reduce);
  EXPECT_TRUE(rows[0].config.overlap_param_gather);
  EXPECT_FALSE(rows[0].config.tp_comm_overlap);
  EXPECT_FALSE(rows[1].config.overlap_grad_reduce);
  EXPECT_FALSE(rows[1].config.overlap_param_gather);
  EXPECT_TRUE(rows[2].config.tp_comm_overlap);
  EXPECT_TRUE(rows[2].config.overlap_grad_reduce);
}

TEST(CorpusLoader, AnOverlapColumnIsZeroOneOrEmpty) {
  try {
    load_corpus(corpus_with(row("bad", "yes,,")));
    FAIL() << "an overlap column of 'yes' was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("column overlap_grad_reduce is 'yes'; it must be 0 or 1"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cc::accuracy
