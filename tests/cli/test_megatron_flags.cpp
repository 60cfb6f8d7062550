// Megatron-LM's own flags in `simulate` mean what they mean there: each is compared with the
// clustercast flag it stands for (same prediction), a launch line exported by `search`
// pastes unchanged, and shape overrides on a preset move the fields that follow them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <filesystem>
#include <sstream>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

const std::string kReference = std::string(CLUSTERCAST_SOURCE_DIR) + "/tests/reference/";
const std::vector<std::string> kGpt3 = {"simulate", "--model", "gpt3-175b", "--gpus", "1024", "--tp", "8", "--pp",
                                        "16", "--micro-batch-size", "1", "--global-batch-size", "1536", "--json"};

TEST(MegatronFlags, AttentionBackendAutoFlashAndFusedAreFlashUnfusedAndLocalLayersStoreTheScores) {
  const auto flash = json_output(with(kGpt3, {"--use-flash-attn"}));
  const auto unfused = json_output(with(kGpt3, {"--attention-backend", "unfused"}));
  ASSERT_TRUE(flash.contains("peak_memory_gib") && unfused.contains("peak_memory_gib"));
  // Without this difference the equalities below would prove nothing.
  EXPECT_LT(flash.at("peak_memory_gib").get<double>(), unfused.at("peak_memory_gib").get<double>());
  for (const char* backend : {"auto", "flash", "fused"}) {
    const auto j = json_output(with(kGpt3, {"--attention-backend", backend}));
    EXPECT_EQ(j.at("config").at("attention"), "flash") << backend;
    EXPECT_EQ(j.at("iteration_time_s"), flash.at("iteration_time_s")) << backend;
  }
  // Megatron-LM asserts --spec local beside it, a model spec module clustercast does not read.
  const RunResult local = run_clustercast(with(kGpt3, {"--attention-backend", "local"}));
  EXPECT_EQ(local.exit_code, 2);
  EXPECT_TRUE(local.out.empty());
  EXPECT_NE(local.err.find("--attention-backend local runs only beside --spec local"), std::string::npos) << local.err;
  const auto layers = json_output(with(kGpt3, {"--transformer-impl", "local"}));
  EXPECT_EQ(layers.at("config").at("attention"), "unfused");
  EXPECT_EQ(layers.at("peak_memory_gib"), unfused.at("peak_memory_gib"));
}

TEST(MegatronFlags, PrecisionRecomputeAndIterationBudgetSpellings) {
  EXPECT_EQ(json_output(with(kGpt3, {"--fp16"})).at("config").at("precision"), "fp16");
  EXPECT_EQ(json_output(with(kGpt3, {"--bf16"})).at("config").at("precision"), "bf16");
  EXPECT_EQ(json_output(with(kGpt3, {"--bf16", "--fp8-format", "hybrid", "--cluster", "dgx-h100"}))
                .at("config")
                .at("precision"),
            "fp8");
  EXPECT_EQ(json_output(with(kGpt3, {"--recompute-activations"})).at("config").at("recompute_granularity"),
            "selective");
  // 1000 iterations x 1536 sequences x 2048 tokens.
  const auto iters = json_output(with(kGpt3, {"--train-iters", "1000"}));
  const auto tokens = json_output(with(kGpt3, {"--train-tokens", "3145728000"}));
  EXPECT_GT(tokens.at("training_days").get<double>(), 0);
  EXPECT_EQ(iters.at("training_days"), tokens.at("training_days"));
}

TEST(MegatronFlags, ArchitectureFlagsSetTheModel) {
  const auto m = json_output({"simulate", "--gpus", "4", "--tp", "4", "--num-layers", "4", "--hidden-size", "1024",
                                "--num-attention-heads", "16", "--group-query-attention", "--num-query-groups", "4",
                                "--swiglu", "--disable-bias-linear", "--normalization", "RMSNorm",
                                "--position-embedding-type", "rope", "--max-position-embeddings", "8192",
                                "--untie-embeddings-and-output-weights", "--hidden-dropout", "0",
                                "--attention-dropout", "0", "--json"})
                     .at("model");
  EXPECT_EQ(m.at("num_query_groups"), 4);
  EXPECT_EQ(m.at("normalization"), "rmsnorm");
  EXPECT_EQ(m.at("position_embedding"), "rope");
  EXPECT_EQ(m.at("tied_embeddings"), false);
  EXPECT_EQ(m.at("dropout"), false);
  // Megatron-LM: --group-query-attention without --num-query-groups means one group.
  EXPECT_EQ(json_output({"simulate", "--gpus", "1", "--num-layers", "2", "--hidden-size", "256",
                           "--num-attention-heads", "8", "--group-query-attention", "--json"})
                .at("model")
                .at("num_query_groups"),
            1);
}

