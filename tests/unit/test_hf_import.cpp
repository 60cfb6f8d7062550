// HuggingFace config.json import (interop/hf_config.h) on the real configs in
// tests/reference/hf-configs/. Every expected parameter count is the figure the model's authors
// published (model card, paper or release post), listed with its source in that folder's
// README.md; none is the program's own output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "interop/hf_config.h"
#include "interop/model_input.h"
#include "sim/error.h"
#include "sim/json_fields.h"
#include "sim/presets.h"

namespace cc {
namespace {

std::string fixture(const std::string& name) { return std::string(CLUSTERCAST_REFERENCE_DIR) + "/hf-configs/" + name; }

// Without a length, the file's own position limit: what a test passes when the length does not
// matter to what it checks (RoPE models' parameters) or is the published count's (GPT-2's table).
HfImport import(const std::string& name, std::optional<int> seq = std::nullopt) {
  const nlohmann::json doc = read_json_file(fixture(name), "test fixture");
  if (!seq)
    if (const auto limit = hf_position_limit(doc, name)) seq = static_cast<int>(*limit);
  return model_from_hf_config(doc, name, seq);
}

std::string refusal_without_length(const std::string& name) {
  try {
    model_from_hf_config(read_json_file(fixture(name), "test fixture"), name, std::nullopt);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string refusal(const std::string& name, std::optional<int> seq = std::nullopt) {
  try {
    import(name, seq);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(accepted)";
}

// Papers and model cards publish either the total or the count without the embedding and
// output matrices (the Pythia and Gemma papers give the latter, to the parameter).
enum class Basis { Total, NonEmbedding };

struct Published {
  const char* file;
  std::optional<int> seq_length;  // the models whose file cannot give one (no key, or a sliding window)
  double parameters;
  Basis basis;
};

std::int64_t counted(const ModelSpec& m, Basis b) {
  const std::int64_t total = m.total_parameters();
  return b == Basis::Total ? total : total - m.embedding_parameters() - m.output_layer_parameters();
}

class PublishedSize : public ::testing::TestWithParam<Published> {};

TEST_P(PublishedSize, IsWithinOnePercent) {
  const Published& p = GetParam();
  const ModelSpec m = import(p.file, p.seq_length).model;
  EXPECT_NEAR(static_cast<double>(counted(m, p.basis)) / p.parameters, 1.0, 0.01)
      << p.file << ": " << counted(m, p.basis) << " parameters, published " << p.parameters;
}

// Sources: tests/reference/hf-configs/README.md, one line per file.
INSTANTIATE_TEST_SUITE_P(
    RealConfigs, PublishedSize,
    ::testing::Values(Published{"gpt2.json", {}, 124e6, Basis::Total},
                      Published{"gpt2-medium.json", {}, 355e6, Basis::Total},
                      Published{"gpt2-large.json", {}, 774e6, Basis::Total},
                      Published{"gpt-j-6b.json", {}, 6'053'381'344, Basis::Total},
                      Published{"gpt-neox-20b.json", {}, 20'554'567'680, Basis::Total},
                      Published{"pythia-1b.json", {}, 805'736'448, Basis::NonEmbedding},
                      Published{"pythia-6.9b.json", {}, 6'444'163'072, Basis::NonEmbedding},
                      Published{"pythia-12b.json", {}, 11'327'027'200, Basis::NonEmbedding},
                      Published{"bloom-560m.json", 2048, 559'214'592, Basis::Total},
                      Published{"bloom-7b1.json", 2048, 7'069'016'064, Basis::Total},
                      Published{"bloom.json", 2048, 176'247'271'424, Basis::Total},
                      Published{"llama-2-7b-hf.json", {}, 6.7e9, Basis::Total},
                      Published{"llama-2-13b-hf.json", {}, 13.0e9, Basis::Total},
                      Published{"llama-2-70b-hf.json", {}, 69e9, Basis::Total},
                      Published{"meta-llama-3-8b.json", {}, 8e9, Basis::Total},
                      Published{"meta-llama-3-70b.json", {}, 70e9, Basis::Total},
                      Published{"llama-3.1-8b.json", {}, 8e9, Basis::Total},
                      Published{"llama-3.1-70b.json", {}, 70e9, Basis::Total},
                      Published{"llama-3.1-405b.json", {}, 405e9, Basis::Total},
                      Published{"mistral-7b-v0.1.json", 4096, 7.3e9, Basis::Total},
                      Published{"qwen2.5-0.5b.json", {}, 0.49e9, Basis::Total},
                      Published{"qwen2.5-0.5b.json", {}, 0.36e9, Basis::NonEmbedding},
                      Published{"qwen2.5-7b.json", {}, 7.61e9, Basis::Total},
                      Published{"qwen2.5-7b.json", {}, 6.53e9, Basis::NonEmbedding},
                      Published{"qwen2.5-72b.json", {}, 72.7e9, Basis::Total},
                      Published{"qwen2.5-72b.json", {}, 70.0e9, Basis::NonEmbedding},
                      Published{"gemma-2b.json", {}, 524'550'144.0 + 1'981'884'416.0, Basis::Total},
                      Published{"gemma-2b.json", {}, 1'981'884'416, Basis::NonEmbedding},
                      Published{"gemma-7b.json", {}, 786'825'216.0 + 7'751'248'896.0, Basis::Total},
                      Published{"gemma-7b.json", {}, 7'751'248'896, Basis::NonEmbedding},
                      Published{"gemma-2-9b.json", 4096, 917'504'000.0 + 8'324'201'984.0, Basis::Total},
                      Published{"gemma-2-9b.json", 4096, 8'324'201'984, Basis::NonEmbedding},
                      Published{"phi-2.json", {}, 2.78e9, Basis::Total},
                      Published{"phi-3-mini-4k-instruct.json", 2047, 3.8e9, Basis::Total},
                      Published{"falcon-7b.json", 2048, 6.92e9, Basis::Total}));

TEST(HfImport, ReadsMixturesAndRefusesExpertsInDenseFamilies) {
  // The mixture-of-experts classes are read with their experts (counts checked in
  // test_moe_parameters.cpp); a dense reading would give Mixtral 8x7B 7.2B parameters, not 46.7B.
  const ModelSpec mixtral = import("mixtral-8x7b-v0.1.json").model;
  EXPECT_EQ(mixtral.moe.num_experts, 8);
  EXPECT_EQ(mixtral.moe.router_topk, 2);
  EXPECT_EQ(mixtral.moe.ffn_hidden_size, 14336);
  const ModelSpec qwen = import("qwen1.5-moe-a2.7b.json").model;
  EXPECT_EQ(qwen.moe.num_experts, 60);
  EXPECT_EQ(qwen.moe.shared_expert_ffn_hidden_size, 5632);
  EXPECT_TRUE(qwen.moe.shared_expert_gate);
  const ModelSpec lite = import("deepseek-v2-lite.json").model;
  EXPECT_EQ(lite.moe.num_experts, 64);
  EXPECT_TRUE(lite.mla.enabled);
  EXPECT_EQ(lite.mla.q_lora_rank, 0);  // q_lora_rank null: queries projected directly
  EXPECT_FALSE(lite.is_moe_layer(0));  // first_k_dense_replace 1
  // Expert keys in a dense family are still refused: a Llama file with experts is not a Llama.
  const auto llama_moe = nlohmann::json::parse(R"({"model_type": "llama", "moe_intermediate_size": 1408})");
  try {
    model_from_hf_config(llama_moe, "m", 128);
    ADD_FAILURE() << "a llama file with experts was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("moe_intermediate_size is 1408 in a llama file"), std::string::npos)
        << e.what();
  }
  // ...while the same keys switched off (0 experts) leave a dense model alone.
  const auto dense = nlohmann::json::parse(R"({"model_type": "llama", "num_experts": 0, "moe_intermediate_size": 0,
    "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
    "vocab_size": 256, "max_position_embeddings": 128})");
  EXPECT_NO_THROW(model_from_hf_config(dense, "m", 128));
  // Llama 4 is refused by name; gpt-oss's 128-token sliding window by the dense rule.
  const auto llama4 = nlohmann::json::parse(R"({"model_type": "llama4"})");
  EXPECT_THROW(model_from_hf_config(llama4, "m", 128), SpecError);
  const std::string oss = refusal("gpt-oss-20b.json");
  EXPECT_NE(oss.find("sliding_window 128 is shorter than the sequence length 131072"), std::string::npos) << oss;
}

TEST(HfImport, RefusesArchitecturesItDoesNotModelByName) {
  const std::string e = refusal("opt-125m.json");
  EXPECT_NE(e.find("model_type 'opt' is not modelled; modelled types: gpt2, gptj"), std::string::npos) << e;
  const auto mismatch = nlohmann::json::parse(R"({"model_type": "llama", "architectures": ["GPT2LMHeadModel"]})");
  EXPECT_THROW(model_from_hf_config(mismatch, "m", 128), SpecError);
  const auto nothing = nlohmann::json::parse(R"({"num_hidden_layers": 2, "hidden_size": 64})");
  try {
    model_from_hf_config(nothing, "m.json", 128);
    ADD_FAILURE() << "a config without model_type or architectures was accepted";
  } catch (const SpecError& e2) {
    EXPECT_NE(std::string(e2.what()).find("m.json: no model_type or architectures"), std::string::npos) << e2.what();
  }
  // A Llama-family file whose MLP is not SiLU-gated is not silently priced as one.
  const auto gelu_llama = nlohmann::json::parse(R"({"model_type": "llama", "hidden_act": "gelu", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 256,
    "max_position_embeddings": 128})");
  EXPECT_THROW(model_from_hf_config(gelu_llama, "m", 128), SpecError);
}

TEST(HfImport, PositionsComeFromTheArchitectureNotFromRopeTheta) {
  // Llama 2's file has no rope_theta; it is a RoPE model all the same.
  EXPECT_EQ(import("llama-2-7b-hf.json").model.position_embedding, PositionEmbedding::Rope);
  EXPECT_EQ(import("gpt2.json").model.position_embedding, PositionEmbedding::Learned);
  EXPECT_EQ(import("gpt-j-6b.json").model.position_embedding, PositionEmbedding::Rope);
  EXPECT_EQ(import("gpt-neox-20b.json").model.position_embedding, PositionEmbedding::Rope);
  EXPECT_EQ(import("bloom.json", 2048).model.position_embedding, PositionEmbedding::Alibi);
  EXPECT_EQ(import("falcon-7b.json", 2048).model.position_embedding, PositionEmbedding::Rope);  // alibi: false
}

TEST(HfImport, QueryGroupsMultiQueryAndHeadDim) {
  EXPECT_EQ(import("llama-2-70b-hf.json").model.num_query_groups, 8);
  EXPECT_EQ(import("llama-2-7b-hf.json").model.num_query_groups, 32);
  // Falcon 7B is multi-query (multi_query: true); Falcon 40B's new decoder has 8 KV groups and
  // ignores its multi_query flag, as transformers' FalconAttention does.
  EXPECT_EQ(import("falcon-7b.json", 2048).model.num_query_groups, 1);
  EXPECT_EQ(import("falcon-40b.json", 2048).model.num_query_groups, 8);
  // The first Falcon 40B release ("RefinedWeb", RWForCausalLM) names no new_decoder_architecture:
  // its type implies it (transformers' Falcon conversion reads it the same way).
  const auto rw40 = nlohmann::json::parse(R"({"model_type": "RefinedWeb", "architectures": ["RWForCausalLM"],
    "hidden_size": 8192, "n_head": 128, "n_head_kv": 8, "n_layer": 60, "parallel_attn": true, "vocab_size": 65024})");
  EXPECT_EQ(model_from_hf_config(rw40, "rw", 2048).model.num_query_groups, 8);
  // Gemma 7B: 16 heads of 256 on a hidden size of 3072, so Q is 4096 wide.
  const ModelSpec g = import("gemma-7b.json").model;
  EXPECT_EQ(g.head_dim(), 256);
  EXPECT_EQ(g.query_width(), 4096);
  EXPECT_EQ(g.kv_channels(), 4096);
  // Where head_dim is hidden / heads it is not stored as a departure.
  EXPECT_EQ(import("gemma-2b.json").model.explicit_head_dim, 0);
}

TEST(HfImport, GatedMlpsAndTiedEmbeddings) {
  const ModelSpec llama = import("meta-llama-3-8b.json").model;
  EXPECT_EQ(llama.activation, Activation::SwiGLU);
  EXPECT_FALSE(llama.tied_embeddings);
  EXPECT_EQ(llama.normalization, Normalization::RMSNorm);
  // Gemma's MLP is a gated GeLU and its class ties the embeddings: the file has no
  // tie_word_embeddings key, the class default (True) decides.
  const ModelSpec gemma = import("gemma-7b.json").model;
  EXPECT_EQ(gemma.activation, Activation::GeGLU);
  EXPECT_TRUE(gemma.gated_mlp());
  EXPECT_TRUE(gemma.tied_embeddings);
  EXPECT_TRUE(import("qwen2.5-0.5b.json").model.tied_embeddings);
  EXPECT_FALSE(import("qwen2.5-7b.json").model.tied_embeddings);
  EXPECT_EQ(import("gpt2.json").model.activation, Activation::GeLU);
  EXPECT_TRUE(import("gpt2.json").model.tied_embeddings);
  EXPECT_FALSE(import("gpt-j-6b.json").model.tied_embeddings);
  // Nemotron's MLP is up_proj, relu2, down_proj: two matrices, no biases (mlp_bias false by
  // default), LayerNorm1P's weight and bias per norm, untied by the class default.
  const ModelSpec nemotron = import("nemotron-4-4b.json").model;
  EXPECT_EQ(nemotron.activation, Activation::SquaredReLU);
  EXPECT_FALSE(nemotron.gated_mlp());
  EXPECT_FALSE(nemotron.dense_mlp_bias());
  EXPECT_FALSE(nemotron.qkv_bias);
  EXPECT_EQ(nemotron.normalization, Normalization::LayerNorm);
  EXPECT_FALSE(nemotron.tied_embeddings);
  EXPECT_EQ(nemotron.dense_mlp_parameters(), 2LL * 3072 * 9216);
  // NemotronForCausalLM's modules: embedding and lm_head (256,000 x 3,072 each); per layer q_proj
  // and o_proj (3,072 x 3,072), k_proj and v_proj (3,072 x 8 heads of 128), up_proj and
  // down_proj (3,072 x 9,216), two LayerNorm1Ps (weight and bias); the final norm.
  const std::int64_t h = 3072, kv = 8 * 128, layer = 2 * h * h + 2 * h * kv + 2 * h * 9216 + 2 * 2 * h;
  EXPECT_EQ(nemotron.total_parameters(), 2 * 256000 * h + 32 * layer + 2 * h);
  // mlp_bias true would run squared ReLU beside biases, which Megatron-LM refuses: refused by name.
  auto biased = nlohmann::json::parse(R"({"model_type": "nemotron", "num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 128, "mlp_bias": true})");
  try {
    model_from_hf_config(biased, "m", 128);
    ADD_FAILURE() << "a squared-ReLU MLP with biases was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("squared-ReLU MLP with biases"), std::string::npos) << e.what();
  }
}

// Which projections carry biases, per class (transformers' modeling_<type>.py).
TEST(HfImport, AttentionBiasesAreTheClasssOwn) {
  auto biases = [](const ModelSpec& m) { return std::make_pair(m.qkv_bias, m.projection_bias); };
  using B = std::pair<bool, bool>;
  EXPECT_EQ(biases(import("meta-llama-3-8b.json").model), B(false, false));  // attention_bias false
  EXPECT_EQ(biases(import("mistral-7b-v0.1.json", 4096).model), B(false, false));
  EXPECT_EQ(biases(import("qwen2.5-7b.json").model), B(true, false));  // q, k, v biased; o_proj not
  EXPECT_EQ(biases(import("gpt-j-6b.json").model), B(false, false));
  EXPECT_EQ(biases(import("gpt-neox-20b.json").model), B(true, true));
  EXPECT_EQ(biases(import("phi-2.json").model), B(true, true));
  EXPECT_EQ(biases(import("phi-3-mini-4k-instruct.json", 2047).model), B(false, false));
  EXPECT_EQ(biases(import("gpt2.json").model), B(true, true));
  EXPECT_EQ(biases(import("falcon-7b.json", 2048).model), B(false, false));  // bias false

  nlohmann::json doc = read_json_file(fixture("meta-llama-3-8b.json"), "test fixture");
  doc["attention_bias"] = true;
  const ModelSpec biased = model_from_hf_config(doc, "llama", 4096).model;
  EXPECT_EQ(biases(biased), B(true, true));
  // q, k, v and o biases: 4096 + 2 x 1024 + 4096 per layer, 32 layers.
  EXPECT_EQ(biased.total_parameters() - import("meta-llama-3-8b.json", 4096).model.total_parameters(),
            32 * (4096 + 2 * 1024 + 4096));
  // mlp_bias: LlamaMLP's gate and up projections (14,336 each) and its down projection (4,096).
  doc["mlp_bias"] = true;
  EXPECT_EQ(model_from_hf_config(doc, "llama", 4096).model.total_parameters() - biased.total_parameters(),
            32 * (2 * 14336 + 4096));
  // Falcon's one bias switch covers its GeLU MLP too: bias false, no MLP biases.
  ModelSpec falcon = import("falcon-7b.json", 2048).model;
  const std::int64_t unbiased = falcon.total_parameters();
  falcon.mlp_bias.reset();  // a GeLU MLP's convention: biases
  EXPECT_EQ(falcon.total_parameters() - unbiased, 32 * (4 * 4544 + 4544));
}

TEST(HfImport, SequenceLengthIsTheUsers) {
  // Without --seq-length the import is refused, naming the file's limit: Llama 3.1's 131,072 is
  // the longest context it supports, and taking it would simulate another job.
  const std::string l = refusal_without_length("llama-3.1-8b.json");
  EXPECT_NE(l.find("no --seq-length given; a HuggingFace config's max_position_embeddings 131072 is the longest "
                   "sequence the model supports"),
            std::string::npos)
      << l;
  // Falcon's file has no length at all.
  const std::string e = refusal_without_length("falcon-7b.json");
  EXPECT_NE(e.find("the file gives no sequence length (max_position_embeddings is absent); pass --seq-length"),
            std::string::npos)
      << e;
  EXPECT_EQ(import("falcon-7b.json", 2048).model.seq_length, 2048);
  const HfImport given = import("llama-3.1-8b.json", 8192);
  EXPECT_EQ(given.model.seq_length, 8192);
  EXPECT_TRUE(given.notes.empty());
  // A learned position table bounds the length.
  const std::string g = refusal("gpt2.json", 2048);
  EXPECT_NE(g.find("--seq-length 2048 is longer than n_positions 1024"), std::string::npos) << g;
}

TEST(HfImport, SlidingWindowLongerThanTheSequenceIsRefused) {
  // Mistral 7B v0.1 attends 4,096 tokens back; at its 32,768 limit that is not full attention.
  const std::string e = refusal("mistral-7b-v0.1.json");
  EXPECT_NE(e.find("sliding_window 4096 is shorter than the sequence length 32768"), std::string::npos) << e;
  EXPECT_NO_THROW(import("mistral-7b-v0.1.json", 4096));
  EXPECT_THROW(import("gemma-2-9b.json"), SpecError);  // window 4096, limit 8192
  // Qwen2.5 carries a sliding_window but switches it off (use_sliding_window: false).
  EXPECT_NO_THROW(import("qwen2.5-7b.json"));
}

TEST(HfImport, ParallelAttentionIsNamedInANote) {
  const HfImport f = import("falcon-7b.json", 2048);
  ASSERT_EQ(f.notes.size(), 1u);
  EXPECT_NE(f.notes[0].find("falcon runs attention and the MLP in parallel"), std::string::npos) << f.notes[0];
  EXPECT_TRUE(import("llama-2-7b-hf.json").notes.empty());  // attention, then the MLP
}

TEST(HfImport, LoadModelReadsAConfigFileWithTheUsersSequenceLength) {
  std::vector<std::string> notes;
  const ModelSpec m = read_model_input(fixture("falcon-7b.json"), 2048, &notes);
  EXPECT_EQ(m.num_query_groups, 1);
  EXPECT_EQ(m.seq_length, 2048);
  ASSERT_EQ(notes.size(), 2u);  // parallel attention, then the keys not read
  EXPECT_NE(notes[1].find("keys not read"), std::string::npos) << notes[1];
}

TEST(HfImport, KeysNotReadAreNamedAMisspeltOneAmongThem) {
  nlohmann::json doc = read_json_file(fixture("llama-2-7b-hf.json"), "test fixture");
  doc.erase("num_key_value_heads");
  doc["num_key_valu_heads"] = 8;  // a typo of num_key_value_heads: the model is read as multi-head, but named
  const HfImport l = model_from_hf_config(doc, "llama", 4096);
  EXPECT_EQ(l.model.num_query_groups, l.model.num_attention_heads);
  const auto& unread = l.unread_keys;
  auto named = [&](const char* key) { return std::find(unread.begin(), unread.end(), key) != unread.end(); };
  EXPECT_TRUE(named("num_key_valu_heads"));
  EXPECT_TRUE(named("bos_token_id"));  // in the file, and nothing clustercast prices
  EXPECT_FALSE(named("hidden_size"));  // read
  EXPECT_FALSE(named("num_hidden_layers"));
}

TEST(HfImport, ModelJsonKeepsAnExplicitHeadDim) {
  // A Gemma model exported to our JSON (layout files carry it) reads back the same.
  const ModelSpec g = import("gemma-7b.json").model;
  const ModelSpec back = model_from_json(model_to_json(g), "round trip");
  EXPECT_EQ(back.explicit_head_dim, 256);
  EXPECT_EQ(back.activation, Activation::GeGLU);
  EXPECT_EQ(back.total_parameters(), g.total_parameters());
  EXPECT_FALSE(model_to_json(import("gemma-2b.json").model).contains("head_dim"));
}

}  // namespace
}  // namespace cc
