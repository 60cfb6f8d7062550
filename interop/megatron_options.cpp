#include "interop/megatron_options.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "interop/layout_common.h"
#include "interop/layout_files.h"
#include "interop/megatron_tokenizer.h"
#include "interop/moe_layer_freq.h"
#include "sim/error.h"
#include "sim/layout_rules.h"
#include "sim/numbers.h"

namespace cc {

using interop::prefix;

namespace {

// A count with Megatron-LM's suffixes (num_microbatches_calculator.py _parse_numeric_value): K, M,
// B, T for thousands to trillions.
double scheduled_count(std::string text, const std::string& entry, const std::string& where) {
  double scale = 1;
  if (!text.empty()) {
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    const double by = last == 'K' ? 1e3 : last == 'M' ? 1e6 : last == 'B' ? 1e9 : last == 'T' ? 1e12 : 1;
    if (by > 1) {
      scale = by;
      text.pop_back();
    }
  }
  const std::optional<double> v = parse_real(text);
  if (!v || *v < 0)
    fail_at("--step-batch-size-schedule",
            "{}--step-batch-size-schedule entry '{}' is not THRESHOLD:BATCH (numbers, optionally with K, M, B or T)",
            prefix(where), entry);
  return *v * scale;
}

// The global batch of a step schedule's last step, the full batch Megatron-LM's calculator takes
// as the run's (StepBatchsizeNumMicroBatchesCalculator: schedule[-1] after sorting by threshold).
// Entries are separated by spaces or commas, and by _ where a one-line argument file writes the
// value's spaces (tests/reference/megatron/README.md).
int step_batch_size_schedule_batch(const std::string& schedule, const std::string& where) {
  std::string text = schedule;
  std::replace_if(text.begin(), text.end(), [](char ch) { return ch == ',' || ch == '_'; }, ' ');
  std::istringstream in(text);
  double last_threshold = -1, batch = 0;
  int entries = 0;
  for (std::string entry; in >> entry; ++entries) {
    const std::size_t colon = entry.find(':');
    if (colon == std::string::npos)
      fail_at("--step-batch-size-schedule", "{}--step-batch-size-schedule entry '{}' is not THRESHOLD:BATCH",
              prefix(where), entry);
    const double threshold = scheduled_count(entry.substr(0, colon), entry, where);
    const double size = scheduled_count(entry.substr(colon + 1), entry, where);
    if (size < 1 || size > std::numeric_limits<int>::max() || size != std::floor(size))
      fail_at("--step-batch-size-schedule", "{}--step-batch-size-schedule entry '{}': the batch must be a positive whole "
              "number", prefix(where), entry);
    if (threshold > last_threshold) {
      last_threshold = threshold;
      batch = size;
    }
  }
  if (entries == 0)
    fail_at("--step-batch-size-schedule", "{}--step-batch-size-schedule '{}' has no THRESHOLD:BATCH entry",
            prefix(where), schedule);
  return static_cast<int>(batch);
}


template <class Args>
const MegatronOption<Args>* find_option(std::span<const MegatronOption<Args>> table, const std::string& flag) {
  for (const auto& o : table)
    if (flag == o.flag) return &o;
  return nullptr;
}

bool is_flag_word(const std::string& w) { return w.size() > 2 && w.rfind("--", 0) == 0; }

// One word into the field `member` of `args`; `next` is the index of the word after the flag.
template <class Args>
void set_field(Args& args, const MegatronField<Args>& field, const std::string& flag,
               const std::vector<std::string>& words, std::size_t& next, const std::string& where) {
  auto value = [&]() -> const std::string& {
    if (next >= words.size() || is_flag_word(words[next])) fail_at(flag, "{}{} needs a value", prefix(where), flag);
    return words[next++];
  };
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(args.*member)>;
        if constexpr (std::is_same_v<T, bool>) args.*member = true;
        else if constexpr (std::is_same_v<T, std::optional<int>>) args.*member = interop::to_int(value(), flag, where);
        else if constexpr (std::is_same_v<T, std::optional<double>>)
          args.*member = interop::to_double(value(), flag, where);
        else if constexpr (std::is_same_v<T, std::vector<int>>) {
          (args.*member).assign(1, interop::to_int(value(), flag, where));
          while (next < words.size() && !is_flag_word(words[next]))
            (args.*member).push_back(interop::to_int(words[next++], flag, where));
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          (args.*member).assign(1, value());
          while (next < words.size() && !is_flag_word(words[next])) (args.*member).push_back(words[next++]);
        } else args.*member = value();
      },
      field);
}

Normalization normalization_from(const std::string& name, const std::string& where) {
  if (name == "LayerNorm") return Normalization::LayerNorm;
  if (name == "RMSNorm") return Normalization::RMSNorm;
  fail("{}--normalization '{}' is not modelled; valid: LayerNorm, RMSNorm", prefix(where), name);
}