TEST(MegatronFlags, TheSearchExportPastesIntoSimulateUnchanged) {
  const TempDir dir;
  const RunResult s = run_clustercast({"search", "--model", "gpt3-13b", "--gpus", "64", "--global-batch-size", "512",
                                       "--export-megatron", dir.file("best.args")});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  std::vector<std::string> args{"simulate", "--gpus", "64", "--json"};
  std::istringstream lines(read_file(dir.file("best.args")));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    for (std::string w; words >> w;) args.push_back(w);
  }
  ASSERT_GT(args.size(), 20u);
  const auto pasted = json_output(args);
  const auto from_file = json_output({"simulate", "--config", dir.file("best.args"), "--json"});
  EXPECT_EQ(pasted.at("iteration_time_s"), from_file.at("iteration_time_s"));
  EXPECT_EQ(pasted.at("config"), from_file.at("config"));
}

TEST(MegatronFlags, WithoutAnAttentionFlagEachStackRunsItsOwnDefault) {
  // Megatron-Core's --attention-backend auto: flash or fused; the 2021-2022 stacks stored scores.
  EXPECT_EQ(json_output(kGpt3).at("config").at("attention"), "flash");
  EXPECT_EQ(json_output(with(kGpt3, {"--framework", "nemo"})).at("config").at("attention"), "flash");
  EXPECT_EQ(json_output(with(kGpt3, {"--framework", "megatron-2021"})).at("config").at("attention"), "unfused");
  EXPECT_EQ(json_output(with(kGpt3, {"--framework", "megatron-deepspeed"})).at("config").at("attention"),
            "unfused");
  // A Megatron argument file without the flag is read with Megatron-LM's default too.
  const TempDir dir;
  write_file(dir.file("launch.args"), "--tensor-model-parallel-size 8\n--pipeline-model-parallel-size 16\n"
                                      "--micro-batch-size 1\n--global-batch-size 1536\n");
  EXPECT_EQ(json_output({"simulate", "--model", "gpt3-175b", "--gpus", "1024", "--config", dir.file("launch.args"),
                           "--json"})
                .at("config")
                .at("attention"),
            "flash");
}

