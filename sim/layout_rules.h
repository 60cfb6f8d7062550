// layout_rules.h — the rules that complete a layout from what a user gave, each stated once:
// DP from the GPU count, the default global batch, and the virtual-stage count from Megatron-LM's
// layers per virtual stage. The resolver (interop/resolver.h), the training and profiling
// commands and every file reader call these; none derives them again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cc {

// DP = GPUs / (TP x CP x PP), as Megatron-LM derives --data-parallel-size from the world size;
// none when TP x CP x PP (taken in 64 bits) does not divide a count >= 1. The caller words the refusal,
// naming the count as its user gave it (--gpus, MPI ranks, a layout file's devices).
std::optional<int> data_parallel_size(std::int64_t gpus, int tp, int cp, int pp);

// The model-parallel product as messages name it: "TP 8 x PP 16", with "x CP 2" between them
// where CP > 1 (a layout without context parallelism reads as it always has).
std::string model_parallel_text(int tp, int cp, int pp);

// Without --global-batch-size, one micro batch per DP replica (Megatron-LM's default global
// batch is the micro batch times DP: a single microbatch per step).
int default_global_batch(int micro_batch, int dp);

// --num-layers-per-virtual-pipeline-stage N: each pipeline rank holds num_layers / (PP x N)
// model chunks, so N must divide the layers of a stage.
int virtual_stages_from_layers_per_stage(int layers_per_virtual_stage, int num_layers, int pp,
                                         const std::string& where);

}  // namespace cc
