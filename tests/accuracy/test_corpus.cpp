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
    "tp_comm_overlap,iteration_time_s,peak_memory_gib,position_embedding,untie_embeddings,add_bias_linear,"
    "distributed_optimizer_instances,cross_entropy_loss_fusion,apply_rope_fusion,assumed,note\n";

// A NeMo run of a Llama-shaped model on `gpus` H100s, TP 4 with SP, CP `cp` exchanging keys
// and values by `cp_comm_type`, PP 8, distributed optimizer, with the three overlap columns
// given as `overlaps` ("grad,param,tp") and the three architecture columns as `architecture`
// ("position,untie,bias"; empty: the reader's rule), the distributed optimizer's instances and
// the two fusion columns as `fusions` ("loss,rope"; empty: Megatron-LM's defaults).
std::string row(const std::string& id, const std::string& overlaps, int gpus = 64, const std::string& cp = "1",
                const std::string& cp_comm_type = "p2p", const std::string& architecture = ",,",
                const std::string& instances = "", const std::string& fusions = ",") {
  return id + ",test,llama,80,8192,64,8,28672,1,rmsnorm,8192,128256,dgx-h100," + std::to_string(gpus) +
         ",nemo,flash,bf16,4," + cp + "," + cp_comm_type + ",8,2,1,,,,1,none,,,1,256,1," + overlaps + ",20.0,," +
         architecture + "," + instances + "," + fusions + ",,\n";
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

// A row states the distributed optimizer's instances (Megatron-LM's
// --num-distributed-optimizer-instances), or leaves one.
TEST(CorpusLoader, OptimizerInstancesReachTheConfig) {
  const auto rows = load_corpus(corpus_with(row("one", ",,") + row("two", ",,", 64, "1", "p2p", ",,", "2")));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].config.distributed_optimizer_instances, 1);
  EXPECT_EQ(rows[1].config.distributed_optimizer_instances, 2);
}

// A row states its kernel fusions (Megatron-LM's --cross-entropy-loss-fusion, --no-rope-fusion),
// or leaves Megatron-LM's defaults: the plain loss and fused RoPE.
TEST(CorpusLoader, FusionColumnsReachTheConfig) {
  const auto rows = load_corpus(corpus_with(row("defaults", ",,") +
                                            row("stated", ",,", 64, "1", "p2p", ",,", "", "1,0")));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].config.cross_entropy_fusion);
  EXPECT_TRUE(rows[0].config.rope_fusion);
  EXPECT_TRUE(rows[1].config.cross_entropy_fusion);
  EXPECT_FALSE(rows[1].config.rope_fusion);
}

