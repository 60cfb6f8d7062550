// Layout files through the real binary: `search`'s three exports read back by `simulate --config`
// unchanged, NeMo's own configs simulated, and real Megatron-LM launch scripts pasted into
// `simulate` — the dense GPT-3 one, and Mixtral's read as the Mixtral preset.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

const std::string kReference = std::string(CLUSTERCAST_SOURCE_DIR) + "/tests/reference/";

TEST(LayoutInterop, EveryExportOfSearchReadsBackUnchanged) {
  const TempDir dir;
  const RunResult s = run_clustercast({"search", "--model", "gpt3-13b", "--gpus", "64", "--global-batch-size", "512",
                                       "--cluster", "dgx-h100", "--export", dir.file("best.json"), "--export-megatron",
                                       dir.file("best.args"), "--export-nemo", dir.file("best.yaml")});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"best.json", "best.args", "best.args.sh", "best.yaml"}));
  const auto json = json_output({"simulate", "--config", dir.file("best.json"), "--json"});
  for (const char* file : {"best.args", "best.yaml"}) {
    const RunResult r = run_clustercast({"simulate", "--config", dir.file(file), "--json"});
    ASSERT_EQ(r.exit_code, 0) << file << ": " << r.err;
    EXPECT_EQ(r.err, "") << file << ": our own export needs no note";
    const auto back = nlohmann::json::parse(r.out);
    EXPECT_EQ(back.at("cluster"), "dgx-h100") << file;
    EXPECT_EQ(back.at("config"), json.at("config")) << file;
    EXPECT_EQ(back.at("model").at("vocab_size"), json.at("model").at("vocab_size")) << file;
    EXPECT_EQ(back.at("iteration_time_s"), json.at("iteration_time_s")) << file;
    EXPECT_EQ(back.at("peak_memory_gib"), json.at("peak_memory_gib")) << file;
  }
  // Without its launch script the argument file still describes the layout; the GPU count and
  // cluster are then the command line's.
  std::filesystem::remove(dir.file("best.args.sh"));
  const auto alone = json_output(
      {"simulate", "--config", dir.file("best.args"), "--gpus", "64", "--cluster", "dgx-h100", "--json"});
  EXPECT_EQ(alone.at("iteration_time_s"), json.at("iteration_time_s"));
}

// Runs `clustercast simulate WORDS... EXTRA...` where WORDS are the named bash arrays of a launch
// script, expanded by bash itself — the words a user copies out of the script.
RunResult paste_arrays(const std::string& script, const std::vector<std::string>& arrays,
                       const std::vector<std::string>& extra) {
  std::string command = "source <(sed -n '";
  for (const auto& a : arrays) command += "/^" + a + "=(/,/^)/p;";
  command += "' \"$1\") && shift && exec \"$0\" simulate";
  for (const auto& a : arrays) command += " \"${" + a + "[@]}\"";
  command += " \"$@\"";
  std::vector<std::string> argv{"bash", "-c", command, CLUSTERCAST_BINARY, kReference + "megatron/" + script};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_command(argv);
}

