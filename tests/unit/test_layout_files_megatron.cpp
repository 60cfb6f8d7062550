// Megatron-LM argument files: the export passes a parser built from Megatron-LM's own argument
// definitions (tests/reference/megatron/arguments_flags.tsv), says the architecture, pastes into
// `pretrain_gpt.py $(cat FILE)`, and reads back; unknown layout-changing flags are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "interop/layout_files.h"
#include "interop/megatron_options.h"
#include "interop/megatron_tokenizer.h"
#include "sim/result_json.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

using layout_test::error_of;
using layout_test::layout;
using layout_test::reference;
using layout_test::simulated;

struct FlagDefinition {
  std::string kind, type;
  std::vector<std::string> choices;  // empty: any value of `type`
};

// The fixture: FLAG \t KIND \t TYPE \t CHOICES, one option string per line.
std::map<std::string, FlagDefinition> megatron_flags() {
  std::ifstream in(reference("megatron/arguments_flags.tsv"));
  std::map<std::string, FlagDefinition> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string flag, choices;
    FlagDefinition d;
    std::getline(fields, flag, '\t');
    std::getline(fields, d.kind, '\t');
    std::getline(fields, d.type, '\t');
    std::getline(fields, choices, '\t');
    if (choices != "-") {
      std::istringstream list(choices);
      for (std::string c; std::getline(list, c, ',');) d.choices.push_back(c);
    }
    out[flag] = d;
  }
  return out;
}