PositionEmbedding position_embedding_from(const std::string& name, const std::string& where) {
  if (name == "learned_absolute") return PositionEmbedding::Learned;
  if (name == "rope") return PositionEmbedding::Rope;
  fail("{}--position-embedding-type '{}' is not modelled; valid: learned_absolute, rope", prefix(where), name);
}

void check_dropout(const char* flag, const std::optional<double>& p, const std::string& where) {
  if (p && !(*p >= 0 && *p < 1))
    fail_at(flag, "{}{} is {}; it must be a probability in [0, 1)", prefix(where), flag, *p);
}

// The router's score function, as Megatron-LM spells it.
RouterScore router_score_from(const std::string& name) {
  if (name == "softmax") return RouterScore::Softmax;
  if (name == "sigmoid") return RouterScore::Sigmoid;
  fail_at("--moe-router-score-function", "--moe-router-score-function '{}' is not modelled; valid: softmax, sigmoid",
          name);
}

// The experts the flags describe over the base's (ModelSpec::moe). A model the flags make MoE
// takes Megatron-LM's defaults (arguments.py and TransformerConfig): top-2, experts as wide as
// --ffn-hidden-size, every layer MoE, softmax scores, no shared expert, no groups, scale 1.
void apply_experts(const MegatronModelArgs& a, ModelSpec& m) {
  MoeSpec& e = m.moe;
  const bool was_moe = e.enabled();
  if (a.num_experts) {
    if (*a.num_experts < 0)
      fail_at("--num-experts", "--num-experts is {}; it must be >= 0 (0: a dense model)", *a.num_experts);
    if (*a.num_experts == 0) e = MoeSpec{};  // Megatron-LM reads 0 as None: no experts
    else e.num_experts = *a.num_experts;
  }
  const std::pair<const char*, bool> given[] = {
      {"--moe-router-topk", a.moe_router_topk.has_value()},
      {"--moe-ffn-hidden-size", a.moe_ffn_hidden_size.has_value()},
      {"--moe-shared-expert-intermediate-size", a.moe_shared_expert_intermediate_size.has_value()},
      {"--moe-shared-expert-gate", a.moe_shared_expert_gate},
      {"--moe-layer-freq", a.moe_layer_freq.has_value()},
      {"--moe-router-score-function", a.moe_router_score_function.has_value()},
      {"--moe-router-num-groups", a.moe_router_num_groups.has_value()},
      {"--moe-router-group-topk", a.moe_router_group_topk.has_value()},
      {"--moe-router-topk-scaling-factor", a.moe_router_topk_scaling_factor.has_value()},
      {"--moe-router-enable-expert-bias", a.moe_router_enable_expert_bias}};
  if (!e.enabled()) {
    for (const auto& [flag, is_given] : given)
      if (is_given)
        fail_at(flag, "{} describes experts, but model '{}' has none; give --num-experts (or drop {})", flag, m.name,
                flag);
    return;
  }
  if (!was_moe) {
    e.router_topk = 2;
    e.ffn_hidden_size = m.ffn_hidden_size;
  }
  if (a.moe_router_topk) e.router_topk = *a.moe_router_topk;
  if (a.moe_ffn_hidden_size) e.ffn_hidden_size = *a.moe_ffn_hidden_size;
  if (a.moe_shared_expert_intermediate_size) e.shared_expert_ffn_hidden_size = *a.moe_shared_expert_intermediate_size;
  if (a.moe_shared_expert_gate) e.shared_expert_gate = true;
  if (a.moe_layer_freq) moe_layer_freq_from(*a.moe_layer_freq, e, "--moe-layer-freq", "");
  if (a.moe_router_score_function) e.score_function = router_score_from(*a.moe_router_score_function);
  if (a.moe_router_num_groups) e.router_num_groups = *a.moe_router_num_groups;
  if (a.moe_router_group_topk) e.router_group_topk = *a.moe_router_group_topk;
  if (a.moe_router_topk_scaling_factor) {
    const double f = *a.moe_router_topk_scaling_factor;
    if (!(f > 0 && std::isfinite(f)))
      fail_at("--moe-router-topk-scaling-factor",
              "--moe-router-topk-scaling-factor is {}; it must be a positive number (1 when unscaled)", f);
    e.topk_scaling_factor = f;
  }
  if (a.moe_router_enable_expert_bias) e.router_expert_bias = true;
}