// Megatron-LM's functional-test harness runs deterministic kernels and adds each weight gradient to
// the fp32 main gradient in a kernel of its own; only the stack fitted to those runs
// (megatron-core-ci) prices them. Under another stack each flag is refused by name and names that
// stack; an export under it writes both (and the environment Megatron-LM asserts for
// deterministic mode) and reads back to its own prediction.
TEST(MegatronFlags, HarnessKernelChoicesArePricedOnlyUnderTheStackThatRanThem) {
  const std::string test_case = kReference + "megatron/functional/gpt3_mcore_te_tp2_pp2.args";
  const std::vector<std::string> run = {"simulate", "--config", test_case, "--cluster", "dgx-h100", "--gpus", "8"};
  const RunResult refused = run_clustercast(run);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(refused.out.empty());
  EXPECT_NE(refused.err.find("--deterministic-mode is not priced under stack 'megatron-core': deterministic kernels "
                             "are priced only as part of a stack whose measured runs used them (megatron-core-ci; "
                             "give --framework)"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(json_output(with(run, {"--framework", "megatron-core-ci", "--json"})).at("config").at("framework"),
            "megatron-core-ci");
  const RunResult unfused = run_clustercast(with(kGpt3, {"--no-gradient-accumulation-fusion", "--framework", "nemo"}));
  EXPECT_EQ(unfused.exit_code, 2);
  EXPECT_NE(unfused.err.find("--no-gradient-accumulation-fusion is not priced under stack 'nemo'"), std::string::npos)
      << unfused.err;

  const TempDir dir;
  const RunResult search = run_clustercast({"search", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8",
                                            "--global-batch-size", "64", "--framework", "megatron-core-ci", "--top",
                                            "1", "--json", "--export-megatron", dir.file("best.args")});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  const std::string args = read_file(dir.file("best.args"));
  EXPECT_NE(args.find("--deterministic-mode\n"), std::string::npos) << args;
  EXPECT_NE(args.find("--no-gradient-accumulation-fusion\n"), std::string::npos) << args;
  EXPECT_NE(read_file(dir.file("best.args.sh")).find("export NCCL_ALGO=Ring\n"), std::string::npos);
  const auto again = json_output({"simulate", "--config", dir.file("best.args"), "--json"});
  EXPECT_EQ(again.at("iteration_time_s"), nlohmann::json::parse(search.out).at("results").at(0).at("iteration_time_s"));
}

// --use-tp-pp-dp-mapping reorders which ranks form the pipeline and data-parallel groups: inside one
// NVLink domain that changes no link, so the prediction is the default order's; across nodes it is
// refused. An ETP on a model without experts builds expert groups no layer uses: the dense run.
TEST(MegatronFlags, TheOtherRankOrderIsReadOnOneNodeAndRefusedAcrossNodes) {
  const std::string dp_last = kReference + "megatron/functional/gpt3_mcore_te_tp2_pp2_cp2_etp4_dp_last.args";
  const std::vector<std::string> run = {"simulate", "--config", dp_last, "--framework", "megatron-core-ci",
                                        "--cluster", "dgx-h100"};
  // The default order: the same words without the flag, on the same node.
  const TempDir dir;
  std::string words = read_file(dp_last);
  const std::string flag = "--use-tp-pp-dp-mapping\n";
  ASSERT_NE(words.find(flag), std::string::npos);
  words.erase(words.find(flag), flag.size());
  write_file(dir.file("default-order.args"), words);
  const RunResult reordered = run_clustercast(with(run, {"--gpus", "8", "--json"}));
  ASSERT_EQ(reordered.exit_code, 0) << reordered.err;
  EXPECT_NE(reordered.err.find("--expert-tensor-parallel-size 4 left aside: model 'from-layout-file' has no experts"),
            std::string::npos)
      << reordered.err;
  const auto base = json_output({"simulate", "--config", dir.file("default-order.args"), "--framework",
                                   "megatron-core-ci", "--cluster", "dgx-h100", "--gpus", "8", "--json"});
  const auto json = nlohmann::json::parse(reordered.out);
  EXPECT_EQ(json.at("iteration_time_s"), base.at("iteration_time_s"));
  EXPECT_EQ(json.at("peak_memory_gib"), base.at("peak_memory_gib"));
  EXPECT_EQ(json.at("config").at("data_parallel_size"), 1);  // TP 2 x CP 2 x PP 2 on 8 GPUs
  // Two nodes: PP 2 and DP 2 groups would cross other links than the default order's.
  const RunResult across = run_clustercast(with(run, {"--gpus", "16"}));
  EXPECT_EQ(across.exit_code, 2);
  EXPECT_TRUE(across.out.empty());
  EXPECT_NE(across.err.find("--use-tp-pp-dp-mapping over 16 GPUs is not modelled"), std::string::npos) << across.err;
  EXPECT_EQ(run_clustercast(with(run, {"--gpus", "16", "--pp", "1"})).exit_code, 0) << "PP 1: no pipeline groups";
  // Megatron-Core's own assertion with experts and pipeline stages.
  const RunResult folded = run_clustercast({"simulate", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus",
                                            "8", "--pp", "2", "--ep", "2", "--use-tp-pp-dp-mapping"});
  EXPECT_EQ(folded.exit_code, 2);
  EXPECT_NE(folded.err.find("needs TP x CP (1) equal to ETP x EP (2), as Megatron-Core asserts"), std::string::npos)
      << folded.err;
  // ... and for a dense model too, whose expert groups it builds all the same (ETP = TP, EP 1).
  const RunResult dense = run_clustercast({"simulate", "--model", "gpt3-1.3b", "--cluster", "dgx-h100", "--gpus", "8",
                                           "--cp", "2", "--pp", "2", "--use-tp-pp-dp-mapping"});
  EXPECT_EQ(dense.exit_code, 2);
  EXPECT_NE(dense.err.find("needs TP x CP (2) equal to ETP x EP (1)"), std::string::npos) << dense.err;
}

// A launch line of model flags means what its argument file means: without --vocab-size the
// vocabulary is the tokenizer's, padded at the line's TP (pretrain_gpt.py's default GPT2BPETokenizer:
// GPT-2's 50,257 words), and a tokenizer whose words clustercast cannot count is refused.
TEST(MegatronFlags, ModelFlagsTrainTheirTokenizersVocabularyAsAnArgumentFileDoes) {
  const std::vector<std::string> line = {"simulate", "--num-layers", "2", "--hidden-size", "256",
                                         "--num-attention-heads", "8", "--tensor-model-parallel-size", "2", "--gpus", "2"};
  const TempDir dir;
  std::string words;
  for (std::size_t i = 1; i < line.size() - 2; ++i) words += line[i] + "\n";
  write_file(dir.file("line.args"), words);
  const RunResult pasted = run_clustercast(with(line, {"--json"}));
  ASSERT_EQ(pasted.exit_code, 0) << pasted.err;
  EXPECT_NE(pasted.err.find("GPT-2's 50257 words, padded to 50432 (128 x TP 2)"), std::string::npos) << pasted.err;
  const auto file = json_output({"simulate", "--config", dir.file("line.args"), "--gpus", "2", "--json"});
  EXPECT_EQ(nlohmann::json::parse(pasted.out).at("parameters_total"), file.at("parameters_total"));
  EXPECT_EQ(nlohmann::json::parse(pasted.out).at("iteration_time_s"), file.at("iteration_time_s"));
  const RunResult sentencepiece = run_clustercast(with(line, {"--tokenizer-type", "GPTSentencePieceTokenizer"}));
  EXPECT_EQ(sentencepiece.exit_code, 2);
  EXPECT_NE(sentencepiece.err.find("GPTSentencePieceTokenizer's --tokenizer-model, whose words clustercast cannot "
                                   "count; give it with --vocab-size"),
            std::string::npos)
      << sentencepiece.err;
  EXPECT_EQ(run_clustercast(with(line, {"--tokenizer-type", "GPTSentencePieceTokenizer", "--vocab-size", "256000"}))
                .exit_code,
            0);
  const RunResult unknown = run_clustercast(with(kGpt3, {"--tokenizer-type", "gpt2"}));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--tokenizer-type gpt2 is not one of Megatron-LM's"), std::string::npos) << unknown.err;
}

// A file without --global-batch-size trains micro batch x DP, Megatron-LM's default, at the DP
// of the run it is simulated as; a --tp beside it pads its vocabulary at that TP; a
// HuggingFaceTokenizer names its vocabulary by its Hub repository, as in a NeMo recipe.
TEST(MegatronFlags, AFilesDefaultBatchAndVocabularyFollowTheRunsLayout) {
  const TempDir dir;
  const std::string shape =
      "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --seq-length 512 --max-position-embeddings 512\n"
      "--micro-batch-size 2 --tensor-model-parallel-size 2\n";
  write_file(dir.file("f.args"), shape);
  const auto four = json_output({"simulate", "--config", dir.file("f.args"), "--gpus", "8", "--json"});
  EXPECT_EQ(four.at("config").at("data_parallel_size"), 4);
  EXPECT_EQ(four.at("config").at("global_batch_size"), 8);  // 2 x DP 4 (the file alone: 2 x DP 1)
  EXPECT_EQ(four.at("model").at("vocab_size"), 50432);      // GPT-2's 50,257 padded to 128 x TP 2
  const RunResult tp4 = run_clustercast({"simulate", "--config", dir.file("f.args"), "--gpus", "8",
                                         "--tensor-model-parallel-size", "4", "--json"});
  ASSERT_EQ(tp4.exit_code, 0) << tp4.err;
  const auto j = nlohmann::json::parse(tp4.out);
  EXPECT_EQ(j.at("config").at("global_batch_size"), 4);  // 2 x DP 2
  EXPECT_EQ(j.at("model").at("vocab_size"), 50688);      // 128 x TP 4 = 512; 99 x 512
  EXPECT_NE(tp4.err.find("GPT-2's 50257 words, padded to 50688 (128 x TP 4)"), std::string::npos) << tp4.err;
  EXPECT_EQ(tp4.err.find("TP 2"), std::string::npos) << "one note, at the run's TP: " << tp4.err;
  write_file(dir.file("stated.args"), shape + "--global-batch-size 16\n");
  EXPECT_EQ(json_output({"simulate", "--config", dir.file("stated.args"), "--gpus", "8", "--json"})
                .at("config")
                .at("global_batch_size"),
            16);
  write_file(dir.file("hub.args"),
             shape + "--tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-8B\n");
  EXPECT_EQ(json_output({"simulate", "--config", dir.file("hub.args"), "--gpus", "2", "--json"})
                .at("model")
                .at("vocab_size"),
            128256);  // meta-llama/Meta-Llama-3-8B's config.json vocab_size, a multiple of 256
  write_file(dir.file("unknown.args"),
             shape + "--tokenizer-type HuggingFaceTokenizer --tokenizer-model someone/private-model\n");
  const RunResult unknown = run_clustercast({"simulate", "--config", dir.file("unknown.args"), "--gpus", "2"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--tokenizer-model someone/private-model is not one clustercast knows"),
            std::string::npos)
      << unknown.err;
  EXPECT_NE(unknown.err.find("meta-llama/Meta-Llama-3-8B"), std::string::npos) << unknown.err;  // the known ones
}

// The partial distributed optimizer (Megatron-LM's functional test of it): the state sharded over
// half the DP group takes more memory; the Megatron export writes the flag and reads back to its
// own prediction; NeMo's config has no key for it.
TEST(MegatronFlags, PartialDistributedOptimizerIsReadPricedAndExported) {
  const TempDir dir;
  const std::vector<std::string> run = {
      "simulate", "--config", kReference + "megatron/functional/gpt3_mcore_te_tp2_pp1_multi_dist_optimizer_instances.args",
      "--cluster", "dgx-a100-80gb", "--gpus", "8", "--framework", "megatron-core-ci", "--json"};
  const auto two = json_output(run);
  EXPECT_EQ(two.at("config").at("num_distributed_optimizer_instances"), 2);
  const auto one = json_output(with(run, {"--num-distributed-optimizer-instances", "1"}));
  EXPECT_FALSE(one.at("config").contains("num_distributed_optimizer_instances"));
  EXPECT_GT(two.at("peak_memory_gib").get<double>(), one.at("peak_memory_gib").get<double>());
  // search applies it to every distributed-optimizer layout; its exports carry it.
  const std::vector<std::string> search = {"search", "--model", "gpt3-1.3b", "--cluster", "dgx-h100", "--gpus", "16",
                                           "--global-batch-size", "64", "--use-distributed-optimizer",
                                           "--num-distributed-optimizer-instances", "2", "--top", "1", "--json"};
  const RunResult found =
      run_clustercast(with(search, {"--export-megatron", dir.file("p.args"), "--export", dir.file("p.json")}));
  ASSERT_EQ(found.exit_code, 0) << found.err;
  const auto best = nlohmann::json::parse(found.out).at("results").at(0);
  EXPECT_EQ(best.at("config").at("num_distributed_optimizer_instances"), 2);
  EXPECT_NE(read_file(dir.file("p.args")).find("--num-distributed-optimizer-instances 2"), std::string::npos);
  for (const char* file : {"p.args", "p.json"}) {
    const auto again = json_output({"simulate", "--config", dir.file(file), "--json"});
    EXPECT_EQ(again.at("iteration_time_s"), best.at("iteration_time_s")) << file;
    EXPECT_EQ(again.at("peak_memory_gib"), best.at("peak_memory_gib")) << file;
    EXPECT_EQ(again.at("config"), best.at("config")) << file;
  }
  const RunResult nemo = run_clustercast(with(search, {"--export-nemo", dir.file("p.yaml")}));
  EXPECT_EQ(nemo.exit_code, 2);
  EXPECT_NE(nemo.err.find("--num-distributed-optimizer-instances 2 has no key in NeMo"), std::string::npos) << nemo.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("p.yaml")));
}

// --overlap-param-gather-with-optimizer-step hides the first chunk's parameter gather, which the
// simulator already prices as hidden under --overlap-param-gather: Megatron-LM's functional test of
// it is read, to the prediction without it.
TEST(MegatronFlags, ParamGatherWithTheOptimizerStepIsReadToThePredictionOfTheOverlapItExtends) {
  const std::string file =
      kReference + "megatron/functional/gpt3_mcore_te_tp1_pp4_vp1_dist_optimizer_overlap_grad_reduce_param_gather_overlap_optimizer.args";
  const std::vector<std::string> run = {"simulate", "--config", file, "--cluster", "dgx-h100", "--gpus", "8",
                                        "--framework", "megatron-core-ci", "--json"};
  const auto with_flag = json_output(run);
  std::string text = read_file(file);
  const std::string flag = "--overlap-param-gather-with-optimizer-step\n";
  ASSERT_NE(text.find(flag), std::string::npos);
  text.erase(text.find(flag), flag.size());
  const TempDir dir;
  write_file(dir.file("without.args"), text);
  std::vector<std::string> without = run;
  without[2] = dir.file("without.args");
  EXPECT_EQ(with_flag.at("iteration_time_s"), json_output(without).at("iteration_time_s"));
  EXPECT_EQ(with_flag.at("peak_memory_gib"), json_output(without).at("peak_memory_gib"));
  EXPECT_GT(with_flag.at("config").at("virtual_pipeline_stages").get<int>(), 1);
  // Megatron-LM allows it with the torch checkpoint format only, which the file gives: another format
  // after the file, or the file without its own (torch_dist, the default), is refused by name.
  const RunResult dist = run_clustercast(with(run, {"--ckpt-format", "torch_dist"}));
  EXPECT_EQ(dist.exit_code, 2);
  EXPECT_TRUE(dist.out.empty());
  EXPECT_NE(dist.err.find("needs --ckpt-format torch (this run's is torch_dist)"), std::string::npos) << dist.err;
  const std::string format = "--ckpt-format torch\n";
  ASSERT_NE(text.find(format), std::string::npos);
  std::string defaulted = read_file(file);
  defaulted.erase(defaulted.find(format), format.size());
  write_file(dir.file("defaulted.args"), defaulted);
  std::vector<std::string> default_format = run;
  default_format[2] = dir.file("defaulted.args");
  const RunResult refused = run_clustercast(default_format);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("(this run's is torch_dist, the default)"), std::string::npos) << refused.err;
}