// Checks one argument file as argparse would: every flag defined, the right number of values,
// each value of the flag's type and among its choices. Returns the problems found.
std::vector<std::string> megatron_parse_problems(const std::string& text) {
  static const auto defined = megatron_flags();
  std::vector<std::string> words, problems;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  for (std::size_t i = 0; i < words.size();) {
    const std::string flag = words[i++];
    const auto it = defined.find(flag);
    if (it == defined.end()) {
      problems.push_back("'" + flag + "' is not a Megatron-LM argument");
      continue;
    }
    std::vector<std::string> values;
    while (i < words.size() && words[i].rfind("--", 0) != 0) values.push_back(words[i++]);
    const FlagDefinition& d = it->second;
    const std::size_t wanted = d.kind == "flag" ? 0 : d.kind == "value" ? 1 : values.size();
    if (values.size() != wanted || (d.kind == "list" && values.empty())) {
      problems.push_back(flag + " takes " + d.kind + ", given " + std::to_string(values.size()) + " values");
      continue;
    }
    for (const auto& v : values) {
      std::size_t used = 0;
      try {
        if (d.type == "int") (void)std::stoll(v, &used);
        if (d.type == "float") (void)std::stod(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if ((d.type == "int" || d.type == "float") && used != v.size())
        problems.push_back(flag + " " + v + " is not a " + d.type);
      if (!d.choices.empty() && std::find(d.choices.begin(), d.choices.end(), v) == d.choices.end())
        problems.push_back(flag + " " + v + " is not one of its choices");
    }
  }
  return problems;
}

std::vector<SimResult> exports_to_check() {
  std::vector<SimResult> out;
  ParallelConfig a = layout(8, 4, 4, 1, 512);
  a.distributed_optimizer = a.overlap_grad_reduce = a.overlap_param_gather = a.sequence_parallel = true;
  a.tp_comm_overlap = true;
  a.virtual_stages = 2;
  out.push_back(simulated(load_model("gpt3-13b"), a));
  ParallelConfig b = layout(8, 1, 8, 1, 64);
  b.precision = Precision::FP8;
  b.attention = AttentionKernel::Flash;
  out.push_back(simulated(load_model("llama3-8b"), b, "dgx-h100"));
  ParallelConfig c = layout(8, 8, 2, 1, 64);
  c.first_stage_layers = c.last_stage_layers = 6;  // 96 = 6 + 6 x 14 + 6
  c.precision = Precision::FP32;
  c.recompute = RecomputeGranularity::Full;
  c.recompute_method = RecomputeMethod::Block;
  c.recompute_num_layers = 2;
  out.push_back(simulated(load_model("gpt3-175b"), c));
  ModelSpec wide_heads = load_model("llama2-7b");  // Gemma-style: 16 heads of 256 on a hidden size of 3072
  wide_heads.hidden_size = 3072;
  wide_heads.num_attention_heads = wide_heads.num_query_groups = 16;
  wide_heads.explicit_head_dim = 256;
  wide_heads.ffn_hidden_size = 24576;
  out.push_back(simulated(wide_heads, layout(2, 1, 4, 1, 8)));
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  const auto all = lines_of(text);
  return std::find(all.begin(), all.end(), line) != all.end();
}

TEST(MegatronExport, EveryFlagPassesMegatronLmsOwnArgumentDefinitions) {
  ASSERT_GT(megatron_flags().size(), 500u);  // the whole parser, not a hand-picked list
  // The checker itself catches what Megatron's argparse would refuse.
  EXPECT_EQ(megatron_parse_problems("--num-layers x --bf16 1 --frobnicate --attention-backend magic").size(), 4u);
  for (const SimResult& r : exports_to_check()) {
    const std::string args = megatron_arguments(r, {});
    for (const auto& line : lines_of(args)) EXPECT_NE(line.rfind("#", 0), 0u) << "a comment becomes an argument";
    const auto problems = megatron_parse_problems(args);
    EXPECT_TRUE(problems.empty()) << r.model.name << ": " << problems.front();
  }
}

TEST(MegatronExport, TheArchitectureIsSaidInMegatronsFlags) {
  const auto results = exports_to_check();
  const std::string llama = megatron_arguments(results[1], {});
  for (const char* line : {"--swiglu", "--disable-bias-linear", "--normalization RMSNorm",
                           "--position-embedding-type rope", "--untie-embeddings-and-output-weights",
                           "--group-query-attention", "--num-query-groups 8", "--bf16", "--fp8-format hybrid"})
    EXPECT_TRUE(has_line(llama, line)) << line;
  // 128256 = 2^8 x 501: the largest power-of-two unit u <= 128 with 8u dividing it is 32, so
  // Megatron-LM's padding to a multiple of 32 x TP 8 leaves the vocabulary as simulated.
  EXPECT_TRUE(has_line(llama, "--vocab-size 128256"));
  EXPECT_TRUE(has_line(llama, "--make-vocab-size-divisible-by 32"));
  EXPECT_EQ(megatron_padded_vocab(128256, 32, 8), 128256);
  const std::string gpt = megatron_arguments(results[2], {});
  EXPECT_FALSE(has_line(gpt, "--disable-bias-linear"));  // GeLU MLP with biases
  EXPECT_FALSE(has_line(gpt, "--bf16"));                 // FP32 is Megatron's default
  EXPECT_FALSE(has_line(gpt, "--fp16"));
  EXPECT_TRUE(has_line(gpt, "--decoder-first-pipeline-num-layers 6"));
  EXPECT_TRUE(has_line(gpt, "--decoder-last-pipeline-num-layers 6"));
  EXPECT_TRUE(has_line(gpt, "--make-vocab-size-divisible-by 128"));  // 51200 = 50 x 128 x 8
  EXPECT_TRUE(has_line(megatron_arguments(results[3], {}), "--kv-channels 256"));
  EXPECT_TRUE(has_line(megatron_arguments(results[0], {}), "--num-layers-per-virtual-pipeline-stage 5"));  // 40/(4x2)
}

TEST(MegatronExport, WhatMegatronCannotSayIsRefusedByName) {
  ParallelConfig c = layout(8, 7, 1, 1, 8);
  c.attention = AttentionKernel::Flash;
  const SimResult bloom = simulated(load_model("bloom-176b"), c);
  EXPECT_NE(error_of([&] { megatron_arguments(bloom, {}); }).find("ALiBi"), std::string::npos);
  ModelSpec geglu = load_model("llama2-7b");
  geglu.activation = Activation::GeGLU;
  const SimResult gemma_like = simulated(geglu, layout(8, 1, 1, 1, 8));
  EXPECT_NE(error_of([&] { megatron_arguments(gemma_like, {}); }).find("GeGLU"), std::string::npos);
}

TEST(MegatronExport, TheLaunchScriptCarriesWhatArgumentsCannot) {
  const auto results = exports_to_check();
  const std::string tp8 = megatron_launch_script(results[0], {}, "/tmp/x/best.args");
  EXPECT_TRUE(has_line(tp8, "export CUDA_DEVICE_MAX_CONNECTIONS=1"));
  EXPECT_NE(tp8.find("--nproc_per_node 8 --nnodes 16 "), std::string::npos);  // 128 GPUs = 16 nodes of 8
  EXPECT_NE(tp8.find("# clustercast: --cluster dgx-a100-80gb --gpus 128 "), std::string::npos);
  EXPECT_NE(tp8.find("pretrain_gpt.py $(cat \"$(dirname \"$0\")/best.args\")"), std::string::npos);
  ParallelConfig tp1 = layout(1, 1, 8, 1, 8);
  const std::string no_tp = megatron_launch_script(simulated(load_model("gpt3-125m"), tp1), {}, "a.args");
  EXPECT_EQ(no_tp.find("CUDA_DEVICE_MAX_CONNECTIONS"), std::string::npos);
}

TEST(MegatronExport, TheArgumentsReadBackAsTheLayoutThatWasSimulated) {
  for (const SimResult& r : exports_to_check()) {
    const LayoutFile back = parse_layout_text(megatron_arguments(r, {}), "export of " + r.model.name);
    ASSERT_TRUE(back.model);
    ModelSpec m = r.model;
    m.name = back.model->name;  // the name is not a Megatron flag
    EXPECT_EQ(model_to_json(*back.model).dump(), model_to_json(m).dump()) << r.model.name;
    ParallelConfig expected = r.config;
    expected.framework = back.config.framework;
    expected.dp = back.config.dp;  // the GPU count is in the launch script, not in the arguments
    EXPECT_EQ(config_to_json(back.config).dump(), config_to_json(expected).dump()) << r.model.name;
  }
}

TEST(MegatronArguments, FullRecomputeNeedsItsMethodAndLayerCountAsMegatronCoreDoes) {
  auto refusal = [](const std::string& text) { return error_of([&] { parse_layout_text(text, "f.args"); }); };
  EXPECT_NE(refusal("--recompute-granularity full\n").find("f.args: --recompute-granularity full without "
                                                            "--recompute-method: Megatron-Core refuses it"),
            std::string::npos);
  EXPECT_NE(refusal("--recompute-granularity full --recompute-method block\n").find("without --recompute-num-layers"),
            std::string::npos);
  const ParallelConfig c =
      parse_layout_text("--recompute-granularity full --recompute-method block --recompute-num-layers 2\n", "f").config;
  EXPECT_EQ(c.recompute, RecomputeGranularity::Full);
  EXPECT_EQ(c.recompute_method, RecomputeMethod::Block);
  EXPECT_EQ(c.recompute_num_layers, 2);
}

TEST(MegatronArguments, FlagsThatWouldChangeTheLayoutAreRefusedByName) {
  auto refusal = [](const std::string& text) { return error_of([&] { parse_layout_text(text, "f.args"); }); };
  // The model flags (MoE ones too) need the three Megatron-LM requires beside them.
  EXPECT_NE(refusal("--num-experts 8\n").find("the model flags need --num-layers"), std::string::npos);
  EXPECT_NE(refusal("--frobnicate 3 --tensor-model-parallel-size 2\n").find("--frobnicate"), std::string::npos);
  // Everything refused is named in one message, the MoE switches with what they change.
  const std::string all = refusal("--moe-layer-recompute --no-bias-swiglu-fusion --moe-use-upcycling\n");
  for (const char* part :
       {"--moe-layer-recompute (recomputes", "--moe-use-upcycling (converts", "--no-bias-swiglu-fusion (kernel"})
    EXPECT_NE(all.find(part), std::string::npos) << part << " in " << all;
  // Their no-op values are what Megatron-LM runs without them.
  EXPECT_EQ(parse_layout_text("--context-parallel-size 1\n--expert-model-parallel-size 1\n", "f").config.tp, 1);
  // Expert parallelism is read (whether the model has experts is validate_layout's question).
  const ParallelConfig ep = parse_layout_text("--expert-model-parallel-size 4\n--expert-tensor-parallel-size 1\n", "f").config;
  EXPECT_EQ(ep.ep, 4);
  EXPECT_EQ(ep.etp, 1);
}

TEST(MegatronArguments, FlagsWithoutBearingOnTimeOrMemoryAreListed) {
  const LayoutFile f = parse_layout_text(
      "--lr 1e-4 --data-path 0.5 a 0.5 b --split 99,1,0 --rampup-batch-size 16 16 1000\n"
      "--tensor-model-parallel-size 2 --no-load-optim --pipeline-model-parallel-size 4\n",
      "f.args");
  EXPECT_EQ(f.ignored, (std::vector<std::string>{"--lr", "--data-path", "--split", "--rampup-batch-size",
                                                 "--no-load-optim"}));
  EXPECT_EQ(f.config.tp, 2);  // the list and the 3-value flag stopped where they should
  EXPECT_EQ(f.config.pp, 4);
}

TEST(MegatronArguments, DefaultsAreMegatronLmsOwn) {
  const LayoutFile f = parse_layout_text(
      "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --vocab-size 50257 --tensor-model-parallel-size 8\n",
      "f.args");
  EXPECT_EQ(f.config.precision, Precision::FP32);         // no --bf16 / --fp16
  EXPECT_EQ(f.config.attention, AttentionKernel::Flash);  // --attention-backend auto
  ASSERT_TRUE(f.model);
  EXPECT_EQ(f.model->vocab_size, 51200);  // 50257 padded to a multiple of 128 x 8: 50 x 1024
  EXPECT_EQ(f.model->ffn_hidden_size, 1024);  // 4h
  const LayoutFile unit1 = parse_layout_text(
      "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --vocab-size 50257 --make-vocab-size-divisible-by 1 "
      "--tensor-model-parallel-size 8\n",
      "f.args");
  EXPECT_EQ(unit1.model->vocab_size, 50264);  // to a multiple of 8: 6283 x 8
  EXPECT_NE(error_of([] { parse_layout_text("--hidden-size 256\n", "f.args"); }).find("--num-layers beside them"),
            std::string::npos);
}

// Biases follow Megatron-LM's one switch on dense models as on MoE ones: model flags alone have them
// on every linear (--add-bias-linear, its default, on a gated MLP too); --disable-bias-linear removes
// them all, on a GeLU MLP as well. Per layer at h 256: Q/K/V 3h, projection h; a GeLU MLP (FFN 4h)
// 4h + h, a gated one (FFN Megatron-LM's int(8h/3 / 64) x 64 = 640) 2 x 640 + h.
TEST(MegatronArguments, BiasesFollowMegatronsOneSwitchOnDenseModels) {
  const std::string shape = "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --vocab-size 1024\n";
  auto params = [&](const std::string& more) { return parse_layout_text(shape + more, "f.args").model->total_parameters(); };
  EXPECT_EQ(params("") - params("--disable-bias-linear\n"), 2 * (3 * 256 + 256 + 4 * 256 + 256));
  EXPECT_EQ(parse_layout_text(shape + "--swiglu\n", "f.args").model->ffn_hidden_size, 640);
  EXPECT_EQ(params("--swiglu\n") - params("--swiglu --disable-bias-linear\n"), 2 * (3 * 256 + 256 + 2 * 640 + 256));
  EXPECT_EQ(params("--disable-bias-linear --add-qkv-bias\n") - params("--disable-bias-linear\n"), 2 * 3 * 256);
  // A Llama launch line is the Llama preset, biases included (none).
  ModelSpec llama = load_model("llama3-8b");
  const LayoutFile line = parse_layout_text(
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8 "
      "--ffn-hidden-size 14336 --swiglu --disable-bias-linear --normalization RMSNorm --position-embedding-type rope "
      "--rotary-base 500000 --untie-embeddings-and-output-weights --attention-dropout 0 --hidden-dropout 0 "
      "--seq-length 8192 --max-position-embeddings 8192 --vocab-size 128256 --make-vocab-size-divisible-by 1\n",
      "llama.args");
  llama.name = line.model->name;
  EXPECT_EQ(model_to_json(*line.model).dump(), model_to_json(llama).dump());
  EXPECT_EQ(line.model->total_parameters(), 8'030'261'248);  // meta-llama/Meta-Llama-3-8B's safetensors
  // An unbiased GeLU model exports as --disable-bias-linear and reads back as itself.
  ModelSpec gpt = load_model("gpt3-1.3b");
  gpt.qkv_bias = gpt.projection_bias = false;
  gpt.mlp_bias = false;
  const SimResult r = simulated(gpt, layout(1, 1, 8, 1, 64), "dgx-a100-80gb");
  const std::string args = megatron_arguments(r, MemoryReserve{});
  EXPECT_NE(args.find("--disable-bias-linear\n"), std::string::npos);
  EXPECT_EQ(parse_layout_text(args, "back.args").model->total_parameters(), gpt.total_parameters());
  // What one switch cannot say is refused: biased attention beside an unbiased MLP.
  ModelSpec mixed = load_model("llama3-8b");
  mixed.qkv_bias = mixed.projection_bias = true;
  const std::string e = error_of([&] { megatron_arguments(simulated(mixed, layout(8, 1, 1, 1, 8), "dgx-h100"), {}); });
  EXPECT_NE(e.find("biases on the attention's linears but none on the MLP's"), std::string::npos)
      << e;
}

// A file without --vocab-size trains its tokenizer's vocabulary: pretrain_gpt.py's default
// GPT2BPETokenizer reads GPT-2's vocab.json (50,257 words: openai-community/gpt2), padded to 128 x TP;
// NullTokenizer has --vocab-size alone and the other tokenizers count a model file, so the
// vocabulary is left for the command line to give (RunFlags::request refuses without it).
TEST(MegatronArguments, TheVocabularyIsTheTokenizersPaddedOrLeftToBeGiven) {
  const std::string shape = "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --tensor-model-parallel-size 2\n";
  for (const char* tokenizer : {"", "--tokenizer-type GPT2BPETokenizer\n"}) {
    const LayoutFile f = parse_layout_text(shape + tokenizer + "--vocab-file gpt2-vocab.json\n", "f.args");
    ASSERT_TRUE(f.model);
    EXPECT_EQ(f.model->vocab_size, 50432) << tokenizer;  // 50257 to a multiple of 256: 197 x 256
    EXPECT_TRUE(f.vocabulary_unknown.empty());
    ASSERT_TRUE(f.vocabulary);
    EXPECT_EQ(f.vocabulary->words, 50257);  // kept unpadded, for the run's TP to pad
    EXPECT_TRUE(f.notes.empty()) << "the run says where the words came from, at its TP (RunFlags::request)";
    EXPECT_EQ(std::count(f.ignored.begin(), f.ignored.end(), "--tokenizer-type"), 0) << "read, not left aside";
  }
  // A stated --vocab-size is the vocabulary, as before, with no note.
  const LayoutFile stated = parse_layout_text(shape + "--tokenizer-type NullTokenizer --vocab-size 32000\n", "f.args");
  EXPECT_EQ(stated.model->vocab_size, 32000);
  EXPECT_TRUE(stated.notes.empty());
  const std::pair<const char*, const char*> unknown[] = {
      {"--tokenizer-type Llama2Tokenizer --tokenizer-model t.model\n", "Llama2Tokenizer's --tokenizer-model"},
      {"--tokenizer-type NullTokenizer\n", "NullTokenizer takes its vocabulary from --vocab-size"}};
  // TikTokenizer without --vocab-size builds 2^17 words (Megatron-LM's tiktoken_tokenizer.py).
  EXPECT_EQ(parse_layout_text(shape + "--tokenizer-type TikTokenizer --tokenizer-model m.json\n", "f.args").model->vocab_size,
            131072);
  for (const auto& [text, expected] : unknown) {
    const LayoutFile f = parse_layout_text(shape + text, "f.args");
    EXPECT_NE(f.vocabulary_unknown.find(expected), std::string::npos) << text << ": " << f.vocabulary_unknown;
  }
  // Megatron-LM's parser takes its choices and no other.
  const auto flags = megatron_flags();
  for (const std::string& choice : flags.at("--tokenizer-type").choices)
    EXPECT_NO_THROW(parse_layout_text("--tokenizer-type " + choice + "\n", "f.args")) << choice;
  const std::string bad = error_of([] { parse_layout_text("--tokenizer-type gpt2\n", "f.args"); });
  EXPECT_NE(bad.find("--tokenizer-type gpt2 is not one of Megatron-LM's: BertWordPieceLowerCase"), std::string::npos)
      << bad;
}

// Each entry of one of our tables is a Megatron-LM flag of the same shape: a switch is a
// store_true flag, a number takes one value of that type.
template <class Args>
void expect_table_in_megatron(std::span<const MegatronOption<Args>> table,
                              const std::map<std::string, FlagDefinition>& defined) {
  for (const auto& o : table) {
    const auto it = defined.find(o.flag);
    ASSERT_NE(it, defined.end()) << o.flag << " is not a Megatron-LM flag";
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(std::declval<Args&>().*member)>;
          constexpr bool is_switch = std::is_same_v<T, bool>;
          constexpr bool is_list =
              std::is_same_v<T, std::vector<int>> || std::is_same_v<T, std::vector<std::string>>;
          EXPECT_EQ(it->second.kind, is_switch ? "flag" : is_list ? "list" : "value") << o.flag;
          if constexpr (std::is_same_v<T, std::vector<int>>) {
            EXPECT_EQ(it->second.type, "int") << o.flag;
          }
          if constexpr (std::is_same_v<T, std::optional<int>>) {
            EXPECT_EQ(it->second.type, "int") << o.flag;
          }
          if constexpr (std::is_same_v<T, std::optional<double>>) {
            EXPECT_EQ(it->second.type, "float") << o.flag;
          }
        },
        o.field);
  }
}

TEST(MegatronOptions, OurTablesAgreeWithMegatronLmsParser) {
  const auto defined = megatron_flags();
  expect_table_in_megatron(megatron_model_options(), defined);
  expect_table_in_megatron(megatron_layout_options(), defined);
  for (const auto& f : megatron_ignored_flags()) {
    const auto it = defined.find(f.flag);
    ASSERT_NE(it, defined.end()) << f.flag << " is not a Megatron-LM flag";
    const std::string kind =
        f.values == 0 ? "flag" : f.values == 1 ? "value" : f.values < 0 ? "list" : std::to_string(f.values);
    EXPECT_EQ(it->second.kind, kind) << f.flag;
    // A flag left aside at some values only: each is one Megatron-LM takes.
    for (const std::string& value : ignored_flag_values(f))
      EXPECT_NE(std::find(it->second.choices.begin(), it->second.choices.end(), value), it->second.choices.end())
          << f.flag << " " << value;
  }
}

}  // namespace
}  // namespace cc