// Multi-latent attention and MTP layers over the base's. --multi-latent-attention on a model
// without it takes arguments.py's defaults: no query latent, key/value latent 32, heads of 128 + 64
// RoPE, values of 128.
void apply_latent_attention(const MegatronModelArgs& a, ModelSpec& m) {
  MlaSpec& l = m.mla;
  if (a.multi_latent_attention && !l.enabled) {
    l = MlaSpec{true, 0, 32, 128, 64, 128};
    // Without --qk-layernorm Megatron-Core builds plain up-projections (gpt_layer_specs.py: a
    // column-parallel linear where --qk-layernorm gives a layer-norm linear): no latent norms.
    l.latent_norms = a.qk_layernorm;
  }
  const std::pair<const char*, const std::optional<int>*> dims[] = {
      {"--q-lora-rank", &a.q_lora_rank}, {"--kv-lora-rank", &a.kv_lora_rank}, {"--qk-head-dim", &a.qk_head_dim},
      {"--qk-pos-emb-head-dim", &a.qk_pos_emb_head_dim}, {"--v-head-dim", &a.v_head_dim}};
  if (!l.enabled) {
    for (const auto& [flag, value] : dims)
      if (value->has_value())
        fail_at(flag, "{} is a multi-latent attention width, but model '{}' has no multi-latent attention; give "
                "--multi-latent-attention (or drop {})", flag, m.name, flag);
  } else {
    if (a.q_lora_rank) l.q_lora_rank = *a.q_lora_rank;
    if (a.kv_lora_rank) l.kv_lora_rank = *a.kv_lora_rank;
    if (a.qk_head_dim) l.qk_head_dim = *a.qk_head_dim;
    if (a.qk_pos_emb_head_dim) l.qk_pos_emb_head_dim = *a.qk_pos_emb_head_dim;
    if (a.v_head_dim) l.v_head_dim = *a.v_head_dim;
    m.explicit_head_dim = 0;  // MLA's heads are its own widths; Megatron-Core's MLA does not read --kv-channels
  }
  if (a.qk_layernorm && !l.enabled) m.qk_norm = QkNorm::PerHead;
  if (a.mtp_num_layers) m.mtp_num_layers = *a.mtp_num_layers;
}

// Which linears carry biases. Megatron-LM's --add-bias-linear (its default) puts them on Q/K/V, the
// output projection and every MLP, experts included; --disable-bias-linear removes them all and
// --add-qkv-bias puts back the Q/K/V ones. Model flags alone follow that exactly, as does
// --disable-bias-linear over a preset; a preset's own biases stand otherwise.
void apply_biases(const MegatronModelArgs& a, ModelSpec& m, bool from_flags_alone) {
  if (a.disable_bias_linear || from_flags_alone) {
    const bool on = !a.disable_bias_linear;
    m.qkv_bias = m.projection_bias = on;
    m.mlp_bias = on;
    if (m.moe.enabled()) m.moe.expert_linear_biases = on;
  }
  if (a.add_qkv_bias) m.qkv_bias = true;
  // MLASelfAttention builds its down- and up-projections with bias=False whatever --add-bias-linear
  // and --add-qkv-bias say; only its output projection takes --add-bias-linear's.
  if (m.mla.enabled) m.qkv_bias = false;
}

void refuse(const std::vector<std::string>& refused, const std::string& where) {
  if (!refused.empty())
    fail("{}Megatron-LM flags that would change the model or layout and are not modelled: {}; remove them, or see "
         "the README for what clustercast reads",
         prefix(where), fmt::join(refused, ", "));
}

}  // namespace

MegatronSwitches& MegatronSwitches::operator|=(const MegatronSwitches& other) {
  no_masked_softmax_fusion |= other.no_masked_softmax_fusion;
  deterministic_mode |= other.deterministic_mode;
  no_gradient_accumulation_fusion |= other.no_gradient_accumulation_fusion;
  tp_pp_dp_rank_order |= other.tp_pp_dp_rank_order;
  overlap_p2p_warmup_flush |= other.overlap_p2p_warmup_flush;
  param_gather_with_optimizer_step |= other.param_gather_with_optimizer_step;
  local_layers |= other.local_layers;
  if (!ckpt_format) ckpt_format = other.ckpt_format;  // the command line's over the file's
  if (!cross_entropy_fusion_impl) cross_entropy_fusion_impl = other.cross_entropy_fusion_impl;
  return *this;
}