// Tokenizer flags after a file replace the file's own, as later flags do on Megatron-LM's command
// line (`pretrain_gpt.py $(cat FILE) FLAGS`, how an export's launch script passes extra arguments);
// beside a format with no such flags they are refused by name.
TEST(MegatronFlags, TokenizerFlagsAfterAnArgumentFileReplaceItsOwn) {
  const TempDir dir;
  write_file(dir.file("f.args"),
             "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --seq-length 512 --max-position-embeddings 512\n"
             "--micro-batch-size 2 --tensor-model-parallel-size 2\n");
  auto vocab = [&](std::vector<std::string> extra) {
    std::vector<std::string> line = {"simulate", "--config", dir.file("f.args"), "--gpus", "8", "--json"};
    line.insert(line.end(), extra.begin(), extra.end());
    return json_output(line).at("model").at("vocab_size").get<long long>();
  };
  EXPECT_EQ(vocab({}), 50432);                                         // GPT-2's 50,257 at 128 x TP 2
  EXPECT_EQ(vocab({"--tokenizer-type", "TikTokenizer"}), 131072);      // 2^17, a multiple of 256
  EXPECT_EQ(vocab({"--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model", "meta-llama/Meta-Llama-3-8B"}),
            128256);
  EXPECT_EQ(vocab({"--tp", "4", "--make-vocab-size-divisible-by", "64"}), 50432);  // 256 x 197
  EXPECT_EQ(vocab({"--tp", "4"}), 50688);                                          // 512 x 99
  // A file stating --vocab-size (as every export does): a HuggingFace tokenizer named after it counts
  // its own words, as Megatron-LM's build_tokenizer passes --vocab-size to TikTokenizer and
  // NullTokenizer only.
  write_file(dir.file("stated.args"), read_file(dir.file("f.args")) + "--vocab-size 51200\n");
  std::vector<std::string> stated = {"simulate", "--config", dir.file("stated.args"), "--gpus", "8", "--json"};
  EXPECT_EQ(json_output(stated).at("model").at("vocab_size"), 51200);
  EXPECT_EQ(json_output(with(stated, {"--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model",
                                        "mistralai/Mixtral-8x7B-v0.1"}))
                .at("model")
                .at("vocab_size"),
            32000);  // 32000 words, a multiple of 256
  EXPECT_EQ(json_output(with(stated, {"--tokenizer-type", "TikTokenizer"})).at("model").at("vocab_size"), 51200);
  // Beside --model, whose vocabulary is its own, tokenizer flags are refused by name.
  const RunResult preset = run_clustercast({"simulate", "--model", "gpt3-1.3b", "--gpus", "8", "--tokenizer-type",
                                            "TikTokenizer"});
  EXPECT_EQ(preset.exit_code, 2);
  EXPECT_NE(preset.err.find("--tokenizer-type beside --model gpt3-1.3b"), std::string::npos) << preset.err;
  const RunResult nemo = run_clustercast({"simulate", "--config", kReference + "nemo/mixtral_8x7b.yaml",
                                          "--tokenizer-type", "TikTokenizer"});
  EXPECT_EQ(nemo.exit_code, 2);
  EXPECT_TRUE(nemo.out.empty());
  EXPECT_NE(nemo.err.find("--tokenizer-type beside layout file"), std::string::npos) << nemo.err;
  EXPECT_NE(nemo.err.find("give --vocab-size to change it"), std::string::npos) << nemo.err;
}

