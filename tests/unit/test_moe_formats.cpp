// Megatron-LM's and NeMo's spellings of a mixture-of-experts, MLA and MTP model: --moe-layer-freq
// evaluated as Megatron-LM evaluates it, Megatron-LM's own launch files read to the model their
// authors describe (the parameter counts of the presets and of the HuggingFace configs), NeMo keys
// with Megatron-Core's names, and what is not modelled refused by name.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <set>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "interop/hf_config.h"
#include "interop/layout_files.h"
#include "interop/moe_layer_freq.h"
#include "sim/presets.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

using layout_test::error_of;
using layout_test::reference;

MoeSpec freq(const std::string& text) {
  MoeSpec e;
  moe_layer_freq_from(text, e, "--moe-layer-freq", "");
  return e;
}

TEST(MoeLayerFreq, IntegersAndPythonListsAsMegatronEvaluatesThem) {
  EXPECT_EQ(freq("2").layer_freq, 2);
  EXPECT_TRUE(freq("2").layer_pattern.empty());
  // arguments.py's docstring: "([1]*3+[0]*1)*3" evaluates to [1,1,1,0,1,1,1,0,1,1,1,0].
  EXPECT_EQ(freq("([1]*3+[0]*1)*3").layer_pattern, (std::vector<int>{1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0}));
  // "([0]+[1]*23)": 1 dense layer followed by 23 expert layers.
  const auto one_dense = freq("([0]+[1]*23)").layer_pattern;
  ASSERT_EQ(one_dense.size(), 24u);
  EXPECT_EQ(one_dense.front(), 0);
  EXPECT_EQ(std::count(one_dense.begin(), one_dense.end(), 1), 23);
  EXPECT_EQ(freq("[1,1,0]").layer_pattern, (std::vector<int>{1, 1, 0}));
  EXPECT_EQ(freq("[1,0,]").layer_pattern, (std::vector<int>{1, 0}));  // Python's trailing comma
  EXPECT_EQ(freq("3*[0]+[1]").layer_pattern, (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(freq("[1]*2**2").layer_pattern.size(), 4u);    // ** binds before *
  EXPECT_EQ(freq("[1]*(2+1)").layer_pattern.size(), 3u);
  EXPECT_EQ(freq("[00]").layer_pattern, (std::vector<int>{0}));  // "00" is a Python literal, "01" is not
  EXPECT_EQ(freq("[4][0]").layer_freq, 4);                      // an int: Megatron-Core's integer form
  EXPECT_EQ(freq("[2]").layer_pattern, (std::vector<int>{2}));  // kept for validate() to refuse
}

TEST(MoeLayerFreq, WhatMegatronRefusesIsRefusedNamingTheFlag) {
  for (const char* bad : {"[1, 0]", "\"[1]\"", "[1]+1", "[01]", "[[1]]", "([1],)", "[1]*100000", "[1", "[1]]",
                          "[1]*[1]", "1[0]", "(1,0)", "x", "[]+", "[1][5]"}) {
    const std::string e = error_of([&] { freq(bad); });
    EXPECT_NE(e.find("--moe-layer-freq"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find(bad), std::string::npos) << bad << ": " << e;
  }
}

TEST(MoeLayerFreq, WrittenAsRunsThatReadBackToTheSameLayers) {
  MoeSpec v3;
  v3.layer_pattern.assign(61, 1);
  v3.layer_pattern[0] = v3.layer_pattern[1] = v3.layer_pattern[2] = 0;
  EXPECT_EQ(moe_layer_freq_text(v3), "([0]*3+[1]*58)");
  EXPECT_EQ(freq(moe_layer_freq_text(v3)).layer_pattern, v3.layer_pattern);
  MoeSpec every_other;
  every_other.layer_freq = 2;
  EXPECT_EQ(moe_layer_freq_text(every_other), "2");
}

// The words of a bash array NAME=( ... ) or string NAME=" ... " in a launch script, as bash
// expands them (these arrays hold no quoting or expansions clustercast needs).
std::vector<std::string> script_words(const std::string& file, const std::string& name) {
  std::ifstream in(reference("megatron/" + file));
  std::vector<std::string> words;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!inside) {
      inside = line.rfind(name + "=(", 0) == 0 || line.rfind(name + "=\"", 0) == 0;
      continue;
    }
    if (line == ")" || line == "\"") break;
    std::istringstream w(line);
    for (std::string word; w >> word;)
      if (word != "\\") words.push_back(word);
  }
  EXPECT_FALSE(words.empty()) << name << " in " << file;
  return words;
}

std::string joined(const std::vector<std::string>& words, const std::vector<std::string>& leave_out = {}) {
  std::string out;
  for (const auto& w : words)
    if (std::find(leave_out.begin(), leave_out.end(), w) == leave_out.end()) out += w + "\n";
  return out;
}

// The model a script describes, with the vocabulary its tokenizer gives (Megatron-LM reads it
// from the tokenizer; the files name none).
ModelSpec model_of(const std::string& text, int vocab) {
  const LayoutFile f = parse_layout_text(text, "script");
  EXPECT_TRUE(f.model);
  ModelSpec m = f.model.value_or(ModelSpec{});
  m.vocab_size = vocab;
  return m;
}

TEST(MegatronMoeFiles, MixtralsLaunchScriptIsMixtral8x7B) {
  std::vector<std::string> words = script_words("train_mixtral_8x7b_distributed.sh", "MODEL_ARGS");
  for (const char* array : {"MOE_ARGS", "MODEL_PARALLEL_ARGS"})
    for (const auto& w : script_words("train_mixtral_8x7b_distributed.sh", array)) words.push_back(w);
  // As written, every flag is read; the fusion switch is kept for resolve_run, which weighs it
  // against the attention kernel (tests/cli/test_layout_interop.cpp).
  const std::string text = joined(words);
  EXPECT_TRUE(parse_layout_text(text, "mixtral").switches.no_masked_softmax_fusion);
  const ModelSpec m = model_of(text, 32000);
  // Hand-known figures (docs/moe.md; tests/unit/test_moe_parameters.cpp counts them from the HF config).
  EXPECT_EQ(m.total_parameters(), 46'702'792'704);
  EXPECT_EQ(m.active_parameters(), 12'879'925'248);
  ModelSpec preset = load_model("mixtral-8x7b");
  preset.name = m.name;
  preset.seq_length = 4096;  // the script trains at 4096; the preset states the paper's context
  EXPECT_EQ(model_to_json(m).dump(), model_to_json(preset).dump());
  const ParallelConfig c = parse_layout_text(text, "mixtral").config;
  EXPECT_EQ(c.pp, 4);
  EXPECT_EQ(c.ep, 8);
  EXPECT_EQ(c.moe.dispatcher, TokenDispatcher::AllToAll);
  EXPECT_TRUE(c.moe.grouped_gemm);
  EXPECT_DOUBLE_EQ(c.moe.aux_loss_coeff, 1e-2);
}

TEST(MegatronMoeFiles, Qwen3Moe30BA3BModelFlagsAreThePreset) {
  const auto words = script_words("modelopt_qwen3_30b_a3b.sh", "MODEL_ARGS");
  // --no-rope-fusion is read (priced); the SwiGLU fusion switch is not modelled.
  const std::vector<std::string> fusions = {"--no-bias-swiglu-fusion"};
  const std::string refusal = error_of([&] { parse_layout_text(joined(words), "qwen3"); });
  for (const auto& f : fusions) EXPECT_NE(refusal.find(f), std::string::npos) << refusal;
  EXPECT_EQ(refusal.find("--moe-"), std::string::npos) << refusal;  // --moe-router-dtype is left aside
  ModelSpec m = model_of(joined(words, fusions), 151936);
  ModelSpec preset = load_model("qwen3-30b-a3b");
  preset.name = m.name;
  // The script keeps Megatron-LM's default dropout (0.1); the preset trains without.
  m.dropout = preset.dropout;
  EXPECT_EQ(model_to_json(m).dump(), model_to_json(preset).dump());
  EXPECT_EQ(m.total_parameters(), preset.total_parameters());
}

TEST(MegatronMoeFiles, DeepSeekR1ModelFlagsAreDeepSeekV3WithoutItsMtpLayer) {
  const auto words = script_words("modelopt_deepseek_r1.sh", "MODEL_ARGS");
  const std::vector<std::string> refused = {"--moe-layer-recompute"};  // --no-rope-fusion is read
  const std::string refusal = error_of([&] { parse_layout_text(joined(words), "r1"); });
  for (const auto& f : refused) EXPECT_NE(refusal.find(f), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("--moe-layer-recompute (recomputes the MoE layers"), std::string::npos) << refusal;
  ModelSpec m = model_of(joined(words, refused), 129280);
  ModelSpec preset = load_model("deepseek-v3");
  preset.name = m.name;
  preset.mtp_num_layers = 0;  // the file has no --mtp-num-layers
  m.dropout = preset.dropout;
  EXPECT_EQ(model_to_json(m).dump(), model_to_json(preset).dump());
  // 671.0B without the MTP layer (docs/moe.md; the paper's 671B).
  EXPECT_NEAR(static_cast<double>(m.total_parameters()), 671.0e9, 0.05e9);
}

TEST(MegatronMoeFlags, MegatronLmsDefaultsFillWhatAFileLeavesOut) {
  const std::string base = "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --swiglu --disable-bias-linear ";
  const ModelSpec moe = *parse_layout_text(base + "--num-experts 4", "f").model;
  EXPECT_EQ(moe.moe.num_experts, 4);
  EXPECT_EQ(moe.moe.router_topk, 2);                        // TransformerConfig.moe_router_topk
  EXPECT_EQ(moe.moe.ffn_hidden_size, moe.ffn_hidden_size);  // --moe-ffn-hidden-size None: --ffn-hidden-size
  EXPECT_EQ(moe.moe.layer_freq, 1);
  EXPECT_EQ(moe.moe.score_function, RouterScore::Softmax);
  EXPECT_FALSE(moe.qkv_bias);
  EXPECT_FALSE(moe.projection_bias);
  EXPECT_FALSE(moe.moe.expert_linear_biases);
  // --add-bias-linear (Megatron-LM's default) biases every linear, the experts' too.
  const ModelSpec biased = *parse_layout_text("--num-layers 4 --hidden-size 256 --num-attention-heads 8 --num-experts 4",
                                              "f").model;
  EXPECT_TRUE(biased.qkv_bias && biased.projection_bias && biased.moe.expert_linear_biases);
  EXPECT_TRUE(parse_layout_text(base + "--num-experts 4 --add-qkv-bias", "f").model->qkv_bias);
  // arguments.py's MLA defaults: no query latent, key/value latent 32, heads 128 + 64, values 128.
  const ModelSpec mla = *parse_layout_text(base + "--multi-latent-attention --qk-layernorm", "f").model;
  EXPECT_TRUE(mla.mla.enabled);
  EXPECT_EQ(mla.mla.q_lora_rank, 0);
  EXPECT_EQ(mla.mla.kv_lora_rank, 32);
  EXPECT_EQ(mla.mla.qk_head_dim, 128);
  EXPECT_EQ(mla.mla.qk_pos_emb_head_dim, 64);
  EXPECT_EQ(mla.mla.v_head_dim, 128);
  EXPECT_EQ(parse_layout_text(base + "--qk-layernorm --mtp-num-layers 1", "f").model->qk_norm, QkNorm::PerHead);
  EXPECT_EQ(parse_layout_text(base + "--mtp-num-layers 2", "f").model->mtp_num_layers, 2);
  EXPECT_EQ(parse_layout_text(base + "--num-experts 0", "f").model->moe.num_experts, 0);  // 0 is None: dense
}

TEST(MegatronMoeFlags, BadValuesAndFlagsOfAbsentFeaturesAreRefusedByName) {
  const std::string base = "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --swiglu --disable-bias-linear ";
  auto refusal = [&](const std::string& extra) { return error_of([&] { parse_layout_text(base + extra, "f"); }); };
  struct Case {
    const char* flags;
    const char* message;
  };
  for (const Case& c : {Case{"--num-experts 8 --moe-router-topk 9", "moe_router_topk is 9; it must be between 1 and num_experts 8"},
                        Case{"--moe-router-topk 2", "--moe-router-topk describes experts, but model"},
                        Case{"--num-experts 8 --moe-router-score-function sqrtsoftplus",
                             "--moe-router-score-function 'sqrtsoftplus' is not modelled; valid: softmax, sigmoid"},
                        Case{"--num-experts 8 --moe-layer-freq [1]*3", "the moe_layer_freq pattern has 3 entries"},
                        Case{"--num-experts 8 --moe-layer-freq [0]*4", "no MoE layer"},
                        Case{"--num-experts 8 --moe-router-num-groups 3", "moe_router_num_groups 3 does not divide"},
                        Case{"--num-experts -1", "--num-experts is -1; it must be a whole number from 0"},
                        Case{"--kv-lora-rank 64", "--kv-lora-rank is a multi-latent attention width"},
                        Case{"--num-experts 8 --moe-router-topk-scaling-factor 0", "--moe-router-topk-scaling-factor is 0"},
                        Case{"--no-position-embedding", "--no-position-embedding without --position-embedding-type rope"}})
    EXPECT_NE(refusal(c.flags).find(c.message), std::string::npos) << c.flags << ": " << refusal(c.flags);
  // What changes what runs is refused; routing numerics are left aside and named.
  EXPECT_NE(refusal("--num-experts 8 --moe-use-upcycling").find("--moe-use-upcycling (converts a dense checkpoint"),
            std::string::npos);
  const LayoutFile aside = parse_layout_text(base + "--num-experts 8 --moe-router-dtype fp32 --moe-permute-fusion", "f");
  EXPECT_EQ(aside.ignored, (std::vector<std::string>{"--moe-router-dtype", "--moe-permute-fusion"}));
}

// The MoE models an export must write, each with a layout of its own. DeepSeek-V3 is not priced yet
// (MLA and MTP are refused by name), so its result carries the layout and model unsimulated.
std::vector<SimResult> moe_exports() {
  std::vector<SimResult> out;
  ParallelConfig mixtral = layout_test::layout(2, 4, 8, 1, 256);
  mixtral.ep = 8;
  mixtral.sequence_parallel = mixtral.distributed_optimizer = true;
  mixtral.precision = Precision::BF16;
  mixtral.attention = AttentionKernel::Flash;
  mixtral.moe.dispatcher = TokenDispatcher::AllToAll;
  mixtral.moe.grouped_gemm = true;
  out.push_back(layout_test::simulated(load_model("mixtral-8x7b"), mixtral, "dgx-h100"));
  ParallelConfig qwen = layout_test::layout(1, 2, 16, 1, 512);
  qwen.ep = 16;
  qwen.etp = 1;
  qwen.precision = Precision::BF16;
  qwen.attention = AttentionKernel::Flash;
  out.push_back(layout_test::simulated(load_model("qwen3-30b-a3b"), qwen, "dgx-h100"));
  // Qwen1.5-MoE: Q/K/V biases without an output bias, a gated shared expert (HF import).
  std::ifstream hf(reference("hf-configs/qwen1.5-moe-a2.7b.json"));
  ModelSpec qwen2_moe = model_from_hf_config(nlohmann::json::parse(hf), "qwen1.5", 4096).model;
  ParallelConfig small = layout_test::layout(1, 1, 8, 1, 64);
  small.ep = 4;
  small.attention = AttentionKernel::Flash;
  out.push_back(layout_test::simulated(qwen2_moe, small, "dgx-h100"));
  SimResult v3;
  v3.model = load_model("deepseek-v3");
  v3.cluster = load_cluster("dgx-h100");
  v3.config = layout_test::layout(1, 16, 128, 1, 15360);
  v3.config.ep = 64;
  v3.config.precision = Precision::BF16;
  v3.config.attention = AttentionKernel::Flash;
  out.push_back(v3);
  return out;
}

std::set<std::string> lines_of_file(const std::string& name, bool first_field = false) {
  std::ifstream in(reference(name));
  std::set<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.insert(first_field ? line.substr(0, line.find('\t')) : line);
  return out;
}

TEST(MoeExports, MegatronArgumentsSayTheExpertsAndReadBackToTheSameModel) {
  const std::set<std::string> defined = lines_of_file("megatron/arguments_flags.tsv", true);
  for (const SimResult& r : moe_exports()) {
    const std::string args = megatron_arguments(r, {});
    std::istringstream words(args);
    for (std::string w; words >> w;)
      if (w.rfind("--", 0) == 0) {
        EXPECT_TRUE(defined.count(w)) << w << " is not a Megatron-LM argument";
      }
    const LayoutFile back = parse_layout_text(args, "export of " + r.model.name);
    ASSERT_TRUE(back.model) << r.model.name;
    ModelSpec m = r.model;
    m.name = back.model->name;  // the name is not a Megatron flag
    EXPECT_EQ(model_to_json(*back.model).dump(), model_to_json(m).dump()) << r.model.name;
    EXPECT_EQ(back.model->total_parameters(), r.model.total_parameters()) << r.model.name;
    EXPECT_EQ(back.config.ep, r.config.ep) << r.model.name;
    EXPECT_EQ(back.config.moe, r.config.moe) << r.model.name;
  }
  const std::string v3 = megatron_arguments(moe_exports()[3], {});
  for (const char* line : {"--num-experts 256", "--moe-router-topk 8", "--moe-ffn-hidden-size 2048",
                           "--moe-shared-expert-intermediate-size 2048", "--moe-layer-freq ([0]*3+[1]*58)",
                           "--moe-router-score-function sigmoid", "--moe-router-num-groups 8",
                           "--moe-router-group-topk 4", "--moe-router-topk-scaling-factor 2.5",
                           "--moe-router-enable-expert-bias", "--multi-latent-attention", "--q-lora-rank 1536",
                           "--kv-lora-rank 512", "--qk-head-dim 128", "--qk-pos-emb-head-dim 64", "--v-head-dim 128",
                           "--qk-layernorm", "--mtp-num-layers 1", "--disable-bias-linear"})
    EXPECT_NE(("\n" + v3).find("\n" + std::string(line) + "\n"), std::string::npos) << line;
  const std::string qwen2_moe = megatron_arguments(moe_exports()[2], {});
  for (const char* line : {"--add-qkv-bias", "--moe-shared-expert-gate", "--disable-bias-linear"})
    EXPECT_NE(("\n" + qwen2_moe).find("\n" + std::string(line) + "\n"), std::string::npos) << line;
}

TEST(MoeExports, NemoKeysAreMegatronCoresFieldsAndReadBackToTheSameModel) {
  const std::set<std::string> fields = lines_of_file("megatron/transformer_config_fields.txt");
  for (const SimResult& r : moe_exports()) {
    const std::string text = nemo_yaml(r, {});
    const YAML::Node model = YAML::Load(text)["model"];
    for (const auto& kv : model) {
      const std::string key = kv.first.as<std::string>();
      const bool architecture = key.rfind("moe_", 0) == 0 || key == "num_moe_experts" ||
                                key == "multi_latent_attention" || key.find("lora_rank") != std::string::npos ||
                                key.find("head_dim") != std::string::npos || key == "mtp_num_layers" ||
                                key == "qk_layernorm" || key == "add_qkv_bias";
      if (architecture) {
        EXPECT_TRUE(fields.count(key)) << key << " is not a TransformerConfig field";
      }
    }
    const LayoutFile back = parse_layout_text(text, "export of " + r.model.name);
    ASSERT_TRUE(back.model) << r.model.name;
    ModelSpec m = r.model;
    m.name = back.model->name;
    EXPECT_EQ(model_to_json(*back.model).dump(), model_to_json(m).dump()) << r.model.name;
    EXPECT_EQ(back.config.moe, r.config.moe) << r.model.name;
  }
  const YAML::Node v3 = YAML::Load(nemo_yaml(moe_exports()[3], {}))["model"];
  EXPECT_EQ(v3["num_moe_experts"].as<int>(), 256);
  EXPECT_EQ(v3["moe_layer_freq"].size(), 61u);
  EXPECT_EQ(v3["q_lora_rank"].as<int>(), 1536);
}

TEST(MoeExports, WhatNeitherFormatCanSayIsRefusedByName) {
  std::ifstream hf(reference("hf-configs/gpt-oss-20b.json"));
  SimResult oss;
  oss.model = model_from_hf_config(nlohmann::json::parse(hf), "gpt-oss", 128).model;
  oss.cluster = load_cluster("dgx-h100");
  oss.config = layout_test::layout(1, 1, 8, 1, 8);
  EXPECT_NE(error_of([&] { megatron_arguments(oss, {}); }).find("--export-megatron: model"), std::string::npos);
  EXPECT_NE(error_of([&] { nemo_yaml(oss, {}); }).find("a router with a bias (gpt-oss)"), std::string::npos);
  SimResult mixed = moe_exports()[1];
  mixed.model.projection_bias = true;  // an output bias, unbiased experts: not one Megatron switch
  EXPECT_NE(error_of([&] { megatron_arguments(mixed, {}); }).find("but not on the experts' linears"),
            std::string::npos);
}

TEST(NemoMoeKeys, MegatronCoresNamesAndDefaults) {
  const std::string head =
      "trainer: {devices: 8, num_nodes: 1, precision: bf16-mixed}\n"
      "model:\n  num_layers: 4\n  hidden_size: 256\n  num_attention_heads: 8\n  activation: swiglu\n  bias: false\n";
  const ModelSpec moe = *parse_layout_text(head + "  num_moe_experts: 8\n  moe_layer_freq: [0, 1, 1, 1]\n", "y").model;
  EXPECT_EQ(moe.moe.num_experts, 8);
  EXPECT_EQ(moe.moe.router_topk, 2);  // TransformerConfig.moe_router_topk
  EXPECT_EQ(moe.moe.layer_pattern, (std::vector<int>{0, 1, 1, 1}));
  // MLATransformerConfig's defaults where a key is left out; a null q_lora_rank is no query latent.
  const ModelSpec mla = *parse_layout_text(head + "  multi_latent_attention: true\n  qk_layernorm: true\n", "y").model;
  EXPECT_EQ(mla.mla.q_lora_rank, 512);
  EXPECT_EQ(mla.mla.kv_lora_rank, 512);
  EXPECT_EQ(mla.mla.qk_head_dim, 128);
  EXPECT_EQ(mla.mla.qk_pos_emb_head_dim, 64);
  EXPECT_EQ(mla.mla.v_head_dim, 128);
  EXPECT_EQ(parse_layout_text(head + "  multi_latent_attention: true\n  qk_layernorm: true\n  q_lora_rank: null\n", "y")
                .model->mla.q_lora_rank,
            0);
  EXPECT_NE(error_of([&] { parse_layout_text(head + "  num_moe_experts: 8\n  moe_router_topk: 9\n", "y"); })
                .find("moe_router_topk is 9"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_layout_text(head + "  moe_router_topk: 2\n", "y"); }).find("has none; give --num-experts"),
            std::string::npos);
}

TEST(NemoMoeKeys, TheLaunchersMixtralConfigIsMixtral8x7B) {
  std::ifstream in(reference("nemo/mixtral_8x7b.yaml"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const LayoutFile f = parse_layout_text(text, "mixtral_8x7b.yaml");
  ASSERT_TRUE(f.model);
  ModelSpec m = *f.model;
  EXPECT_EQ(m.vocab_size, 32000);  // its tokenizer's, mistralai/Mixtral-8x7B-v0.1 (TP 1: no padding)
  EXPECT_EQ(m.total_parameters(), 46'702'792'704);
  ModelSpec preset = load_model("mixtral-8x7b");
  preset.name = m.name;
  preset.seq_length = 4096;
  EXPECT_EQ(model_to_json(m).dump(), model_to_json(preset).dump());
  // Its layout as written: TP 1, PP 4 with 8 virtual stages, EP 8 on 8 nodes x 8, padded to a
  // capacity factor of 1.
  EXPECT_EQ(f.config.tp, 1);
  EXPECT_EQ(f.config.pp, 4);
  EXPECT_EQ(f.config.virtual_stages, 8);
  EXPECT_EQ(f.config.ep, 8);
  EXPECT_EQ(f.gpus, 64);
  EXPECT_EQ(f.config.moe.dispatcher, TokenDispatcher::AllToAll);
  EXPECT_FALSE(f.config.moe.grouped_gemm);
  EXPECT_TRUE(f.config.moe.pad_to_capacity);
  EXPECT_EQ(f.config.moe.capacity_factor, 1.0);
  EXPECT_DOUBLE_EQ(f.config.moe.aux_loss_coeff, 0.01);
}

}  // namespace
}  // namespace cc