// A row states its positions, tying and biases (Megatron-LM's flags), or leaves them to the
// reader's rule: a Llama-style row (SwiGLU with RMSNorm, as row() is) RoPE, untied, no biases.
TEST(CorpusLoader, ArchitectureColumnsOverrideTheLlamaStyleRule) {
  const auto rows = load_corpus(corpus_with(row("rule", ",,") + row("stated", ",,", 64, "1", "p2p",
                                                                     "learned_absolute,0,1")));
  ASSERT_EQ(rows.size(), 2u);
  const ModelSpec& rule = rows[0].model;
  EXPECT_EQ(rule.position_embedding, PositionEmbedding::Rope);
  EXPECT_FALSE(rule.tied_embeddings);
  EXPECT_FALSE(rule.qkv_bias);
  EXPECT_FALSE(rule.projection_bias);
  EXPECT_FALSE(rule.dense_mlp_bias());
  const ModelSpec& stated = rows[1].model;
  EXPECT_EQ(stated.position_embedding, PositionEmbedding::Learned);
  EXPECT_TRUE(stated.tied_embeddings);
  EXPECT_TRUE(stated.qkv_bias);
  EXPECT_TRUE(stated.projection_bias);
  EXPECT_TRUE(stated.dense_mlp_bias());  // Megatron-LM's one switch biases the gated MLP too
  // Per layer Q/K/V biases 8192 + 2 x 1024, the projection's 8192, the MLP's 2 x 28672 + 8192, in 80
  // layers; the tied output layer's 128256 x 8192 goes, 8192 learned positions x 8192 come.
  const std::int64_t biases = 80LL * (8192 + 2 * 1024 + 8192 + 2 * 28672 + 8192);
  EXPECT_EQ(stated.total_parameters() - rule.total_parameters(), biases - 128256LL * 8192 + 8192LL * 8192);
  try {
    load_corpus(corpus_with(row("bad", ",,", 64, "1", "p2p", "alibi,,")));
    FAIL() << "position_embedding 'alibi' was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("position_embedding 'alibi' is not known"), std::string::npos) << e.what();
  }
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

// The MoE runs (measured/moe/): every staged row is either priced or refused with its reason,
// none dropped: 126 functional tests + 91 Megatron-Bridge + 1 DeepSeek-V3 (moe/README.md).
TEST(MoeRows, EveryStagedRowIsPricedOrRefused) {
  const MoeRows moe = load_moe_rows(kCorpus);
  EXPECT_EQ(moe.rows.size() + moe.refused.size(), 218u);
  for (const auto& r : moe.rows) EXPECT_TRUE(r.model.moe.enabled()) << r.id;
  for (const auto& r : moe.refused) EXPECT_FALSE(r.reason.empty()) << r.id;
}

// A functional test's MoE columns, as staged (moe-l12-h512-e4: 4 experts top-1, EP 2, the
// allgather dispatcher, sinkhorn, no grouped GEMM), with `features` and `framework` given.
std::string moe_corpus_with(const std::string& features, const std::string& framework = "megatron-core-ci",
                            const std::string& dispatcher = "allgather") {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("moe-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "test.csv")
      << std::string(kHeader).substr(0, std::string(kHeader).find(",assumed,note"))
      << ",kv_channels,num_experts,router_topk,moe_ffn_hidden_size,shared_expert_ffn_hidden_size,moe_layer_freq,"
         "first_dense_layers,ep,etp,token_dispatcher,grouped_gemm,capacity_factor,pad_to_capacity,"
         "router_score_function,router_load_balancing,multi_latent_attention,q_lora_rank,kv_lora_rank,qk_head_dim,"
         "qk_pos_emb_head_dim,v_head_dim,mtp_num_layers,fp8_recipe,overlap_moe_expert_parallel_comm,"
         "moe_shared_expert_overlap,allocated_memory_gib,features,assumed,note\n"
      << "moe,test,moe-l12-h512-e4,12,512,8,8,2048,0,layernorm,1024,50257,dgx-a100-80gb,8," << framework
      << ",flash,bf16,1,1,,2,4,1,,,,0,none,,,4,32,0,0,0,0,0.3,1.9,,,,,,,,4,1,2048,,([0]*2+[1]*10),2,2,1," << dispatcher
      << ",0,,0,softmax,sinkhorn,0,,,,,,0,,0,0,1.0," << features << ",,\n";
  return dir.string();
}

TEST(MoeRows, MoeColumnsReachTheModelAndLayout) {
  const auto rows = load_moe_corpus(moe_corpus_with("force-balanced-routing;expert-bias"));
  ASSERT_EQ(rows.size(), 1u);
  const CorpusRow& r = rows[0];
  EXPECT_EQ(r.model.moe.num_experts, 4);
  EXPECT_EQ(r.model.moe.router_topk, 1);
  EXPECT_EQ(r.model.moe.ffn_hidden_size, 2048);
  EXPECT_EQ(r.model.moe_layer_count(), 10);  // ([0]*2+[1]*10): the first two layers dense
  EXPECT_FALSE(r.model.is_moe_layer(1));
  EXPECT_TRUE(r.model.is_moe_layer(2));
  EXPECT_TRUE(r.model.moe.router_expert_bias);
  EXPECT_FALSE(r.model.qkv_bias);  // --disable-bias-linear, as every functional test states
  EXPECT_EQ(r.config.ep, 2);
  EXPECT_EQ(r.config.expert_tp(), 1);
  EXPECT_EQ(r.config.moe.dispatcher, TokenDispatcher::AllGather);
  EXPECT_EQ(r.config.moe.load_balancing, LoadBalancing::Sinkhorn);
  EXPECT_EQ(moe_load_imbalance(r.config), 1.0);  // forced balance
}

// Megatron-Bridge's MoE providers set the alltoall dispatcher; Megatron-Core's default is allgather.
TEST(MoeRows, AnUnstatedDispatcherIsTheStacksDefault) {
  EXPECT_EQ(load_moe_corpus(moe_corpus_with("", "nemo", ""))[0].config.moe.dispatcher, TokenDispatcher::AllToAll);
  EXPECT_EQ(load_moe_corpus(moe_corpus_with("", "megatron-core-ci", ""))[0].config.moe.dispatcher,
            TokenDispatcher::AllGather);
}

TEST(MoeRows, AFeatureTheModelLacksIsRefusedByName) {
  std::vector<RefusedRow> refused;
  EXPECT_THROW(load_moe_corpus(moe_corpus_with("muon"), &refused), SpecError);  // no row left to price
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].field, "features");
  EXPECT_NE(refused[0].reason.find("feature 'muon'"), std::string::npos) << refused[0].reason;
}

}  // namespace
}  // namespace cc::accuracy