// --grad-reduce-in-bf16 halves the gradient buffers and the data-parallel traffic of a bf16 run; the
// Megatron export writes it and reads back to its own prediction; NeMo's config cannot say it.
TEST(MegatronFlags, GradientsReducedInBf16HalveTheirBuffersAndTrafficAndExportToMegatron) {
  const std::vector<std::string> run = {"simulate", "--model", "gpt3-1.3b", "--gpus", "16", "--tp", "2",
                                        "--micro-batch-size", "4", "--global-batch-size", "64",
                                        "--use-distributed-optimizer", "--json"};
  const auto fp32 = json_output(with(run, {"--bf16"}));
  const auto bf16 = json_output(with(run, {"--bf16", "--grad-reduce-in-bf16"}));
  EXPECT_EQ(bf16.at("config").at("grad_reduce_in_bf16"), true);
  EXPECT_FALSE(fp32.at("config").contains("grad_reduce_in_bf16"));
  EXPECT_LT(bf16.at("peak_memory_gib").get<double>(), fp32.at("peak_memory_gib").get<double>());
  EXPECT_LT(bf16.at("iteration_time_s").get<double>(), fp32.at("iteration_time_s").get<double>());
  // On fp16 Megatron-LM already reduces in fp16: the switch changes nothing.
  const auto fp16 = json_output(with(run, {"--fp16"}));
  const auto fp16_switch = json_output(with(run, {"--fp16", "--grad-reduce-in-bf16"}));
  EXPECT_EQ(fp16.at("iteration_time_s"), fp16_switch.at("iteration_time_s"));
  EXPECT_EQ(fp16.at("peak_memory_gib"), fp16_switch.at("peak_memory_gib"));
  EXPECT_FALSE(fp16_switch.at("config").contains("grad_reduce_in_bf16"));  // left aside, so exports omit it

  const TempDir dir;
  const RunResult search =
      run_clustercast({"search", "--model", "gpt3-1.3b", "--gpus", "16", "--global-batch-size", "64",
                       "--grad-reduce-in-bf16", "--top", "1", "--export-megatron", dir.file("best.args"), "--export",
                       dir.file("best.json")});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_NE(read_file(dir.file("best.args")).find("--grad-reduce-in-bf16"), std::string::npos);
  const auto json = json_output({"simulate", "--config", dir.file("best.json"), "--json"});
  const auto args = json_output({"simulate", "--config", dir.file("best.args"), "--json"});
  EXPECT_EQ(json.at("config").at("grad_reduce_in_bf16"), true);
  EXPECT_EQ(args.at("config"), json.at("config"));
  EXPECT_EQ(args.at("iteration_time_s"), json.at("iteration_time_s"));
  // NeMo reduces in bf16 through a distributed optimizer's grad_sync_dtype: written, and read back.
  const RunResult nemo = run_clustercast({"search", "--model", "gpt3-1.3b", "--gpus", "16", "--global-batch-size",
                                          "64", "--grad-reduce-in-bf16", "--use-distributed-optimizer", "--top", "1",
                                          "--export-nemo", dir.file("n.yaml"), "--export", dir.file("n.json")});
  ASSERT_EQ(nemo.exit_code, 0) << nemo.err;
  EXPECT_NE(read_file(dir.file("n.yaml")).find("grad_sync_dtype: bf16"), std::string::npos);
  const auto yaml = json_output({"simulate", "--config", dir.file("n.yaml"), "--json"});
  const auto yaml_json = json_output({"simulate", "--config", dir.file("n.json"), "--json"});
  EXPECT_EQ(yaml.at("config"), yaml_json.at("config"));
  EXPECT_EQ(yaml.at("iteration_time_s"), yaml_json.at("iteration_time_s"));
  // Without a distributed optimizer NeMo has no way to say it: refused, nothing written.
  const RunResult plain = run_clustercast({"search", "--model", "gpt3-1.3b", "--gpus", "16", "--global-batch-size",
                                           "64", "--grad-reduce-in-bf16", "--no-distributed-optimizer", "--top", "1",
                                           "--export-nemo", dir.file("p.yaml"), "--export", dir.file("p.json")});
  EXPECT_EQ(plain.exit_code, 2);
  EXPECT_NE(plain.err.find("only through a distributed optimizer's grad_sync_dtype"), std::string::npos) << plain.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("p.yaml")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("p.json")));  // all exports or none
}

