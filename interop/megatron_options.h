// megatron_options.h — Megatron-LM's command-line vocabulary, defined once: the flags that shape
// the model and the layout (each bound to a field here), the flags that bear on neither time nor
// memory (left aside and listed), and everything else refused by name. `simulate`'s command
// line (cli/common_options.cpp registers these tables with CLI11) and a Megatron argument file
// (parse_megatron_words) both read through these tables and the same apply_* rules, so a
// launch line means one thing whether it is pasted or read from a file.
// Names and arities follow megatron/training/arguments.py (tests/reference/megatron/ holds the
// flag list derived from it; tests check these tables against it).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

// The flags that shape the model.
struct MegatronModelArgs {
  std::optional<int> num_layers, hidden_size, num_attention_heads, num_query_groups, ffn_hidden_size, seq_length,
      vocab_size, kv_channels, max_position_embeddings, make_vocab_size_divisible_by, rotary_base;
  bool swiglu = false, squared_relu = false, untie_embeddings = false, group_query_attention = false,
       disable_bias_linear = false;
  std::optional<std::string> normalization, position_embedding_type;
  // The vocabulary's source where --vocab-size is not given (megatron_tokenizer_vocabulary):
  // the tokenizer, and its model (a HuggingFace tokenizer's Hub repository).
  std::optional<std::string> tokenizer_type, tokenizer_model;
  std::optional<double> hidden_dropout, attention_dropout;
  // --qk-layernorm: per-head q/k norms, or MLA's latent norms; --add-qkv-bias: Q/K/V biases
  // beside --disable-bias-linear.
  bool qk_layernorm = false, add_qkv_bias = false;
  bool no_position_embedding = false;  // deprecated; Megatron-LM takes it only beside rope, where it is a no-op
  // Mixture of experts (ModelSpec::moe). --moe-layer-freq stays text: an integer or
  // Megatron-LM's Python list expression (moe_layer_freq_from).
  std::optional<int> num_experts, moe_router_topk, moe_ffn_hidden_size, moe_shared_expert_intermediate_size,
      moe_router_num_groups, moe_router_group_topk;
  std::optional<std::string> moe_layer_freq, moe_router_score_function;
  std::optional<double> moe_router_topk_scaling_factor;
  bool moe_shared_expert_gate = false, moe_router_enable_expert_bias = false;
  // Multi-latent attention (ModelSpec::mla) and multi-token prediction.
  bool multi_latent_attention = false;
  std::optional<int> q_lora_rank, kv_lora_rank, qk_head_dim, qk_pos_emb_head_dim, v_head_dim, mtp_num_layers;
};

// The flags that lay the run out and pick its precision and kernels.
struct MegatronLayoutArgs {
  std::optional<int> tp, pp, micro_batch, global_batch, layers_per_virtual_stage, virtual_stages_per_rank,
      first_stage_layers, last_stage_layers, recompute_num_layers, context_parallel_size, microbatch_group_size;
  std::optional<int> expert_model_parallel_size, expert_tensor_parallel_size;
  std::optional<int> distributed_optimizer_instances;  // --num-distributed-optimizer-instances
  // MoE run-time switches (ParallelConfig::moe).
  std::optional<std::string> moe_token_dispatcher_type, moe_flex_dispatcher_backend, moe_token_drop_policy;
  std::optional<double> moe_expert_capacity_factor;
  // Megatron-LM takes a list of each (several losses summed); one is modelled.
  std::vector<std::string> moe_router_load_balancing_type, moe_aux_loss_coeff;
  bool moe_grouped_gemm = false, moe_pad_expert_input_to_capacity = false, moe_shared_expert_overlap = false,
       overlap_moe_expert_parallel_comm = false, moe_enable_deepep = false;
  std::optional<std::string> recompute_granularity, recompute_method, attention_backend, fp8_format, pipeline_layout,
      transformer_impl, cross_entropy_fusion_impl, ckpt_format, fp8_recipe;
  // THRESHOLD:BATCH entries; the run's global batch is the last one's (step_batch_size_schedule_batch).
  std::optional<std::string> step_batch_size_schedule;
  std::vector<std::string> cp_comm_type;  // one for every layer, or one for all
  std::vector<int> hierarchical_cp_sizes;
  bool sequence_parallel = false, distributed_optimizer = false, overlap_grad_reduce = false,
       overlap_param_gather = false, tp_comm_overlap = false, use_flash_attn = false, bf16 = false, fp16 = false,
       recompute_activations = false, account_for_embedding = false, account_for_loss = false,
       no_masked_softmax_fusion = false, deterministic_mode = false, no_gradient_accumulation_fusion = false,
       use_tp_pp_dp_mapping = false, grad_reduce_in_bf16 = false, overlap_p2p_warmup_flush = false,
       overlap_param_gather_with_optimizer_step = false, cross_entropy_loss_fusion = false, no_rope_fusion = false,
       fp8_param_gather = false;
};

