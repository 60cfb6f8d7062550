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
// The same checks that need no cluster (used by the training engine).
void validate_layout(const ParallelConfig& config, const ModelSpec& model, int gpus);
// The MoE run-time switches' own rules, those that hold whatever the layout (a capacity
// factor > 0, padding needs a factor, ...); validate_layout() applies them with the rest, and the
// search once, so a bad switch is named instead of excluding every layout.
void validate_moe_switches(const MoeRunOptions& switches, const ModelSpec& model);
// Refuses a model whose architecture the time and memory models do not price yet (multi-latent
// attention, multi-token prediction; MoE layers are priced). validate_layout() ends with it (a
// layout's own errors come first); the
// search calls it once before enumerating, so its refusal is named instead of counted per layout.
void refuse_unpriced_architecture(const ModelSpec& model);

}  // namespace cc