// --overlap-p2p-communication-warmup-flush overlaps the interleaved schedule's warm-up and flush sends
// as its steady state's are; clustercast prices those sends so in every phase under a stack whose
// interleaved sends overlap, refuses the flag under one whose sends block, and leaves it aside
// without virtual stages.
TEST(MegatronFlags, WarmupAndFlushOverlapIsReadWhereInterleavedSendsArePricedOverlapped) {
  const std::vector<std::string> run = {"simulate", "--model", "gpt3-1.3b", "--gpus", "8", "--pp", "4",
                                        "--num-layers-per-virtual-pipeline-stage", "2", "--global-batch-size", "32",
                                        "--json"};
  const auto plain = json_output(run);
  const RunResult flagged = run_clustercast(with(run, {"--overlap-p2p-communication-warmup-flush"}));
  ASSERT_EQ(flagged.exit_code, 0) << flagged.err;
  EXPECT_EQ(nlohmann::json::parse(flagged.out).at("iteration_time_s"), plain.at("iteration_time_s"));
  const RunResult blocking =
      run_clustercast(with(run, {"--overlap-p2p-communication-warmup-flush", "--framework", "megatron-2021"}));
  EXPECT_EQ(blocking.exit_code, 2);
  EXPECT_NE(blocking.err.find("is not priced under stack 'megatron-2021', whose interleaved pipeline sends block"),
            std::string::npos)
      << blocking.err;
  const RunResult one_chunk = run_clustercast({"simulate", "--model", "gpt3-1.3b", "--gpus", "8", "--pp", "4",
                                               "--overlap-p2p-communication-warmup-flush"});
  EXPECT_EQ(one_chunk.exit_code, 0) << one_chunk.err;
  EXPECT_NE(one_chunk.err.find("--overlap-p2p-communication-warmup-flush left aside"), std::string::npos)
      << one_chunk.err;
}