TEST(LayoutInterop, MegatronLmsGpt3LaunchScriptPastesIntoSimulate) {
  const RunResult r = paste_arrays("train_gpt3_175b_distributed.sh",
                                   {"GPT_MODEL_ARGS", "TRAINING_ARGS", "MODEL_PARALLEL_ARGS"}, {"--gpus", "1024", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("model").at("num_layers"), 96);
  EXPECT_EQ(j.at("model").at("hidden_size"), 12288);
  EXPECT_EQ(j.at("model").at("num_attention_heads"), 96);
  EXPECT_EQ(j.at("config").at("tensor_model_parallel_size"), 8);
  EXPECT_EQ(j.at("config").at("pipeline_model_parallel_size"), 16);
  EXPECT_EQ(j.at("config").at("data_parallel_size"), 8);  // 1024 / (8 x 16)
  EXPECT_EQ(j.at("config").at("global_batch_size"), 1536);
  EXPECT_EQ(j.at("config").at("precision"), "fp16");
  EXPECT_EQ(j.at("config").at("attention"), "flash");  // --attention-backend auto
  // What bears on neither time nor memory is named in one note, not silently dropped.
  EXPECT_NE(r.err.find("note: Megatron-LM flags left aside"), std::string::npos) << r.err;
  for (const char* flag : {"--weight-decay", "--lr", "--clip-grad"}) EXPECT_NE(r.err.find(flag), std::string::npos) << flag;
  // The batch steps end at the global batch the script gives: read, not left aside.
  EXPECT_EQ(r.err.find("--step-batch-size-schedule"), std::string::npos) << r.err;
}

TEST(LayoutInterop, MegatronLmsMixtralLaunchReadsAsMixtral) {
  const std::vector<std::string> arrays{"MODEL_ARGS", "MOE_ARGS", "MODEL_PARALLEL_ARGS"};
  // Pasted as written, its MoE flags are read. Its fusion switch and its --sequence-parallel at TP 1
  // change nothing under the flash attention Megatron-Core runs, and each says so.
  const RunResult pasted = paste_arrays("train_mixtral_8x7b_distributed.sh", arrays, {"--gpus", "64"});
  EXPECT_EQ(pasted.exit_code, 0) << pasted.err;
  EXPECT_NE(pasted.err.find("warning: --no-masked-softmax-fusion left aside"), std::string::npos) << pasted.err;
  EXPECT_NE(pasted.err.find("warning: --sequence-parallel is off"), std::string::npos) << pasted.err;
  // With the unfused kernels, whose softmax is priced fused, the switch is refused by name.
  const RunResult unfused =
      paste_arrays("train_mixtral_8x7b_distributed.sh", arrays, {"--gpus", "64", "--attention-backend", "unfused"});
  EXPECT_EQ(unfused.exit_code, 2);
  EXPECT_TRUE(unfused.out.empty());
  EXPECT_NE(unfused.err.find("--no-masked-softmax-fusion with the unfused attention kernels is not modelled"),
            std::string::npos)
      << unfused.err;
  // The same words as an argument file (`$(cat FILE)`), with the tokenizer model the script takes
  // as its second argument.
  const TempDir dir;
  const RunResult write = run_command(
      {"bash", "-c",
       "TOKENIZER_MODEL=/data/tokenizer.model && source <(sed -n '/^MODEL_ARGS=(/,/^)/p;/^MOE_ARGS=(/,/^)/p;/^DATA_ARGS=(/,/^)/p;/^MODEL_PARALLEL_ARGS=(/,/^)/p' "
       "\"$1\") && printf '%s\\n' \"${MODEL_ARGS[@]}\" \"${MOE_ARGS[@]}\" \"${DATA_ARGS[@]}\" "
       "\"${MODEL_PARALLEL_ARGS[@]}\" > \"$2\"",
       "bash", kReference + "megatron/train_mixtral_8x7b_distributed.sh", dir.file("mixtral.args")});
  ASSERT_EQ(write.exit_code, 0) << write.err;
  // The tokenizer's vocabulary (Llama 2's 32,000 words) is not in the file: refused until given.
  const RunResult unsized = run_clustercast({"simulate", "--config", dir.file("mixtral.args"), "--gpus", "64",
                                             "--cluster", "dgx-h100", "--bf16", "--json"});
  EXPECT_EQ(unsized.exit_code, 2);
  EXPECT_TRUE(unsized.out.empty());
  EXPECT_NE(unsized.err.find("the vocabulary comes from Llama2Tokenizer's --tokenizer-model, whose words clustercast "
                             "cannot count; give it with --vocab-size"),
            std::string::npos)
      << unsized.err;
  const auto file = json_output({"simulate", "--config", dir.file("mixtral.args"), "--gpus", "64", "--cluster",
                                   "dgx-h100", "--vocab-size", "32000", "--micro-batch-size", "1",
                                   "--global-batch-size", "256", "--bf16", "--json"});
  EXPECT_EQ(file.at("parameters_total"), 46702792704);
  EXPECT_EQ(file.at("parameters_active"), 12879925248);
  // The same run from the preset at the script's sequence length predicts the same.
  const auto preset = json_output({"simulate", "--model", "mixtral-8x7b", "--seq-length", "4096", "--gpus", "64",
                                     "--cluster", "dgx-h100", "--pp", "4", "--ep", "8", "--use-distributed-optimizer",
                                     "--overlap-grad-reduce", "--overlap-param-gather", "--moe-grouped-gemm",
                                     "--moe-token-dispatcher-type", "alltoall", "--moe-aux-loss-coeff", "1e-2",
                                     "--micro-batch-size", "1", "--global-batch-size", "256", "--bf16", "--json"});
  EXPECT_EQ(file.at("iteration_time_s"), preset.at("iteration_time_s"));
  EXPECT_EQ(file.at("peak_memory_gib"), preset.at("peak_memory_gib"));
}

TEST(LayoutInterop, NemosOwnConfigsSimulate) {
  const auto launcher = json_output({"simulate", "--config", kReference + "nemo/gpt3_175b.yaml", "--json"});
  EXPECT_EQ(launcher.at("config").at("data_parallel_size"), 32);  // 128 nodes x 8 / (TP 4 x PP 8)
  EXPECT_EQ(launcher.at("config").at("virtual_pipeline_stages"), 6);
  const RunResult base = run_clustercast({"simulate", "--config", kReference + "nemo/megatron_gpt_config.yaml"});
  EXPECT_EQ(base.exit_code, 0) << base.err;
}

// NeMo-Framework-Launcher's Llama 2 configs take their vocabulary from a sentencepiece model file,
// which clustercast cannot read: refused by name, nothing written, until --vocab-size gives it; then
// the model is the llama2-7b preset: Hugging Face's 6,738,415,616 parameters (untied 32,000-word
// embeddings, no biases: the file's bias false).
TEST(LayoutInterop, NemoLaunchersLlama2ConfigNeedsItsVocabulary) {
  const std::string config = kReference + "nemo/llama/llama2_7b.yaml";
  const RunResult refused = run_clustercast({"simulate", "--config", config, "--json"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(refused.out.empty());
  EXPECT_NE(refused.err.find("the vocabulary comes from model.tokenizer (library 'sentencepiece'), whose words "
                             "clustercast cannot count; give it with --vocab-size"),
            std::string::npos)
      << refused.err;
  const auto r = json_output({"simulate", "--config", config, "--vocab-size", "32000", "--json"});
  EXPECT_EQ(r.at("parameters_total"), 6'738'415'616);
  const auto preset =
      json_output({"simulate", "--model", "llama2-7b", "--seq-length", "4096", "--gpus", "128", "--json"});
  EXPECT_EQ(r.at("parameters_total"), preset.at("parameters_total"));
  EXPECT_EQ(r.at("config").at("data_parallel_size"), 128);  // 16 nodes x 8, TP 1, PP 1
}

// Every Llama 3 training config of NeMo-Framework-Launcher runs CP 2: each is read with its
// layout as written (values read off the files) and simulates.
TEST(LayoutInterop, NemoLaunchersLlama3ConfigsSimulateWithContextParallelism) {
  struct Expected {
    const char* file;
    int gpus, tp, cp, pp, virtual_stages, global_batch;
  };
  for (const Expected& e : {Expected{"llama3_8b", 16 * 8, 1, 2, 1, 1, 2048}, Expected{"llama3_1_8b", 16 * 8, 1, 2, 1, 1, 2048},
                            Expected{"llama3_70b", 128 * 8, 4, 2, 4, 5, 2048},
                            Expected{"llama3_1_70b", 128 * 8, 4, 2, 4, 10, 2048},
                            Expected{"llama3_1_405b", 576 * 8, 8, 2, 9, 7, 2016}}) {
    const auto r = json_output({"simulate", "--config", kReference + "nemo/llama/" + e.file + ".yaml", "--json"});
    const auto& c = r.at("config");
    EXPECT_EQ(c.at("context_parallel_size"), e.cp) << e.file;
    EXPECT_EQ(c.at("tensor_model_parallel_size"), e.tp) << e.file;
    EXPECT_EQ(c.at("pipeline_model_parallel_size"), e.pp) << e.file;
    EXPECT_EQ(c.at("virtual_pipeline_stages"), e.virtual_stages) << e.file;
    EXPECT_EQ(c.at("global_batch_size"), e.global_batch) << e.file;
    EXPECT_EQ(c.at("data_parallel_size"), e.gpus / (e.tp * e.cp * e.pp)) << e.file;  // DP = GPUs / (TP x CP x PP)
    EXPECT_GT(r.at("iteration_time_s").get<double>(), 0) << e.file;
  }
}

TEST(LayoutInterop, UnmodelledParallelismOnTheCommandLineIsRefusedByName) {
  for (const auto& [flag, value] : {std::pair{"--expert-model-parallel-size", "2"}}) {
    const RunResult r = run_clustercast({"simulate", "--model", "gpt3-175b", "--gpus", "64", "--tp", "8", flag, value});
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find(std::string(flag) + " " + value), std::string::npos) << r.err;
  }
  EXPECT_EQ(run_clustercast({"simulate", "--model", "gpt3-175b", "--gpus", "64", "--tp", "8",
                             "--expert-model-parallel-size", "1"})
                .exit_code,
            0);
}

// Megatron-LM's default written out on the command line is left aside and named in the note (so is
// --rerun-mode disabled, which runs the same checks); another value is refused with it, as in an
// argument file (one rule: kIgnored's only_value).
TEST(LayoutInterop, MegatronDefaultsOnTheCommandLineAreLeftAsideOtherValuesRefused) {
  const std::vector<std::string> run{"simulate", "--model", "gpt3-1.3b", "--gpus", "8", "--tp", "1"};
  const RunResult left_aside =
      run_clustercast(with(run, {"--distributed-backend", "nccl", "--rerun-mode", "validate_results"}));
  EXPECT_EQ(left_aside.exit_code, 0) << left_aside.err;
  EXPECT_NE(left_aside.err.find("left aside, as they bear on neither time nor memory: --distributed-backend, "
                                "--rerun-mode"),
            std::string::npos)
      << left_aside.err;
  EXPECT_EQ(run_clustercast(with(run, {"--rerun-mode", "disabled"})).exit_code, 0);
  for (const auto& [flag, value] :
       {std::pair{"--rerun-mode", "report_stats"}, std::pair{"--distributed-backend", "gloo"}}) {
    const RunResult r = run_clustercast(with(run, {flag, value}));
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find(std::string(flag) + " " + value + " ("), std::string::npos) << r.err;
  }
  // --transformer-impl is modelled: Megatron-Core's local layers run the unfused attention.
  const auto te = json_output(with(run, {"--transformer-impl", "transformer_engine", "--json"}));
  const auto local = json_output(with(run, {"--transformer-impl", "local", "--json"}));
  const auto unfused = json_output(with(run, {"--attention-backend", "unfused", "--json"}));
  EXPECT_EQ(te.at("config").at("attention"), "flash");
  EXPECT_EQ(local.at("config"), unfused.at("config"));
  EXPECT_EQ(local.at("iteration_time_s"), unfused.at("iteration_time_s"));
}

}  // namespace
}  // namespace cc::cli_test
