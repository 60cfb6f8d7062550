// The corpus loader: the overlap columns a row states override its stack's defaults, and an
// empty one leaves them; the context-parallel columns reach the parallel config; the CP runs are held out.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "accuracy/corpus.h"
#include "accuracy/held_out.h"
#include "sim/error.h"

namespace cc::accuracy {
namespace {

constexpr const char* kHeader =
    "id,source,model,num_layers,hidden_size,num_attention_heads,num_query_groups,ffn_hidden_size,swiglu,"
    "normalization,seq_length,vocab_size,cluster,gpus,framework,attention,precision,tp,cp,cp_comm_type,pp,dp,"
    "virtual_stages,pipeline_layout,"
    "first_stage_layers,last_stage_layers,sequence_parallel,recompute_granularity,recompute_method,"
    "recompute_num_layers,micro_batch,global_batch,distributed_optimizer,overlap_grad_reduce,overlap_param_gather,"
    "tp_comm_overlap,iteration_time_s,peak_memory_gib,assumed,note\n";

// A NeMo run of a Llama-shaped model on `gpus` H100s, TP 4 with SP, CP `cp` exchanging keys
// and values by `cp_comm_type`, PP 8, distributed optimizer, with the three overlap columns
// given as `overlaps` ("grad,param,tp").
std::string row(const std::string& id, const std::string& overlaps, int gpus = 64, const std::string& cp = "1",
                const std::string& cp_comm_type = "p2p") {
  return id + ",test,llama,80,8192,64,8,28672,1,rmsnorm,8192,128256,dgx-h100," + std::to_string(gpus) +
         ",nemo,flash,bf16,4," + cp + "," + cp_comm_type + ",8,2,1,,,,1,none,,,1,256,1," + overlaps + ",20.0,,,\n";
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

TEST(CorpusLoader, ContextParallelColumnsReachTheConfig) {
  const auto rows = load_corpus(corpus_with(row("cp1", ",,") + row("cp2-a2a", ",,", 128, "2", "a2a") +
                                            row("cp2-empty-type", ",,", 128, "2", "")));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].config.cp, 1);
  EXPECT_EQ(rows[1].config.cp, 2);
  EXPECT_EQ(rows[1].config.cp_comm_type, CpCommType::AllToAll);
  EXPECT_EQ(rows[1].config.gpus(), 128);  // 4 x 2 x 8 x 2
  // An empty type is Megatron-LM's default, the ring of point-to-point sends.
  EXPECT_EQ(rows[2].config.cp_comm_type, CpCommType::P2P);
}

TEST(CorpusLoader, AnUnknownCpCommTypeIsAMalformedRow) {
  try {
    load_corpus(corpus_with(row("bad", ",,", 128, "2", "ring")));
    FAIL() << "cp_comm_type 'ring' was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("'ring' is not known; valid: p2p, a2a, allgather, a2a+p2p"), std::string::npos)
        << e.what();
  }
}

const char* kCorpus = CLUSTERCAST_SOURCE_DIR "/tests/reference/measured";

// The fitted corpus has no CP run; every CP run is held out, and none is in both.
TEST(HeldOut, ContextParallelRunsAreOnlyInTheHeldOutRows) {
  std::vector<RefusedRow> refused;
  const auto fitted = load_corpus(kCorpus, &refused);
  for (const auto& r : fitted) EXPECT_EQ(r.config.cp, 1) << r.id;
  for (const auto& r : refused) EXPECT_EQ(r.cp, 1) << r.id;
  const HeldOutRows held_out = load_held_out(kCorpus);
  std::set<std::string> fitted_ids;
  for (const auto& r : fitted) fitted_ids.insert(r.id);
  int cp_rows = 0;
  for (const auto& r : held_out.rows) {
    EXPECT_EQ(fitted_ids.count(r.id), 0u) << r.id;
    cp_rows += r.config.cp > 1;
  }
  for (const auto& r : held_out.refused) cp_rows += r.cp > 1;
  // 8 MLPerf + 44 functional tests + 5 Megatron-Bridge + Llama 3's 128K row
  // (tests/reference/measured/README.md, "Held out: context parallelism").
  EXPECT_EQ(cp_rows, 58);
}

// Llama 3 Table 4's long-context row: 16M tokens (128 sequences of 131,072) at 380 TFLOP/s on
// each of 16,384 GPUs, counted as Narayanan et al. 2021 count: 3 x forward, forward = 2 x the
// matmul parameters + 4 l s h for the s x s attention.
TEST(HeldOut, Llama3LongContextRowIsTable4AtTheMegatronFlopCount) {
  const HeldOutRows held_out = load_held_out(kCorpus);
  const auto row = std::find_if(held_out.rows.begin(), held_out.rows.end(),
                                [](const CorpusRow& r) { return r.id == "llama3-2024-t4-405b-16384g-cp16-s131072"; });
  ASSERT_NE(row, held_out.rows.end());
  EXPECT_EQ(row->config.tp, 8);
  EXPECT_EQ(row->config.cp, 16);
  EXPECT_EQ(row->config.pp, 16);
  EXPECT_EQ(row->config.dp, 8);
  EXPECT_EQ(row->config.cp_comm_type, CpCommType::AllGather);
  const double l = 126, h = 16384, s = 131072, kv = 8 * 128, ffn = 53248, vocab = 128256;
  const double matmul_params = l * (h * (h + 2 * kv) + h * h + 3 * h * ffn) + h * vocab;
  const double flops_per_token = 3 * (2 * matmul_params + 4 * l * s * h);
  const double expected_s = 128 * s * flops_per_token / (16384 * 380e12);
  EXPECT_NEAR(row->measured_s, expected_s, 0.0005 * expected_s);
}

}  // namespace
}  // namespace cc::accuracy