// --transformer-impl local in a file and what the local layers cannot run on the command line, or
// the other way round, are refused as they are on one line: the run both make is checked.
TEST(MegatronFlags, LocalLayersAreCheckedOnTheRunAFileAndFlagsMakeTogether) {
  const TempDir dir;
  const std::string shape =
      "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --seq-length 512 --max-position-embeddings 512\n"
      "--micro-batch-size 1 --tensor-model-parallel-size 2 --sequence-parallel --bf16\n";
  write_file(dir.file("local.args"), shape + "--transformer-impl local\n");
  write_file(dir.file("te.args"), shape + "--fp8-format hybrid\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"--config", dir.file("local.args"), "--use-flash-attn"}, "has no flash or fused kernel"},
      {{"--config", dir.file("local.args"), "--fp8-format", "hybrid"}, "--fp8-format needs Transformer Engine's"},
      {{"--config", dir.file("local.args"), "--tp-comm-overlap"}, "--tp-comm-overlap pipelines Transformer Engine's"},
      {{"--config", dir.file("te.args"), "--transformer-impl", "local"}, "--fp8-format needs Transformer Engine's"}};
  for (const auto& [words, expected] : refused) {
    std::vector<std::string> args = {"simulate", "--cluster", "dgx-h100", "--gpus", "8"};
    args.insert(args.end(), words.begin(), words.end());
    const RunResult r = run_clustercast(args);
    EXPECT_EQ(r.exit_code, 2) << words.back();
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  }
  const auto local = json_output({"simulate", "--config", dir.file("local.args"), "--cluster", "dgx-h100", "--gpus",
                                    "8", "--json"});
  EXPECT_EQ(local.at("config").at("attention"), "unfused");
}

