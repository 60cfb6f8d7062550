// megatron_option_tables.cpp — the Megatron-LM flags clustercast reads, one table for the model's
// and one for the layout's, each flag with the field it fills and its help line; the command line
// and the argument-file reader share them (megatron_options.cpp parses and applies them).
#include "interop/megatron_options.h"

namespace cc {

namespace {

using M = MegatronModelArgs;
using L = MegatronLayoutArgs;

constexpr const char* kModel = "Model";
constexpr const char* kModelMegatron = "Model (Megatron-LM names)";
constexpr const char* kLayout = "Parallel layout (Megatron-LM names)";
constexpr const char* kMoe = "Mixture of experts (Megatron-LM names)";
constexpr const char* kMoeModel = "Mixture-of-experts model (Megatron-LM names)";
constexpr const char* kLatent = "Multi-latent attention and multi-token prediction (Megatron-LM names)";

const MegatronOption<M> kModelOptions[] = {
    {"--num-layers", nullptr, kModel, "Override: transformer layers", &M::num_layers},
    {"--hidden-size", nullptr, kModel,
     "Override: hidden size; a preset FFN that is a whole multiple of its hidden size (4h) keeps that multiple, any "
     "other FFN size stays as it is",
     &M::hidden_size},
    {"--num-attention-heads", nullptr, kModel,
     "Override: attention heads; on a multi-head preset the query groups follow (stay MHA), on a grouped-query "
     "preset they stay",
     &M::num_attention_heads},
    {"--num-query-groups", nullptr, kModel, "Override: KV heads (grouped-query attention)", &M::num_query_groups},
    {"--ffn-hidden-size", nullptr, kModel, "Override: MLP hidden size", &M::ffn_hidden_size},
    {"--seq-length", nullptr, kModel, "Override: sequence length", &M::seq_length},
    {"--vocab-size", nullptr, kModel,
     "Override: vocabulary size (on the command line: as simulated; in a Megatron argument file: padded as "
     "Megatron-LM pads it, to a multiple of --make-vocab-size-divisible-by x TP)",
     &M::vocab_size},
    {"--swiglu", nullptr, kModel, "Override: gated SwiGLU MLP instead of GeLU", &M::swiglu},
    {"--squared-relu", nullptr, kModel,
     "Override: squared-ReLU MLP (Nemotron-4's; two matrices, no biases: with --disable-bias-linear) instead of GeLU",
     &M::squared_relu},
    {"--kv-channels", nullptr, kModelMegatron, "Width of one attention head (default hidden / heads)",
     &M::kv_channels},
    {"--max-position-embeddings", nullptr, kModelMegatron,
     "Positions the model supports (>= --seq-length; learned positions: equal to it)", &M::max_position_embeddings},
    {"--tokenizer-type", nullptr, kModelMegatron,
     "Megatron-LM's tokenizer, whose words are the vocabulary without --vocab-size: GPT2BPETokenizer (the default) "
     "GPT-2's 50,257, TikTokenizer 131,072, HuggingFaceTokenizer a known --tokenizer-model's and "
     "GPTSentencePieceTokenizer Nemotron-4's nemotron_2_256k.model 256,000, padded to "
     "--make-vocab-size-divisible-by x TP; another needs --vocab-size",
     &M::tokenizer_type},
    {"--tokenizer-model", nullptr, kModelMegatron,
     "The tokenizer's model: for HuggingFaceTokenizer a Hub repository whose words clustercast knows "
     "(meta-llama/Meta-Llama-3-8B, mistralai/Mixtral-8x7B-v0.1, ...) is the vocabulary without --vocab-size",
     &M::tokenizer_model},
    {"--make-vocab-size-divisible-by", nullptr, kModelMegatron,
     "Megatron-LM's vocabulary padding unit (times TP; default 128): applied to a Megatron argument file's "
     "--vocab-size",
     &M::make_vocab_size_divisible_by},
    {"--normalization", nullptr, kModelMegatron, "LayerNorm or RMSNorm", &M::normalization},
    {"--position-embedding-type", nullptr, kModelMegatron, "learned_absolute or rope", &M::position_embedding_type},
    {"--rotary-base", nullptr, kModelMegatron,
     "RoPE's base period (default 10000): no effect on time or memory, carried into the exports", &M::rotary_base},
    {"--untie-embeddings-and-output-weights", nullptr, kModelMegatron, "A separate output layer", &M::untie_embeddings},
    {"--group-query-attention", nullptr, kModelMegatron,
     "Grouped-query attention: --num-query-groups KV heads (without it: the preset's, else 1 as in Megatron-LM)",
     &M::group_query_attention},
    {"--disable-bias-linear", nullptr, kModelMegatron,
     "No biases in linear layers (modelled for gated SwiGLU/GeGLU MLPs, which have none)", &M::disable_bias_linear},
    {"--hidden-dropout", nullptr, kModelMegatron, "Hidden dropout probability (0: no masks stored)", &M::hidden_dropout},
    {"--attention-dropout", nullptr, kModelMegatron, "Attention dropout probability", &M::attention_dropout},
    {"--qk-layernorm", nullptr, kModelMegatron,
     "Norms on queries and keys, per head (Qwen3); with --multi-latent-attention the norms of the query and key/value "
     "latents",
     &M::qk_layernorm},
    {"--no-position-embedding", nullptr, kModelMegatron,
     "Deprecated: no learned positions; accepted beside --position-embedding-type rope, as Megatron-LM accepts it",
     &M::no_position_embedding},
    {"--add-qkv-bias", nullptr, kModelMegatron, "Biases on Q, K and V beside --disable-bias-linear (Qwen2)",
     &M::add_qkv_bias},
    {"--num-experts", nullptr, kMoeModel, "Routed experts per MoE layer (0 or absent: a dense model)", &M::num_experts},
    {"--moe-router-topk", nullptr, kMoeModel, "Routed experts each token visits (default 2)", &M::moe_router_topk},
    {"--moe-ffn-hidden-size", nullptr, kMoeModel, "One routed expert's FFN width (default --ffn-hidden-size)",
     &M::moe_ffn_hidden_size},
    {"--moe-shared-expert-intermediate-size", nullptr, kMoeModel,
     "Width of the shared experts' MLP, summed over them (default: none)", &M::moe_shared_expert_intermediate_size},
    {"--moe-shared-expert-gate", nullptr, kMoeModel, "A sigmoid gate on the shared expert (Qwen2-MoE)",
     &M::moe_shared_expert_gate},
    {"--moe-layer-freq", nullptr, kMoeModel,
     "Which layers are MoE: an integer N (every Nth from the first; default 1) or a Python list of 0/1, one per "
     "layer, e.g. ([0]*3+[1]*58)",
     &M::moe_layer_freq},
    {"--moe-router-score-function", nullptr, kMoeModel, "softmax (default) or sigmoid",
     &M::moe_router_score_function},
    {"--moe-router-num-groups", nullptr, kMoeModel, "Grouped top-k: expert groups (default: none)",
     &M::moe_router_num_groups},
    {"--moe-router-group-topk", nullptr, kMoeModel, "Grouped top-k: groups a token may use",
     &M::moe_router_group_topk},
    {"--moe-router-topk-scaling-factor", nullptr, kMoeModel, "Scale of the routed output (default 1)",
     &M::moe_router_topk_scaling_factor},
    {"--moe-router-enable-expert-bias", nullptr, kMoeModel,
     "DeepSeek-V3's per-expert routing bias (counted: it is in the checkpoint)", &M::moe_router_enable_expert_bias},
    {"--multi-latent-attention", nullptr, kLatent,
     "Multi-latent attention (DeepSeek-V2/V3); the latents have norms with --qk-layernorm (as DeepSeek trains), "
     "none without", &M::multi_latent_attention},
    {"--q-lora-rank", nullptr, kLatent, "Query latent rank (default: none, queries projected directly)",
     &M::q_lora_rank},
    {"--kv-lora-rank", nullptr, kLatent, "Key/value latent rank (default 32)", &M::kv_lora_rank},
    {"--qk-head-dim", nullptr, kLatent, "A query/key head's part without RoPE (default 128)", &M::qk_head_dim},
    {"--qk-pos-emb-head-dim", nullptr, kLatent, "A query/key head's RoPE part (default 64)", &M::qk_pos_emb_head_dim},
    {"--v-head-dim", nullptr, kLatent, "A value head's width (default 128)", &M::v_head_dim},
    {"--mtp-num-layers", nullptr, kLatent, "Multi-token prediction layers (default none)", &M::mtp_num_layers},
};

const MegatronOption<L> kLayoutOptions[] = {
    {"--tensor-model-parallel-size", "--tp", kLayout, "Tensor-parallel size", &L::tp},
    {"--pipeline-model-parallel-size", "--pp", kLayout, "Pipeline-parallel size", &L::pp},
    {"--sequence-parallel", nullptr, kLayout, "Sequence parallelism (needs TP > 1)", &L::sequence_parallel},
    {"--micro-batch-size", nullptr, kLayout, "Micro batch size", &L::micro_batch},
    {"--global-batch-size", nullptr, kLayout, "Global batch size (default: micro batch x DP)", &L::global_batch},
    {"--step-batch-size-schedule", nullptr, kLayout,
     "Megatron-LM's batch steps, \"THRESHOLD:BATCH ...\" by samples consumed: the iteration simulated is the last "
     "step's full batch (in place of --global-batch-size)",
     &L::step_batch_size_schedule},
    {"--num-layers-per-virtual-pipeline-stage", nullptr, kLayout, "Layers per virtual stage: interleaved 1F1B",
     &L::layers_per_virtual_stage},
    {"--num-virtual-stages-per-pipeline-rank", nullptr, kLayout,
     "Model chunks per pipeline rank: interleaved 1F1B (the other spelling of the flag above)",
     &L::virtual_stages_per_rank},
    {"--microbatch-group-size-per-virtual-pipeline-stage", nullptr, kLayout,
     "Interleaved 1F1B: microbatches run on one chunk before the next (default PP)", &L::microbatch_group_size},
    {"--pipeline-model-parallel-layout", nullptr, kLayout,
     "Every virtual stage's layers, e.g. \"Et*7|(t*8|)*14,t*7L\": E embedding, t a transformer layer, L the loss, | "
     "between stages, *N repeats",
     &L::pipeline_layout},
    {"--account-for-embedding-in-pipeline-split", nullptr, kLayout,
     "The embedding counts as one layer when layers are split over stages", &L::account_for_embedding},
    {"--account-for-loss-in-pipeline-split", nullptr, kLayout,
     "The loss counts as one layer when layers are split over stages", &L::account_for_loss},
    {"--decoder-first-pipeline-num-layers", nullptr, kLayout, "Layers on the first stage (uneven split)",
     &L::first_stage_layers},
    {"--decoder-last-pipeline-num-layers", nullptr, kLayout, "Layers on the last stage (uneven split)",
     &L::last_stage_layers},
    {"--recompute-granularity", nullptr, kLayout, "none, selective or full", &L::recompute_granularity},
    {"--recompute-method", nullptr, kLayout, "uniform or block (full recompute)", &L::recompute_method},
    {"--recompute-num-layers", nullptr, kLayout,
     "Layers per recompute group (uniform) or recomputed layers per stage (block)", &L::recompute_num_layers},
    {"--recompute-activations", nullptr, kLayout, "= --recompute-granularity selective", &L::recompute_activations},
    {"--use-distributed-optimizer", nullptr, kLayout, "Shard optimizer state over DP", &L::distributed_optimizer},
    {"--num-distributed-optimizer-instances", nullptr, kLayout,
     "Partial distributed optimizer: shard the optimizer state within this many equal blocks of DP x CP, the shards "
     "all-reduced across the blocks (needs --use-distributed-optimizer)",
     &L::distributed_optimizer_instances},
    {"--overlap-grad-reduce", nullptr, kLayout, "Reduce gradients in buckets during backward", &L::overlap_grad_reduce},
    {"--overlap-param-gather", nullptr, kLayout, "Hide the parameter all-gather (distributed optimizer)",
     &L::overlap_param_gather},
    {"--tp-comm-overlap", nullptr, kLayout,
     "Overlap sequence parallelism's all-gathers and reduce-scatters with the GEMMs beside them (needs "
     "--sequence-parallel)",
     &L::tp_comm_overlap},
    {"--grad-reduce-in-bf16", nullptr, kLayout,
     "Keep, accumulate and reduce a bf16 run's gradients in bf16 (Megatron-LM's default for bf16 is fp32): half the "
     "gradient memory and data-parallel traffic",
     &L::grad_reduce_in_bf16},
    {"--fp8-recipe", nullptr, kLayout,
     "delayed (Megatron-LM's default) or tensorwise (current scaling): per-tensor scaled FP8 GEMMs, priced alike; "
     "blockwise and mxfp8 are refused",
     &L::fp8_recipe},
    {"--fp8-param-gather", nullptr, kLayout,
     "Keep Transformer Engine's linear weights in FP8 and all-gather them so (FP8 with the distributed optimizer): "
     "one byte per such weight in memory and in the parameter all-gather",
     &L::fp8_param_gather},
    {"--cross-entropy-loss-fusion", nullptr, kLayout,
     "Megatron-Core's fused vocab-parallel cross-entropy: fewer passes over the logits and one TP all-reduce fewer, "
     "one more fp32 copy of the logits at the loss's peak",
     &L::cross_entropy_loss_fusion},
    {"--cross-entropy-fusion-impl", nullptr, kLayout,
     "native (the default) or te; Megatron-LM refuses te beside --cross-entropy-loss-fusion",
     &L::cross_entropy_fusion_impl},
    {"--ckpt-format", nullptr, kLayout,
     "Checkpoint format (torch_dist, Megatron-LM's default, torch, ...): no bearing on time or memory; "
     "--overlap-param-gather-with-optimizer-step needs torch, as Megatron-LM asserts",
     &L::ckpt_format},
    {"--no-rope-fusion", nullptr, kLayout,
     "RoPE by separate PyTorch kernels instead of Transformer Engine's fused one (about six times the memory "
     "traffic forward, seven backward)",
     &L::no_rope_fusion},
    {"--use-flash-attn", nullptr, kLayout,
     "Flash attention instead of the unfused kernels (= --attention-backend flash)", &L::use_flash_attn},
    {"--transformer-impl", nullptr, kLayout,
     "transformer_engine (the default) or local: Megatron-Core's own layers, whose attention is the unfused "
     "DotProductAttention (s x s scores kept); no FP8, flash attention or --tp-comm-overlap with them",
     &L::transformer_impl},
    {"--attention-backend", nullptr, kLayout,
     "auto, flash or fused: scores never stored; unfused: the s x s scores are materialised, as in the 2021-2022 "
     "papers' runs (default: the layout file's, else the stack's: flash for megatron-core and nemo, unfused for "
     "megatron-2021, megatron-2022, megatron-deepspeed and our engine); local is refused (Megatron-LM takes it only "
     "beside --spec local)",
     &L::attention_backend},
    {"--no-masked-softmax-fusion", nullptr, kLayout,
     "Megatron-LM's separate softmax kernels on the unfused attention path: left aside (with a warning) under "
     "flash attention, which has no separate softmax; refused with the unfused kernels, whose softmax is priced "
     "fused",
     &L::no_masked_softmax_fusion},
    {"--deterministic-mode", nullptr, kLayout,
     "Deterministic kernels (slower, Megatron-Core says): priced only under a stack whose measured runs used them "
     "(megatron-core-ci, Megatron-LM's functional-test harness); refused under any other",
     &L::deterministic_mode},
    {"--no-gradient-accumulation-fusion", nullptr, kLayout,
     "Weight gradients added to the fp32 main gradients by a separate kernel: priced only under a stack whose "
     "measured runs did so (megatron-core-ci); refused under any other",
     &L::no_gradient_accumulation_fusion},
    {"--use-tp-pp-dp-mapping", nullptr, kLayout,
     "Megatron-LM's other rank order (TP, CP, EP, PP, DP): read where it changes no link a group uses (one node, or "
     "PP 1 or DP 1); refused across nodes",
     &L::use_tp_pp_dp_mapping},
    {"--overlap-p2p-communication-warmup-flush", nullptr, kLayout,
     "The interleaved schedule's sends overlapped in its warm-up and flush too: priced as clustercast prices them "
     "in every phase, under a stack whose interleaved sends overlap (megatron-core, megatron-core-ci, nemo)",
     &L::overlap_p2p_warmup_flush},
    {"--overlap-param-gather-with-optimizer-step", nullptr, kLayout,
     "The first model chunk's parameter all-gather starts during the optimizer step: priced as clustercast prices "
     "--overlap-param-gather, whose gather it already hides (needs it, the distributed optimizer and virtual stages)",
     &L::overlap_param_gather_with_optimizer_step},
    {"--bf16", nullptr, kLayout, "= --precision bf16", &L::bf16},
    {"--fp16", nullptr, kLayout, "= --precision fp16", &L::fp16},
    {"--fp8-format", nullptr, kLayout,
     "hybrid or e4m3: FP8 GEMMs (= --precision fp8; Megatron-LM passes --bf16 beside it)", &L::fp8_format},
    {"--context-parallel-size", "--cp", kLayout,
     "Context-parallel size: each rank holds 1/CP of every sequence (DP = GPUs / (TP x CP x PP))",
     &L::context_parallel_size},
    {"--cp-comm-type", nullptr, kLayout,
     "How CP ranks exchange keys and values: p2p (ring, default), a2a, allgather or a2a+p2p", &L::cp_comm_type},
    {"--hierarchical-context-parallel-sizes", nullptr, kLayout,
     "a2a+p2p: the all-to-all group size, then the ring size (their product is CP)", &L::hierarchical_cp_sizes},
    {"--expert-model-parallel-size", "--ep", kLayout,
     "Expert-parallel size: an MoE layer's routed experts spread over EP ranks (EP x ETP divides TP x CP x DP)",
     &L::expert_model_parallel_size},
    {"--expert-tensor-parallel-size", "--etp", kLayout,
     "Expert tensor-parallel size: each expert's FFN split over ETP ranks (default TP, as in Megatron-LM)",
     &L::expert_tensor_parallel_size},
    {"--moe-token-dispatcher-type", nullptr, kMoe,
     "allgather (default, as in Megatron-LM), alltoall, or flex (DeepEP / HybridEP: one copy per node reached)",
     &L::moe_token_dispatcher_type},
    {"--moe-flex-dispatcher-backend", nullptr, kMoe, "The flex dispatcher's kernels: deepep (default) or hybridep",
     &L::moe_flex_dispatcher_backend},
    {"--moe-enable-deepep", nullptr, kMoe, "The flex dispatcher with DeepEP (Megatron-LM's older spelling)",
     &L::moe_enable_deepep},
    {"--moe-grouped-gemm", nullptr, kMoe, "One grouped GEMM for a rank's experts", &L::moe_grouped_gemm},
    {"--moe-expert-capacity-factor", nullptr, kMoe,
     "Tokens an expert takes, as a multiple of its even share (> 0); left out: dropless",
     &L::moe_expert_capacity_factor},
    {"--moe-pad-expert-input-to-capacity", nullptr, kMoe, "Every expert runs its full capacity (needs a factor)",
     &L::moe_pad_expert_input_to_capacity},
    {"--moe-router-load-balancing-type", nullptr, kMoe,
     "aux_loss (default), seq_aux_loss, global_aux_loss, sinkhorn or none", &L::moe_router_load_balancing_type},
    {"--moe-aux-loss-coeff", nullptr, kMoe, "Weight of the load-balancing loss (default 0)", &L::moe_aux_loss_coeff},
    {"--moe-token-drop-policy", nullptr, kMoe, "probs (default) or position: which tokens over capacity drop",
     &L::moe_token_drop_policy},
    {"--moe-shared-expert-overlap", nullptr, kMoe, "Shared expert beside the token all-to-all (alltoall or flex dispatcher)",
     &L::moe_shared_expert_overlap},
    {"--overlap-moe-expert-parallel-comm", nullptr, kMoe,
     "Dispatch and combine beside another microbatch's compute (EP > 1, alltoall or flex, virtual stages when PP > 1)",
     &L::overlap_moe_expert_parallel_comm},
};

}  // namespace

std::span<const MegatronOption<MegatronModelArgs>> megatron_model_options() { return kModelOptions; }
std::span<const MegatronOption<MegatronLayoutArgs>> megatron_layout_options() { return kLayoutOptions; }

}  // namespace cc