MegatronSwitches megatron_switches(const MegatronLayoutArgs& args) {
  return {.no_masked_softmax_fusion = args.no_masked_softmax_fusion,
          .deterministic_mode = args.deterministic_mode,
          .no_gradient_accumulation_fusion = args.no_gradient_accumulation_fusion,
          .tp_pp_dp_rank_order = args.use_tp_pp_dp_mapping,
          .overlap_p2p_warmup_flush = args.overlap_p2p_warmup_flush,
          .param_gather_with_optimizer_step = args.overlap_param_gather_with_optimizer_step,
          .local_layers = args.transformer_impl == "local",
          .ckpt_format = args.ckpt_format,
          .cross_entropy_fusion_impl = args.cross_entropy_fusion_impl};
}
MegatronArgs parse_megatron_words(const std::vector<std::string>& words, const std::string& where) {
  MegatronArgs out;
  std::vector<std::string> refused;
  for (std::size_t i = 0; i < words.size();) {
    const std::string& flag = words[i++];
    if (!is_flag_word(flag)) fail("{}'{}' is not a flag (Megatron-LM arguments start with --)", prefix(where), flag);
    if (const auto* o = find_option(megatron_model_options(), flag)) {
      set_field(out.model, o->field, flag, words, i, where);
    } else if (const auto* o = find_option(megatron_layout_options(), flag)) {
      set_field(out.layout, o->field, flag, words, i, where);
    } else if (const auto* ignored = find_ignored_megatron_flag(flag)) {
      if (ignored->only_value) {
        const std::string value = i < words.size() && !is_flag_word(words[i]) ? words[i] : "";
        if (const std::string why = ignored_flag_value_refusal(*ignored, value); !why.empty()) {
          refused.push_back(why);
          while (i < words.size() && !is_flag_word(words[i])) ++i;  // its values
          continue;
        }
      }
      out.ignored.push_back(flag);
      const std::size_t n = ignored->values < 0 ? words.size() : static_cast<std::size_t>(ignored->values);
      for (std::size_t k = 0; k < n && i < words.size() && !is_flag_word(words[i]); ++k) ++i;
    } else {
      refused.push_back(fmt::format("{} ({})", flag, megatron_refusal_reason(flag)));
      while (i < words.size() && !is_flag_word(words[i])) ++i;  // its values
    }
  }
  refuse(refused, where);
  if (out.model.tokenizer_type) megatron_tokenizer_type(*out.model.tokenizer_type, where);
  return out;
}

ModelSpec apply_megatron_model(const MegatronModelArgs& a, ModelSpec m, bool from_flags_alone,
                               const std::string& label) {
  // What the base model was before the overrides, for the fields that follow others.
  const bool base_is_mha = m.num_query_groups == 0 || m.num_query_groups == m.num_attention_heads;
  const bool ffn_is_multiple = m.hidden_size > 0 && m.ffn_hidden_size > 0 && m.ffn_hidden_size % m.hidden_size == 0;
  const int ffn_multiple = ffn_is_multiple ? m.ffn_hidden_size / m.hidden_size : 0;
  if (a.num_layers) m.num_layers = *a.num_layers;
  if (a.hidden_size) m.hidden_size = *a.hidden_size;
  if (a.num_attention_heads) m.num_attention_heads = *a.num_attention_heads;
  // Query groups: given, else Megatron's 1 under --group-query-attention on a model from flags,
  // else they follow new heads on a multi-head model (an MHA preset stays MHA); a
  // grouped-query preset keeps its groups.
  if (a.num_query_groups) m.num_query_groups = *a.num_query_groups;
  else if (a.group_query_attention && from_flags_alone) m.num_query_groups = 1;
  else if (a.num_attention_heads && (from_flags_alone || base_is_mha)) m.num_query_groups = *a.num_attention_heads;
  // FFN: given, else Megatron-LM's default from flags alone — 4h, or with --swiglu 8h/3 rounded down
  // to a multiple of 64 (arguments.py: two projections keep the parameters near a 4h MLP's) —
  // else a preset's whole multiple of h follows a new h.
  // In 64 bits, saturated: 4 x a hidden size of 1e9 wrapped an int; validate() then names the
  // hidden size (it is checked before the FFN).
  auto times_hidden = [&](int k) {
    return static_cast<int>(std::min<long long>(static_cast<long long>(k) * m.hidden_size,
                                                std::numeric_limits<int>::max()));
  };
  if (a.ffn_hidden_size) m.ffn_hidden_size = *a.ffn_hidden_size;
  else if (from_flags_alone && a.swiglu) m.ffn_hidden_size = static_cast<int>(8LL * m.hidden_size / 192 * 64);
  else if (from_flags_alone) m.ffn_hidden_size = times_hidden(4);
  else if (a.hidden_size && ffn_is_multiple) m.ffn_hidden_size = times_hidden(ffn_multiple);
  if (a.seq_length) m.seq_length = *a.seq_length;
  if (a.vocab_size) m.vocab_size = *a.vocab_size;
  if (a.swiglu && a.squared_relu)  // arguments.py asserts not args.swiglu under --squared-relu
    fail_at("--squared-relu", "--squared-relu and --swiglu name two MLP activations; give one");
  if (a.swiglu) m.change_activation(Activation::SwiGLU);
  if (a.squared_relu) m.change_activation(Activation::SquaredReLU);
  if (m.num_query_groups == 0) m.num_query_groups = m.num_attention_heads;
  if (a.kv_channels) {
    if (*a.kv_channels < 1) fail_at("--kv-channels", "--kv-channels is {}; it must be >= 1", *a.kv_channels);
    // Equal to hidden / heads is Megatron's default width: the plain layout.
    const bool default_width = m.num_attention_heads > 0 && m.hidden_size % m.num_attention_heads == 0 &&
                               *a.kv_channels == m.hidden_size / m.num_attention_heads;
    m.explicit_head_dim = default_width ? 0 : *a.kv_channels;
  }
  if (a.normalization) m.normalization = normalization_from(*a.normalization, "");
  if (a.position_embedding_type) m.position_embedding = position_embedding_from(*a.position_embedding_type, "");
  // Megatron-LM reads --rotary-base only for rope positions; beside learned ones it has no effect.
  if (a.rotary_base && m.position_embedding == PositionEmbedding::Rope) m.rotary_base = *a.rotary_base;
  if (a.untie_embeddings) m.tied_embeddings = false;
  check_dropout("--hidden-dropout", a.hidden_dropout, "");
  check_dropout("--attention-dropout", a.attention_dropout, "");
  if (a.hidden_dropout || a.attention_dropout) {
    // ModelSpec has one switch for both (are dropout masks stored?); Megatron's default is 0.1.
    const bool hidden_on = a.hidden_dropout.value_or(0.1) > 0, attention_on = a.attention_dropout.value_or(0.1) > 0;
    if (hidden_on != attention_on)
      fail("--hidden-dropout {} with --attention-dropout {}: dropout in only one of the two is not modelled; give "
           "both zero or both non-zero",
           a.hidden_dropout.value_or(0.1), a.attention_dropout.value_or(0.1));
    m.dropout = hidden_on;
  }
  if (a.max_position_embeddings) {
    if (*a.max_position_embeddings < m.seq_length)
      fail_at("--max-position-embeddings",
              "--max-position-embeddings {} is below the sequence length {}; it must be >= --seq-length",
              *a.max_position_embeddings, m.seq_length);
    // The learned position table is sized by the sequence length in ModelSpec.
    if (m.position_embedding == PositionEmbedding::Learned && *a.max_position_embeddings != m.seq_length)
      fail_at("--max-position-embeddings",
              "--max-position-embeddings {} with learned positions and sequence length {} is not modelled: the "
              "position table is sized by --seq-length (give them equal, or --position-embedding-type rope)",
              *a.max_position_embeddings, m.seq_length);
  }
  if (a.make_vocab_size_divisible_by && *a.make_vocab_size_divisible_by < 1)
    fail_at("--make-vocab-size-divisible-by", "--make-vocab-size-divisible-by is {}; it must be >= 1",
            *a.make_vocab_size_divisible_by);
  if (a.no_position_embedding && m.position_embedding != PositionEmbedding::Rope)
    fail_at("--no-position-embedding",
            "--no-position-embedding without --position-embedding-type rope: Megatron-LM refuses it (deprecated; use "
            "--position-embedding-type)");
  apply_experts(a, m);
  apply_latent_attention(a, m);
  apply_biases(a, m, from_flags_alone);
  m.validate(label);
  return m;
}

