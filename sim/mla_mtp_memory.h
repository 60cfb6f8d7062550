// mla_mtp_memory.h — what multi-latent attention and multi-token prediction layers hold on one
// GPU: MLA's parameters per TP rank and the activations its pieces save for backward, and the
// parameters and activations the MTP layers add to the last pipeline stage. The memory model
// (sim/memory_model.cpp) calls these in place of the dense attention's terms; the reasons are
// beside each term and in sim/README.md.
#pragma once

#include <cstdint>

#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

// MLA's parameters on one TP rank (Megatron-Core's MLASelfAttention with Transformer Engine):
// the query and key/value down-projections and the latents' norms are replicated on every TP
// rank; the up-projections (or the single query projection) and the output projection are split.
std::int64_t mla_attention_parameters_on_rank(const ModelSpec& model, int tp);

// Bytes one MLA block saves for backward per microbatch on one rank, from its projections'
// input through the output projection's input, with `element_bytes` per activation element.
// Per region token (b·s/TP under SP, else b·s):
//   the down-projections' input (the input norm's output), one tensor for both: e·h
//   the query latent's norm input and up-projection input: 2e·q_rank (0 without a query latent;
//     the single query projection reads the same input as the down-projections)
//   the key/value down-projection's output, kept whole by the norm that reads its latent part,
//     and the up-projection's input: e·(kv_rank + rope) + e·kv_rank
// Per token on this rank's heads n/TP (b·s tokens):
//   Q and K as the kernel reads them: 2e·(n/TP)·(qk + rope); V: e·(n/TP)·v;
//   the attention output (the output projection's input): e·(n/TP)·v;
//   flash attention's fp32 log-sum-exp per row: 4·(n/TP), unless selective recompute reruns it.
double mla_attention_activation_bytes(const ModelSpec& model, const ParallelConfig& config, double element_bytes);

// Multi-token prediction layers on pipeline stage `stage` (all on the last, as Megatron-Core
// places them without a layout string), and those of them whose transformer layer is MoE.
int mtp_layers_on_stage(const ModelSpec& model, const ParallelConfig& config, int stage);
int mtp_moe_layers_on_stage(const ModelSpec& model, const ParallelConfig& config, int stage);

// Parameters the MTP layers add to stage `stage` beyond their transformer layers (counted with
// the stage's layers): per layer its two input norms, the 2h -> h projection split over TP and
// its final norm; and, when PP > 1, the embedding table slice the last stage builds for them
// (GPTModel builds an embedding where mtp_process is set; the output table is already there, and
// with tied tables it serves as both).
std::int64_t mtp_extra_parameters(const ModelSpec& model, const ParallelConfig& config, int stage);

// Bytes the MTP layers keep for backward per microbatch on the last stage, given
// `layer_bytes`, what their transformer layer keeps. Per layer, beyond that layer:
//   per region token: the next tokens' embedding (enorm's input) e·h, the projection's
//     concatenated input 2e·h (SP keeps its shard), its final norm's input e·h
//     (hnorm reads the decoder's output, which the main output layer keeps already);
//   per token: the output layer's input e·h/TP and its fp32 logits 4·V/TP.
double mtp_activation_bytes(const ModelSpec& model, const ParallelConfig& config, double layer_bytes,
                            double element_bytes);

}  // namespace cc