// --swiglu over a GPT preset keeps its MLP's biases (Megatron-LM's default --add-bias-linear on a
// SwiGLU MLP: gate and up 2 x 4h, down h per layer), so the model exports and reads back as itself.
TEST(MegatronFlags, ASwigluOverAGptPresetKeepsItsBiasesAndExports) {
  const auto gelu = json_output({"simulate", "--model", "gpt3-125m", "--gpus", "8", "--json"});
  const auto swiglu = json_output({"simulate", "--model", "gpt3-125m", "--swiglu", "--gpus", "8", "--json"});
  // The FFN 3072 = 4h gains a third matrix (h x 3072) and one more bias of 3072, in 12 layers.
  EXPECT_EQ(swiglu.at("parameters_total").get<std::int64_t>() - gelu.at("parameters_total").get<std::int64_t>(),
            12 * (768 * 3072 + 3072));
  const TempDir dir;
  const RunResult search = run_clustercast({"search", "--model", "gpt3-125m", "--swiglu", "--gpus", "8",
                                            "--global-batch-size", "64", "--top", "1", "--export-megatron",
                                            dir.file("best.args")});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_EQ(read_file(dir.file("best.args")).find("--disable-bias-linear"), std::string::npos);
  EXPECT_EQ(json_output({"simulate", "--config", dir.file("best.args"), "--json"}).at("parameters_total"),
            swiglu.at("parameters_total"));
}

TEST(ShapeOverrides, HeadsOnAMultiHeadPresetMoveItsQueryGroups) {
  // small: 8 heads, 8 query groups. Before: --num-attention-heads 4 kept 8 groups and was refused.
  const auto m = json_output({"simulate", "--model", "small", "--gpus", "1", "--num-attention-heads", "4", "--json"});
  EXPECT_EQ(m.at("model").at("num_query_groups"), 4);
  // llama2-70b is grouped-query (64 heads, 8 groups): its groups stay.
  const auto g = json_output(
      {"simulate", "--model", "llama2-70b", "--gpus", "8", "--tp", "8", "--num-attention-heads", "32", "--json"});
  EXPECT_EQ(g.at("model").at("num_query_groups"), 8);
}

TEST(ShapeOverrides, AnFfnThatIsAMultipleOfTheHiddenSizeFollowsIt) {
  // gpt3-175b: FFN 4 x 12288. With --hidden-size 6144 it is 4 x 6144.
  const auto m = json_output({"simulate", "--model", "gpt3-175b", "--gpus", "8", "--tp", "8", "--hidden-size",
                                "6144", "--json"});
  EXPECT_EQ(m.at("model").at("ffn_hidden_size"), 24576);
  // llama2-7b: 11008 is no multiple of 4096, so it stays; --ffn-hidden-size always wins.
  EXPECT_EQ(json_output({"simulate", "--model", "llama2-7b", "--gpus", "8", "--tp", "8", "--hidden-size", "2048",
                           "--json"})
                .at("model")
                .at("ffn_hidden_size"),
            11008);
  EXPECT_EQ(json_output({"simulate", "--model", "gpt3-175b", "--gpus", "8", "--tp", "8", "--hidden-size", "6144",
                           "--ffn-hidden-size", "16384", "--json"})
                .at("model")
                .at("ffn_hidden_size"),
            16384);
}

}  // namespace
}  // namespace cc::cli_test