std::optional<Precision> megatron_precision(const MegatronLayoutArgs& a, const std::string& where) {
  if (a.bf16 && a.fp16) fail("{}--bf16 and --fp16 are both given; give one", prefix(where));
  if (a.fp8_format) {
    if (*a.fp8_format != "hybrid" && *a.fp8_format != "e4m3")
      fail("{}--fp8-format '{}' is not one of hybrid, e4m3", prefix(where), *a.fp8_format);
    if (a.fp16)
      fail("{}--fp8-format {} with --fp16 is not modelled; FP8 runs keep bf16 beside it (--bf16)", prefix(where),
           *a.fp8_format);
    return Precision::FP8;
  }
  if (a.bf16) return Precision::BF16;
  if (a.fp16) return Precision::FP16;
  return std::nullopt;
}

void refuse_beside_local_layers(const std::string& flash_flag, bool fp8, bool tp_comm_overlap,
                                const std::string& where) {
  if (!flash_flag.empty())
    fail_at("--transformer-impl",
            "{}--transformer-impl local runs Megatron-Core's DotProductAttention, which has no flash or fused kernel "
            "({}); drop that flag, or use --transformer-impl transformer_engine",
            prefix(where), flash_flag);
  if (fp8)
    fail_at("--fp8-format", "{}--fp8-format needs Transformer Engine's layers; --transformer-impl local has none",
            prefix(where));
  if (tp_comm_overlap)
    fail_at("--tp-comm-overlap",
            "{}--tp-comm-overlap pipelines Transformer Engine's userbuffers with its GEMMs; the local layers' linears "
            "do not, so drop it with --transformer-impl local",
            prefix(where));
}

