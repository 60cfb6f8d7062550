// layout_validation.h — every combination of model, cluster and parallel config that
// Megatron-LM would refuse, refused here with a message naming the value and what would be
// valid. Its own file because the checks read the step plan (each chunk's layers), which in
// turn reads the parallel config: parallel_config <- step_plan <- layout_validation, no loop.
#pragma once

#include "sim/cluster_spec.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

// Refuses every combination Megatron-LM would refuse, with a message naming the value and
// what would be valid. `gpus` = 0 skips the GPU-count check.
void validate(const ParallelConfig& config, const ModelSpec& model, const ClusterSpec& cluster, int gpus);

// The (microbatch, chunk) passes one simulation runs at most, over every stage (and, in
// every-rank mode, every DP replica): about 450 bytes each with their tasks, so at most about
// 2 GB and seconds of work. Real runs need far fewer (GPT-3 175B on 1,024 GPUs: 6,144).
inline constexpr double kMaxSimulatedPasses = 4e6;
// The same checks that need no cluster (used by the training engine).
void validate_layout(const ParallelConfig& config, const ModelSpec& model, int gpus);
// The MoE run-time switches' own rules, those that hold whatever the layout (a capacity
// factor > 0, padding needs a factor, ...); validate_layout() applies them with the rest, and the
// search once, so a bad switch is named instead of excluding every layout.
void validate_moe_switches(const MoeRunOptions& switches, const ModelSpec& model);
// The FP8 switches' rule: --fp8-param-gather and a recipe other than Megatron-LM's default need FP8
// training, each refused by name otherwise (`where` opens the message). validate_layout() applies it
// with the rest, and the search once for its switches.
void validate_fp8_switches(Precision precision, bool fp8_param_gather, Fp8Recipe recipe, const std::string& where);
// Refuses what the time and memory models do not price (multi-latent attention with context
// parallelism or unfused attention), naming it. validate_layout() ends with it, so a layout's
// own errors come first.
void refuse_unpriced_architecture(const ParallelConfig& config, const ModelSpec& model);
// The attention kernel's part of it (Gemma 2's soft-capped scores need the unfused kernel), which
// the search checks once for its whole space.
void refuse_unpriced_attention(AttentionKernel attention, const ModelSpec& model);

}  // namespace cc
