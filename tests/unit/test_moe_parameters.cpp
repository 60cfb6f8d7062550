// Mixture-of-experts and multi-latent-attention parameter counts (sim/model_spec.h) on the real
// configs in tests/reference/hf-configs/. Each reference count is computed here, from the file's
// numbers, by the architecture's module list as transformers' modeling_<type>.py builds it (one
// line per module, written out below); none calls the program's counting functions. The
// published figures (model cards, papers) are checked beside them, each with its source.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "interop/hf_config.h"
#include "sim/error.h"
#include "sim/json_fields.h"
#include "sim/layout_validation.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"
#include "sim/presets.h"
#include "refusal.h"

namespace cc {
namespace {

using json = nlohmann::json;
using i64 = std::int64_t;

std::string fixture(const std::string& name) { return std::string(CLUSTERCAST_REFERENCE_DIR) + "/hf-configs/" + name; }
json config(const std::string& name) { return read_json_file(fixture(name), "test fixture"); }
// Without a length, the file's position limit (parameters do not depend on it with RoPE).
ModelSpec imported(const std::string& name, std::optional<int> seq = std::nullopt) {
  const json doc = config(name);
  if (!seq)
    if (const auto limit = hf_position_limit(doc, name)) seq = static_cast<int>(*limit);
  return model_from_hf_config(doc, name, seq).model;
}

struct Count {
  i64 total = 0, active = 0;
};

i64 get(const json& c, const char* key) { return c.at(key).get<i64>(); }

// A SwiGLU MLP without biases: gate_proj, up_proj (h x f each), down_proj (f x h).
i64 swiglu(i64 h, i64 f) { return h * f + h * f + f * h; }

// Mixtral, OLMoE, Qwen3-MoE, gpt-oss: grouped-query attention, every layer sparse, no shared
// expert. `qk_norms`, `biases` and `extra` are what each class adds; spelled out by the callers.
struct GqaMoe {
  i64 h, layers, heads, kv_heads, head_dim, experts, topk, expert_ffn, vocab;
  i64 attention_extra = 0;  // q/k norms, biases, sinks per layer
  i64 expert_extra = 0;     // biases of one expert
  i64 router_extra = 0;     // the router's bias
};

Count count(const GqaMoe& m) {
  const i64 q_proj = m.h * m.heads * m.head_dim, k_proj = m.h * m.kv_heads * m.head_dim;
  const i64 v_proj = k_proj, o_proj = m.heads * m.head_dim * m.h;
  const i64 attention = q_proj + k_proj + v_proj + o_proj + m.attention_extra;
  const i64 expert = swiglu(m.h, m.expert_ffn) + m.expert_extra;
  const i64 router = m.h * m.experts + m.router_extra;
  const i64 norms = 2 * m.h;  // input_layernorm, post_attention_layernorm (RMSNorm weights)
  const i64 tables = 2 * m.vocab * m.h + m.h;  // embed_tokens, lm_head (untied), final norm
  return {m.layers * (attention + router + m.experts * expert + norms) + tables,
          m.layers * (attention + router + m.topk * expert + norms) + tables};
}

TEST(MoeParameters, MixtralIsExact) {
  // Mixtral 8x7B: the figures, 46,702,792,704 total and 12,879,925,248 active.
  const json c = config("mixtral-8x7b-v0.1.json");
  const Count ref = count({get(c, "hidden_size"), get(c, "num_hidden_layers"), get(c, "num_attention_heads"),
                           get(c, "num_key_value_heads"), get(c, "hidden_size") / get(c, "num_attention_heads"),
                           get(c, "num_local_experts"), get(c, "num_experts_per_tok"), get(c, "intermediate_size"),
                           get(c, "vocab_size")});
  EXPECT_EQ(ref.total, 46'702'792'704);
  EXPECT_EQ(ref.active, 12'879'925'248);
  const ModelSpec m = imported("mixtral-8x7b-v0.1.json");
  EXPECT_EQ(m.total_parameters(), 46'702'792'704);
  EXPECT_EQ(m.active_parameters(), 12'879'925'248);
}

void expect_within_a_hundredth_percent(const ModelSpec& m, const Count& ref) {
  EXPECT_NEAR(static_cast<double>(m.total_parameters()) / static_cast<double>(ref.total), 1.0, 1e-4)
      << m.total_parameters() << " counted, " << ref.total << " by the module list";
  EXPECT_NEAR(static_cast<double>(m.active_parameters()) / static_cast<double>(ref.active), 1.0, 1e-4)
      << m.active_parameters() << " counted, " << ref.active << " by the module list";
}

Count qwen3_moe(const json& c) {
  // Qwen3MoeAttention: q_norm and k_norm are RMSNorms of head_dim; attention_bias false.
  const i64 hd = get(c, "head_dim");
  return count({get(c, "hidden_size"), get(c, "num_hidden_layers"), get(c, "num_attention_heads"),
                get(c, "num_key_value_heads"), hd, get(c, "num_experts"), get(c, "num_experts_per_tok"),
                get(c, "moe_intermediate_size"), get(c, "vocab_size"), hd + hd});
}

TEST(MoeParameters, Qwen3MoeModels) {
  const Count a3b = qwen3_moe(config("qwen3-30b-a3b.json"));
  expect_within_a_hundredth_percent(imported("qwen3-30b-a3b.json"), a3b);
  // Model card (Qwen/Qwen3-30B-A3B): 30.5B total, 3.3B activated.
  EXPECT_NEAR(a3b.total / 30.5e9, 1.0, 0.005);
  EXPECT_NEAR(a3b.active / 3.3e9, 1.0, 0.02);
  const Count a22b = qwen3_moe(config("qwen3-235b-a22b.json"));
  expect_within_a_hundredth_percent(imported("qwen3-235b-a22b.json"), a22b);
  // Model card (Qwen/Qwen3-235B-A22B): 235B total, 22B activated.
  EXPECT_NEAR(a22b.total / 235e9, 1.0, 0.005);
  EXPECT_NEAR(a22b.active / 22e9, 1.0, 0.01);
}

TEST(MoeParameters, Olmoe) {
  // OlmoeAttention: q_norm over the whole query width (hidden_size), k_norm over
  // (hidden / heads) x kv heads; no biases.
  const json c = config("olmoe-1b-7b-0924.json");
  const i64 h = get(c, "hidden_size"), heads = get(c, "num_attention_heads"), kv = get(c, "num_key_value_heads");
  const Count ref = count({h, get(c, "num_hidden_layers"), heads, kv, h / heads, get(c, "num_experts"),
                           get(c, "num_experts_per_tok"), get(c, "intermediate_size"), get(c, "vocab_size"),
                           h + (h / heads) * kv});
  expect_within_a_hundredth_percent(imported("olmoe-1b-7b-0924.json"), ref);
  // Muennighoff et al. 2024 (arXiv 2409.02060): 6.9B total, 1.3B active.
  EXPECT_NEAR(ref.total / 6.9e9, 1.0, 0.005);
  EXPECT_NEAR(ref.active / 1.3e9, 1.0, 0.02);
}

Count gpt_oss(const json& c) {
  // GptOssAttention: biases on q, k, v, o and one sink per head; GptOssExperts: gate_up_proj_bias
  // (2 x intermediate) and down_proj_bias (hidden) per expert; GptOssTopKRouter: weight and bias.
  const i64 h = get(c, "hidden_size"), heads = get(c, "num_attention_heads"), kv = get(c, "num_key_value_heads");
  const i64 hd = get(c, "head_dim"), f = get(c, "intermediate_size"), e = get(c, "num_local_experts");
  return count({h, get(c, "num_hidden_layers"), heads, kv, hd, e, get(c, "num_experts_per_tok"), f,
                get(c, "vocab_size"), heads * hd + 2 * kv * hd + h + heads, 2 * f + h, e});
}

TEST(MoeParameters, GptOss) {
  // The 128-token sliding window of every other layer is not modelled: the import needs a
  // sequence inside it (the dense importer's rule), which leaves the count unchanged.
  const Count small = gpt_oss(config("gpt-oss-20b.json"));
  const Count large = gpt_oss(config("gpt-oss-120b.json"));
  expect_within_a_hundredth_percent(imported("gpt-oss-20b.json", 128), small);
  expect_within_a_hundredth_percent(imported("gpt-oss-120b.json", 128), large);
  // OpenAI's gpt-oss model card (Aug 2025): 20.91B total / 3.61B active and 116.83B / 5.13B. Its
  // active count leaves out the embedding table (a lookup), which ours counts.
  const double table = 201088.0 * 2880;
  EXPECT_NEAR(small.total / 20.91e9, 1.0, 0.001);
  EXPECT_NEAR((small.active - table) / 3.61e9, 1.0, 0.002);
  EXPECT_NEAR(large.total / 116.83e9, 1.0, 0.001);
  EXPECT_NEAR((large.active - table) / 5.13e9, 1.0, 0.002);
}

// DeepSeek-V2/V3: multi-latent attention, first_k_dense_replace dense layers, shared experts.
struct DeepSeek {
  i64 main_total, main_active, mtp_total, mtp_active;
};

DeepSeek deepseek(const json& c) {
  const i64 h = get(c, "hidden_size"), heads = get(c, "num_attention_heads"), layers = get(c, "num_hidden_layers");
  const i64 rq = c.at("q_lora_rank").is_null() ? 0 : get(c, "q_lora_rank"), rkv = get(c, "kv_lora_rank");
  const i64 nope = get(c, "qk_nope_head_dim"), rope = get(c, "qk_rope_head_dim"), v = get(c, "v_head_dim");
  // q_a_proj, q_a_layernorm, q_b_proj (or q_proj); kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj; o_proj.
  const i64 q = rq > 0 ? h * rq + rq + rq * heads * (nope + rope) : h * heads * (nope + rope);
  const i64 attention = q + h * (rkv + rope) + rkv + rkv * heads * (nope + v) + heads * v * h;
  const i64 fe = get(c, "moe_intermediate_size"), e = get(c, "n_routed_experts"), k = get(c, "num_experts_per_tok");
  const i64 shared = swiglu(h, get(c, "n_shared_experts") * fe);
  // The gate's weight (experts x h) and, for noaux_tc, e_score_correction_bias (experts).
  const i64 router = e * h + (c.value("topk_method", "") == "noaux_tc" ? e : 0);
  const i64 dense_layer = attention + swiglu(h, get(c, "intermediate_size")) + 2 * h;
  const i64 moe_layer = attention + router + e * swiglu(h, fe) + shared + 2 * h;
  const i64 moe_active = attention + router + k * swiglu(h, fe) + shared + 2 * h;
  const i64 dense = get(c, "first_k_dense_replace");  // moe_layer_freq is 1 in both files
  const i64 tables = 2 * get(c, "vocab_size") * h + h;
  // One MTP module: enorm, hnorm, eh_proj (2h -> h), an MoE layer, shared_head.norm; it shares
  // embed_tokens and the output head with the main model (its checkpoint stores copies of both).
  const i64 mtp = c.value("num_nextn_predict_layers", 0);
  return {dense * dense_layer + (layers - dense) * moe_layer + tables,
          dense * dense_layer + (layers - dense) * moe_active + tables, mtp * (3 * h + 2 * h * h + moe_layer),
          mtp * (3 * h + 2 * h * h + moe_active)};
}

TEST(MoeParameters, DeepSeekV3CountsItsMtpLayerOnceWithSharedTables) {
  const json c = config("deepseek-v3.json");
  const DeepSeek ref = deepseek(c);
  const ModelSpec m = imported("deepseek-v3.json");
  EXPECT_EQ(m.mtp_num_layers, 1);
  expect_within_a_hundredth_percent(m, {ref.main_total + ref.mtp_total, ref.main_active + ref.mtp_active});
  // DeepSeek-AI 2024 (arXiv 2412.19437): 671B total, 37B activated per token, without the MTP
  // module. The Hub's 685B adds the MTP module (14B there: its layer, projection and norms, and
  // its own copies of the embedding and output tables, which training shares).
  EXPECT_NEAR(ref.main_total / 671e9, 1.0, 0.001);
  EXPECT_NEAR(ref.main_active / 37e9, 1.0, 0.02);
  const double copies = 2.0 * 129280 * 7168;
  EXPECT_NEAR((ref.main_total + ref.mtp_total + copies) / 685e9, 1.0, 0.001);
  // Without the MTP layer the model is the paper's 671B.
  ModelSpec main = m;
  main.mtp_num_layers = 0;
  EXPECT_NEAR(static_cast<double>(main.total_parameters()) / static_cast<double>(ref.main_total), 1.0, 1e-4);
}

TEST(MoeParameters, DeepSeekV2LiteAndQwen15Moe) {
  // V2-Lite: no query latent (q_lora_rank null), softmax greedy routing, two shared experts.
  const DeepSeek lite = deepseek(config("deepseek-v2-lite.json"));
  expect_within_a_hundredth_percent(imported("deepseek-v2-lite.json"), {lite.main_total, lite.main_active});
  EXPECT_NEAR(lite.main_total / 15.7e9, 1.0, 0.005);  // DeepSeek-AI 2024 (arXiv 2405.04434): 15.7B
  // Qwen1.5-MoE-A2.7B: Qwen2MoeAttention has q/k/v biases, none on o_proj; one shared expert of
  // shared_expert_intermediate_size behind a sigmoid gate (a linear with one output).
  const json c = config("qwen1.5-moe-a2.7b.json");
  const i64 h = get(c, "hidden_size"), layers = get(c, "num_hidden_layers");
  const i64 attention = 4 * h * h + 3 * h;
  const i64 expert = swiglu(h, get(c, "moe_intermediate_size"));
  const i64 shared = swiglu(h, get(c, "shared_expert_intermediate_size")) + h;
  const i64 router = h * get(c, "num_experts");
  const i64 tables = 2 * get(c, "vocab_size") * h + h;
  const Count ref{layers * (attention + router + get(c, "num_experts") * expert + shared + 2 * h) + tables,
                  layers * (attention + router + get(c, "num_experts_per_tok") * expert + shared + 2 * h) + tables};
  expect_within_a_hundredth_percent(imported("qwen1.5-moe-a2.7b.json"), ref);
  // Qwen blog, "Qwen1.5-MoE" (28 Mar 2024): 14.3B total, 2.7B activated.
  EXPECT_NEAR(ref.total / 14.3e9, 1.0, 0.005);
  EXPECT_NEAR(ref.active / 2.7e9, 1.0, 0.01);
}

// One small MoE + MLA layer by hand: h 64, 4 heads, q latent 32, kv latent 16, no-RoPE 8, RoPE
// 4, value 8; 4 experts of 16, top-2, a shared expert of 16, the expert bias; RMSNorm.
ModelSpec small_moe_mla() {
  ModelSpec m;
  m.name = "small-moe-mla";
  m.num_layers = 1;
  m.hidden_size = 64;
  m.num_attention_heads = 4;
  m.num_query_groups = 4;
  m.ffn_hidden_size = 128;
  m.vocab_size = 256;
  m.seq_length = 128;
  m.activation = Activation::SwiGLU;
  m.normalization = Normalization::RMSNorm;
  m.position_embedding = PositionEmbedding::Rope;
  m.tied_embeddings = false;
  m.qkv_bias = m.projection_bias = false;
  m.mla = {true, 32, 16, 8, 4, 8};
  m.moe.num_experts = 4;
  m.moe.router_topk = 2;
  m.moe.ffn_hidden_size = 16;
  m.moe.shared_expert_ffn_hidden_size = 16;
  m.moe.router_expert_bias = true;
  return m;
}

TEST(MoeParameters, OneSmallMoeMlaLayerByHand) {
  const ModelSpec m = small_moe_mla();
  m.validate("hand");
  // Attention: q_down 64x32 = 2048, q norm 32, q_up 32x4x(8+4) = 1536, kv_down 64x(16+4) = 1280,
  // kv norm 16, kv_up 16x4x(8+8) = 1024, out 4x8x64 = 2048: 7,984.
  EXPECT_EQ(m.attention_parameters(), 7984);
  EXPECT_EQ(m.expert_parameters(), 3072);  // 3 x 64 x 16
  EXPECT_EQ(m.router_parameters(), 260);   // 64 x 4 + 4 expert biases
  EXPECT_EQ(m.shared_expert_parameters(), 3072);
  // Layer: 7,984 + 4 x 3,072 + 3,072 + 260 + 2 norms of 64 = 23,732; active: 2 experts, 17,588.
  EXPECT_EQ(m.layer_parameters(0), 23732);
  EXPECT_EQ(m.layer_parameters(0, true), 17588);
  // Model: + embedding and output 2 x 256 x 64 = 32,768 + final norm 64.
  EXPECT_EQ(m.total_parameters(), 23732 + 32768 + 64);
  EXPECT_EQ(m.active_parameters(), 17588 + 32768 + 64);
}

TEST(MoeParameters, DenseModelsAreAllActive) {
  ModelSpec m = small_moe_mla();
  m.moe = {};
  m.mla = {};
  EXPECT_EQ(m.active_parameters(), m.total_parameters());
  EXPECT_EQ(load_model("llama3-8b").active_parameters(), load_model("llama3-8b").total_parameters());
}

TEST(MoeParameters, LayerFrequencyAndPattern) {
  ModelSpec m = small_moe_mla();
  m.num_layers = 4;
  m.moe.layer_freq = 2;  // Megatron: layers 0 and 2
  EXPECT_TRUE(m.is_moe_layer(0));
  EXPECT_FALSE(m.is_moe_layer(1));
  EXPECT_EQ(m.moe_layer_count(), 2);
  m.moe.layer_pattern = {0, 0, 0, 1};  // a pattern wins
  EXPECT_EQ(m.moe_layer_count(), 1);
  EXPECT_TRUE(m.is_moe_layer(3));
  // DeepSeek-V3: three dense layers, then 58 MoE layers.
  const ModelSpec v3 = imported("deepseek-v3.json");
  EXPECT_EQ(v3.moe_layer_count(), 58);
  EXPECT_FALSE(v3.is_moe_layer(2));
  EXPECT_TRUE(v3.is_moe_layer(3));
}

TEST(MoeParameters, ModelJsonRoundTrip) {
  for (const char* name : {"deepseek-v3.json", "qwen1.5-moe-a2.7b.json", "olmoe-1b-7b-0924.json"}) {
    const ModelSpec m = imported(name);
    const ModelSpec back = model_from_json(model_to_json(m), "round trip");
    EXPECT_EQ(back.total_parameters(), m.total_parameters()) << name;
    EXPECT_EQ(back.active_parameters(), m.active_parameters()) << name;
    EXPECT_EQ(model_to_json(back), model_to_json(m)) << name;
  }
  const ModelSpec oss = imported("gpt-oss-120b.json", 128);
  EXPECT_EQ(model_from_json(model_to_json(oss), "round trip").total_parameters(), oss.total_parameters());
}

// The small model with one change, validated: the refusal's field, and the message holding `text`.
void expect_refused(void (*change)(ModelSpec&), const char* field, const char* text) {
  ModelSpec m = small_moe_mla();
  change(m);
  const Refusal r = refusal_of([&] { m.validate("model"); });
  EXPECT_EQ(r.field, field) << r.message;
  EXPECT_NE(r.message.find(text), std::string::npos) << r.message;
}

TEST(MoeParameters, ValidateNamesTheFirstBadField) {
  expect_refused([](ModelSpec& m) { m.moe.router_topk = 5; }, "--moe-router-topk",
                 "moe_router_topk is 5; it must be between 1 and num_experts 4");
  expect_refused(
      [](ModelSpec& m) {
        m.moe.router_num_groups = 3;  // does not divide 4 experts
        m.moe.router_group_topk = 1;
      },
      "--moe-router-num-groups", "moe_router_num_groups 3 does not divide num_experts 4");
  expect_refused(
      [](ModelSpec& m) {
        m.moe.router_num_groups = 4;  // 1 group of 1 expert cannot hold top-2
        m.moe.router_group_topk = 1;
      },
      "--moe-router-topk", "it must be at most 1");
  expect_refused([](ModelSpec& m) { m.moe.layer_pattern = {1, 0}; }, "--moe-layer-freq",
                 "has 2 entries; it needs one per layer (1)");
  expect_refused([](ModelSpec& m) { m.moe.topk_scaling_factor = 0; }, "--moe-router-topk-scaling-factor",
                 "moe_router_topk_scaling_factor is 0; it must be a positive number");
  expect_refused([](ModelSpec& m) { m.moe.num_experts = 0; }, "--num-experts",
                 "num_experts is 0 (a dense model) but moe_router_topk 2");
  expect_refused([](ModelSpec& m) { m.mla.kv_lora_rank = 0; }, "--kv-lora-rank",
                 "kv_lora_rank is 0; with multi_latent_attention it must be an integer from 1 to 65536");
  expect_refused([](ModelSpec& m) { m.qkv_bias = true; }, "--add-qkv-bias",
                 "qkv_bias with multi_latent_attention is not modelled");
  expect_refused([](ModelSpec& m) { m.mla.enabled = false; }, "--multi-latent-attention",
                 "without multi_latent_attention");
  expect_refused([](ModelSpec& m) { m.mtp_num_layers = -1; }, "--mtp-num-layers",
                 "mtp_num_layers is -1; it must be an integer from 0 to 100");
}

TEST(MoeParameters, ModelJsonRefusesBadExpertFields) {
  json j = model_to_json(small_moe_mla());
  j["moe_router_topk"] = 9;
  Refusal r = refusal_of([&] { model_from_json(j, "m.json"); });
  EXPECT_EQ(r.field, "--moe-router-topk");
  EXPECT_NE(r.message.find("m.json: moe_router_topk is 9; it must be between 1 and num_experts 4"), std::string::npos)
      << r.message;
  j = model_to_json(small_moe_mla());
  j["moe_layer_freq"] = json::array({2});
  r = refusal_of([&] { model_from_json(j, "m.json"); });
  EXPECT_EQ(r.field, "--moe-layer-freq");
  j["moe_layer_freq"] = json::array({"1"});
  EXPECT_EQ(refusal_of([&] { model_from_json(j, "m.json"); }).field, "moe_layer_freq");
  j = model_to_json(small_moe_mla());
  j["moe_router_score_function"] = "relu";
  EXPECT_EQ(refusal_of([&] { model_from_json(j, "m.json"); }).field, "moe_router_score_function");
}

TEST(MoeParameters, MixturesArePricedAndWhatIsNotIsRefusedByName) {
  // MoE layers are priced; multi-latent attention under context parallelism is not, so no command
  // prices it another way.
  ParallelConfig c;
  c.tp = 1;
  c.pp = 1;
  c.dp = 1;
  c.micro_batch = 1;
  c.global_batch = 1;
  EXPECT_EQ(refusal_of([&] { validate_layout(c, imported("mixtral-8x7b-v0.1.json"), 1); }).message, "(no error)");
  ModelSpec mla_only = small_moe_mla();
  mla_only.moe = {};
  EXPECT_EQ(refusal_of([&] { validate_layout(c, mla_only, 1); }).message, "(no error)");
  c.cp = 2;
  c.attention = AttentionKernel::Flash;
  EXPECT_EQ(refusal_of([&] { validate_layout(c, mla_only, 2); }).field, "--multi-latent-attention");
}

}  // namespace
}  // namespace cc