// --transformer-impl: Transformer Engine's layers (Megatron-LM's default) or Megatron-Core's local
// ones (get_gpt_layer_local_spec), whose attention is DotProductAttention whatever
// --attention-backend says: the unfused kernels that keep the s x s scores, priced as such (the
// stack's Transformer Engine GEMM workspace stays counted, at most 32 MiB). What the local layers
// cannot run is refused: flash or fused attention, FP8 (Transformer Engine's modules), and
// --tp-comm-overlap (Transformer Engine's userbuffers; the local linears would not overlap). These
// checks see one set of flags; resolve_run repeats them on the run a file and a command line make
// together (check_local_layers).
void apply_transformer_impl(const MegatronLayoutArgs& a, ParallelConfig& c, const std::string& where) {
  if (!a.transformer_impl || *a.transformer_impl == "transformer_engine") return;
  if (*a.transformer_impl != "local")
    fail_at("--transformer-impl",
            "{}--transformer-impl {} is not modelled (inference_optimized runs inference kernels); valid: "
            "transformer_engine, local",
            prefix(where), *a.transformer_impl);
  const bool flash_named = a.use_flash_attn || (a.attention_backend && *a.attention_backend != "auto" &&
                                                c.attention == AttentionKernel::Flash);
  refuse_beside_local_layers(
      flash_named ? (a.use_flash_attn ? "--use-flash-attn" : "--attention-backend " + *a.attention_backend) : "",
      a.fp8_format.has_value(), a.tp_comm_overlap, where);
  c.attention = AttentionKernel::Unfused;
}