// Megatron-LM switches that are no field of the layout: each matters only beside what flags next
// to a file may still change (the attention kernel, the stack, the GPU count), so resolve_run
// weighs them (LayoutFile and LayoutRequest carry them).
struct MegatronSwitches {
  bool no_masked_softmax_fusion = false;  // unfused softmax: only the unfused attention path has one
  // Kernel choices that only some stacks' runs made (FrameworkSpec).
  bool deterministic_mode = false;               // --deterministic-mode
  bool no_gradient_accumulation_fusion = false;  // --no-gradient-accumulation-fusion
  bool tp_pp_dp_rank_order = false;              // --use-tp-pp-dp-mapping: ranks ordered TP, CP, EP, PP, DP
  bool overlap_p2p_warmup_flush = false;         // --overlap-p2p-communication-warmup-flush
  bool param_gather_with_optimizer_step = false;  // --overlap-param-gather-with-optimizer-step
  bool local_layers = false;                     // --transformer-impl local (apply_transformer_impl)
  // --ckpt-format: no bearing on time or memory, but Megatron-LM allows
  // --overlap-param-gather-with-optimizer-step with the torch format only. Unset: its default, torch_dist.
  std::optional<std::string> ckpt_format;
  // --cross-entropy-fusion-impl (native, Megatron-LM's default, or te): Megatron-LM refuses te beside
  // --cross-entropy-loss-fusion, which a file and a command line may give apart.
  std::optional<std::string> cross_entropy_fusion_impl;

  MegatronSwitches& operator|=(const MegatronSwitches& other);
};
MegatronSwitches megatron_switches(const MegatronLayoutArgs& args);

template <class Args>
using MegatronField = std::variant<std::optional<int> Args::*, std::optional<double> Args::*,
                                   std::optional<std::string> Args::*, bool Args::*, std::vector<int> Args::*,
                                   std::vector<std::string> Args::*>;

template <class Args>
struct MegatronOption {
  const char* flag;   // Megatron-LM's name
  const char* alias;  // clustercast's short form on the command line (nullptr: none)
  const char* group;  // --help section
  const char* help;
  MegatronField<Args> field;
};

std::span<const MegatronOption<MegatronModelArgs>> megatron_model_options();
std::span<const MegatronOption<MegatronLayoutArgs>> megatron_layout_options();

// A flag without bearing on time or memory: `values` 0 (a switch), 1, a fixed count, or -1
// (one or more, up to the next flag). `on_command_line` false: `simulate` has a flag of that
// name with its own meaning (--train-iters sets the token budget there). `only_value`: the flag
// is left aside only at that value (Megatron-LM's default, e.g. --transformer-impl
// transformer_engine), or at one of several separated by '|' ("validate_results|disabled");
// any other value is refused, `otherwise` saying why.
struct IgnoredMegatronFlag {
  const char* flag;
  int values;
  bool on_command_line = true;
  const char* only_value = nullptr;
  const char* otherwise = nullptr;
};
std::span<const IgnoredMegatronFlag> megatron_ignored_flags();
const IgnoredMegatronFlag* find_ignored_megatron_flag(const std::string& flag);
// Why `value` of a flag left aside only at some values is refused ("" when it is one of them or the
// flag takes any): "--transformer-impl local (...; only transformer_engine is left aside)".
std::string ignored_flag_value_refusal(const IgnoredMegatronFlag& f, const std::string& value);
// The values a flag is left aside at (`only_value` split at '|'); empty when it takes any.
std::vector<std::string> ignored_flag_values(const IgnoredMegatronFlag& f);
// Why a flag that is neither modelled nor left aside is refused, for the families users meet
// (megatron_flag_classes.cpp keeps both lists).
std::string megatron_refusal_reason(const std::string& flag);

struct MegatronArgs {
  MegatronModelArgs model;
  MegatronLayoutArgs layout;
  std::vector<std::string> ignored;  // flags given from megatron_ignored_flags(), in order
};

// Words of an argument file (whitespace-separated, as `$(cat FILE)` splits them). Every flag
// not in the tables above is refused, all of them named in one message.
MegatronArgs parse_megatron_words(const std::vector<std::string>& words, const std::string& where);

// The shape flags over `base`. `from_flags_alone`: no preset or file model under them (FFN 4h,
// --group-query-attention alone means one group, as in Megatron-LM); otherwise a preset's
// multi-head attention follows new heads and an FFN that is a whole multiple of h follows h.
// `label` names the model in validate()'s messages.
ModelSpec apply_megatron_model(const MegatronModelArgs& args, ModelSpec base, bool from_flags_alone,
                               const std::string& label);

// The layout flags over `c` (tp, pp, sequence parallelism, batch, stages, recompute, optimizer,
// attention kernel, precision). Megatron precision flags set c.precision only when given.
void apply_megatron_layout(const MegatronLayoutArgs& args, ParallelConfig& c, const ModelSpec& model,
                           const std::string& where);
// What Megatron-Core's local layers (--transformer-impl local) cannot run, refused by name: flash or
// fused attention (`flash_flag`, the flag that asked for it; empty: none), FP8 (Transformer Engine's
// modules) and --tp-comm-overlap (its userbuffers). Checked on each set of flags as it is read and
// again by resolve_run on the run a file and a command line make together.
void refuse_beside_local_layers(const std::string& flash_flag, bool fp8, bool tp_comm_overlap,
                                const std::string& where);
// The precision the flags name (--bf16, --fp16, --fp8-format), if any.
std::optional<Precision> megatron_precision(const MegatronLayoutArgs& args, const std::string& where);

}  // namespace cc