void apply_megatron_layout(const MegatronLayoutArgs& a, ParallelConfig& c, const ModelSpec& model,
                           const std::string& where) {
  if (a.tp) c.tp = *a.tp;
  if (a.context_parallel_size) c.cp = *a.context_parallel_size;
  if (a.pp) c.pp = *a.pp;
  if (a.expert_model_parallel_size) c.ep = *a.expert_model_parallel_size;
  if (a.expert_tensor_parallel_size) {
    // 0 would read as "not given" (ETP = TP) further on: refuse it here, where it is a value.
    if (*a.expert_tensor_parallel_size < 1)
      fail_at("--expert-tensor-parallel-size", "{}--expert-tensor-parallel-size is {}; it must be >= 1",
              prefix(where), *a.expert_tensor_parallel_size);
    c.etp = *a.expert_tensor_parallel_size;
  }
  if (!a.cp_comm_type.empty()) {
    // Megatron-LM takes one type for all layers or one per layer; layers that differ are not
    // modelled (every layer is priced alike).
    for (const auto& type : a.cp_comm_type)
      if (type != a.cp_comm_type.front())
        fail_at("--cp-comm-type",
                "{}--cp-comm-type {}: a different type per layer is not modelled; give one type for every layer",
                prefix(where), fmt::join(a.cp_comm_type, " "));
    c.cp_comm_type = cp_comm_type_from(a.cp_comm_type.front(), where.empty() ? "simulate" : where);
  }
  if (!a.hierarchical_cp_sizes.empty()) {
    const auto& sizes = a.hierarchical_cp_sizes;
    // Megatron-LM reads two levels for a2a+p2p: the all-to-all groups, then the ring over them.
    if (sizes.size() != 2 || sizes[0] < 1 || sizes[1] < 1 ||
        std::int64_t{sizes[0]} * sizes[1] != (a.context_parallel_size ? *a.context_parallel_size : c.cp))
      fail_at("--hierarchical-context-parallel-sizes",
              "{}--hierarchical-context-parallel-sizes {} must be two sizes >= 1, the all-to-all group then the ring, "
              "whose product is --context-parallel-size {}",
              prefix(where), fmt::join(sizes, " "), a.context_parallel_size ? *a.context_parallel_size : c.cp);
    c.cp_a2a_size = sizes[0];
  }
  MoeRunOptions& moe = c.moe;
  const std::string w = where.empty() ? "simulate" : where;
  if (a.moe_token_dispatcher_type) moe.dispatcher = token_dispatcher_from(*a.moe_token_dispatcher_type, w);
  if (a.moe_flex_dispatcher_backend) moe.flex_backend = flex_backend_from(*a.moe_flex_dispatcher_backend, w);
  if (a.moe_enable_deepep) {
    // Megatron-Core's TransformerConfig, in its order.
    if (moe.dispatcher != TokenDispatcher::Flex)
      fail_at("--moe-enable-deepep",
              "{}--moe-enable-deepep needs --moe-token-dispatcher-type flex (Megatron-Core: \"DeepEP backend is only "
              "supported with flex token dispatcher\"); it is {}",
              prefix(where), to_string(moe.dispatcher));
    if (moe.flex_backend == FlexBackend::HybridEP)
      fail_at("--moe-enable-deepep",
              "{}--moe-enable-deepep with --moe-flex-dispatcher-backend hybridep: the flex dispatcher takes one "
              "backend; give one of them",
              prefix(where));
    moe.flex_backend = FlexBackend::DeepEP;
  }
  moe.grouped_gemm = moe.grouped_gemm || a.moe_grouped_gemm;
  if (a.moe_expert_capacity_factor) moe.capacity_factor = *a.moe_expert_capacity_factor;
  moe.pad_to_capacity = moe.pad_to_capacity || a.moe_pad_expert_input_to_capacity;
  for (const auto& [flag, values] : {std::pair{"--moe-router-load-balancing-type", &a.moe_router_load_balancing_type},
                                     std::pair{"--moe-aux-loss-coeff", &a.moe_aux_loss_coeff}})
    if (values->size() > 1)
      fail_at(flag, "{}{} {}: several load-balancing losses at once are not modelled; give one", prefix(where), flag,
              fmt::join(*values, " "));
  if (!a.moe_router_load_balancing_type.empty())
    moe.load_balancing = load_balancing_from(a.moe_router_load_balancing_type.front(), w);
  if (!a.moe_aux_loss_coeff.empty())
    moe.aux_loss_coeff = interop::to_double(a.moe_aux_loss_coeff.front(), "--moe-aux-loss-coeff", where);
  if (a.moe_token_drop_policy) moe.drop_policy = token_drop_policy_from(*a.moe_token_drop_policy, w);
  moe.shared_expert_overlap = moe.shared_expert_overlap || a.moe_shared_expert_overlap;
  moe.overlap_ep_comm = moe.overlap_ep_comm || a.overlap_moe_expert_parallel_comm;
  if (a.pipeline_layout) c.pipeline_layout = *a.pipeline_layout;
  if (a.account_for_embedding) c.account_for_embedding = true;
  if (a.account_for_loss) c.account_for_loss = true;
  if (a.sequence_parallel) c.sequence_parallel = true;
  if (a.micro_batch) c.micro_batch = *a.micro_batch;
  if (a.global_batch) c.global_batch = *a.global_batch;
  if (a.step_batch_size_schedule) {
    const int scheduled = step_batch_size_schedule_batch(*a.step_batch_size_schedule, where);
    // arguments.py raises on both; Megatron-LM's own GPT-3 175B example gives both, agreeing, and
    // that pair names one batch.
    if (a.global_batch && *a.global_batch != scheduled)
      fail_at("--step-batch-size-schedule",
              "{}--step-batch-size-schedule ends at a global batch of {} and --global-batch-size says {}; give one "
              "(Megatron-LM refuses both)",
              prefix(where), scheduled, *a.global_batch);
    c.global_batch = scheduled;
  }
  if (a.recompute_granularity)
    c.recompute = recompute_granularity_from(*a.recompute_granularity, prefix(where) + "--recompute-granularity");
  if (a.recompute_activations) {
    if (a.recompute_granularity && c.recompute != RecomputeGranularity::Selective)
      fail("{}--recompute-activations means selective recompute, but --recompute-granularity is '{}'", prefix(where),
           *a.recompute_granularity);
    c.recompute = RecomputeGranularity::Selective;
  }
  // Megatron-LM's rules: selective recompute takes no method (arguments.py asserts it) and no
  // layer count (TransformerConfig raises), so a run given either never started.
  if (c.recompute == RecomputeGranularity::Selective && a.recompute_method)
    fail_at("--recompute-method",
            "{}--recompute-method {} is for --recompute-granularity full; selective recompute takes none (Megatron-LM "
            "refuses it): leave it out",
            prefix(where), *a.recompute_method);
  if (c.recompute == RecomputeGranularity::Selective && a.recompute_num_layers)
    fail_at("--recompute-num-layers",
            "{}--recompute-num-layers {} is for --recompute-granularity full; selective recompute takes none "
            "(Megatron-Core refuses it): leave it out",
            prefix(where), *a.recompute_num_layers);
  // Full recompute: Megatron-Core's TransformerConfig raises without a method and a layer count,
  // so a launch script (a file) that leaves either out never started. clustercast's own command
  // line keeps its documented defaults (uniform, 1 layer per group).
  if (c.recompute == RecomputeGranularity::Full && !where.empty())
    for (const auto& [flag, given] : {std::pair{"--recompute-method", a.recompute_method.has_value()},
                                      std::pair{"--recompute-num-layers", a.recompute_num_layers.has_value()}})
      if (!given)
        fail_at(flag,
                "{}--recompute-granularity full without {}: Megatron-Core refuses it (TransformerConfig needs "
                "--recompute-method uniform or block and --recompute-num-layers); add {}",
                prefix(where), flag, flag);
  if (a.recompute_method) c.recompute_method = recompute_method_from(*a.recompute_method, prefix(where) + "--recompute-method");
  if (a.recompute_num_layers) c.recompute_num_layers = *a.recompute_num_layers;
  if (a.distributed_optimizer) c.distributed_optimizer = true;
  if (a.distributed_optimizer_instances) c.distributed_optimizer_instances = *a.distributed_optimizer_instances;
  if (a.overlap_grad_reduce) c.overlap_grad_reduce = true;
  if (a.overlap_param_gather) c.overlap_param_gather = true;
  if (a.tp_comm_overlap) c.tp_comm_overlap = true;
  if (a.grad_reduce_in_bf16) c.grad_reduce_in_bf16 = true;
  if (a.fp8_param_gather) c.fp8_param_gather = true;
  if (a.fp8_recipe) c.fp8_recipe = fp8_recipe_from(*a.fp8_recipe, where.empty() ? "simulate" : where);
  if (a.cross_entropy_loss_fusion) c.cross_entropy_fusion = true;
  if (a.no_rope_fusion) c.rope_fusion = false;
  // Beside the fusion, te is refused once a file and a command line are merged (resolve_run).
  if (a.cross_entropy_fusion_impl && *a.cross_entropy_fusion_impl != "native" && *a.cross_entropy_fusion_impl != "te")
    fail_at("--cross-entropy-fusion-impl", "{}--cross-entropy-fusion-impl '{}' is not one of Megatron-LM's: native, te",
            prefix(where), *a.cross_entropy_fusion_impl);
  // Megatron-LM's formats (TrainingConfig.ckpt_format); the two FSDP ones need an FSDP it asserts.
  if (a.ckpt_format) {
    const std::string& f = *a.ckpt_format;
    if (f != "torch" && f != "torch_dist" && f != "torch_dcp" && f != "fsdp_dtensor")
      fail_at("--ckpt-format", "{}--ckpt-format '{}' is not one of Megatron-LM's: torch, torch_dist, torch_dcp, "
              "fsdp_dtensor", prefix(where), f);
    if (f == "torch_dcp" || f == "fsdp_dtensor")
      fail_at("--ckpt-format", "{}--ckpt-format {} needs {}, as Megatron-LM asserts, and FSDP is not modelled",
              prefix(where), f, f == "torch_dcp" ? "--use-torch-fsdp2" : "--use-megatron-fsdp");
  }
  if (a.use_flash_attn) c.attention = AttentionKernel::Flash;
  if (a.attention_backend) {
    c.attention = attention_backend_from(*a.attention_backend, where.empty() ? "simulate" : where);
    if (a.use_flash_attn && c.attention != AttentionKernel::Flash)
      fail("{}--use-flash-attn contradicts --attention-backend {}; give one of them", prefix(where),
           *a.attention_backend);
  }
  apply_transformer_impl(a, c, where);
  if (const auto p = megatron_precision(a, where)) c.precision = *p;
  if (a.first_stage_layers) c.first_stage_layers = *a.first_stage_layers;
  if (a.last_stage_layers) c.last_stage_layers = *a.last_stage_layers;
  if (c.tp < 1)
    fail_at("--tensor-model-parallel-size", "{}--tensor-model-parallel-size is {}; it must be >= 1", prefix(where),
            c.tp);
  if (c.pp < 1)
    fail_at("--pipeline-model-parallel-size", "{}--pipeline-model-parallel-size is {}; it must be >= 1", prefix(where),
            c.pp);
  if (c.cp < 1)
    fail_at("--context-parallel-size", "{}--context-parallel-size is {}; it must be >= 1", prefix(where), c.cp);
  if (a.layers_per_virtual_stage && a.virtual_stages_per_rank)  // Megatron-LM asserts the same
    fail_at("--num-virtual-stages-per-pipeline-rank",
            "{}--num-layers-per-virtual-pipeline-stage and --num-virtual-stages-per-pipeline-rank both give the "
            "interleave depth; give one of them",
            prefix(where));
  if (a.virtual_stages_per_rank) {
    if (*a.virtual_stages_per_rank < 1)
      fail_at("--num-virtual-stages-per-pipeline-rank", "{}--num-virtual-stages-per-pipeline-rank is {}; it must be >= 1",
              prefix(where), *a.virtual_stages_per_rank);
    c.virtual_stages = *a.virtual_stages_per_rank;
  }
  if (a.layers_per_virtual_stage)
    c.virtual_stages =
        virtual_stages_from_layers_per_stage(*a.layers_per_virtual_stage, model.num_layers, c, prefix(where));
  if (a.pipeline_layout) {
    if (a.layers_per_virtual_stage || a.virtual_stages_per_rank)  // Megatron-LM asserts the same
      fail_at("--pipeline-model-parallel-layout",
              "{}--pipeline-model-parallel-layout sets the virtual stages per rank itself; give no {} beside it",
              prefix(where),
              a.layers_per_virtual_stage ? "--num-layers-per-virtual-pipeline-stage"
                                         : "--num-virtual-stages-per-pipeline-rank");
    c.virtual_stages = virtual_stages_from_layout(c.pipeline_layout, c.pp, prefix(where));
  }
  if (a.microbatch_group_size) {
    if (*a.microbatch_group_size < 1)
      fail_at("--microbatch-group-size-per-virtual-pipeline-stage",
              "{}--microbatch-group-size-per-virtual-pipeline-stage is {}; it must be >= 1", prefix(where),
              *a.microbatch_group_size);
    c.microbatch_group_size = *a.microbatch_group_size;
  }
}

}  // namespace cc
