// layout_rules.h — the rules that complete a layout from what a user gave, each stated once:
// DP from the GPU count, the default global batch, and the virtual-stage count from Megatron-LM's
// layers per virtual stage or its layout string. The resolver (interop/resolver.h), the training and profiling
// commands and every file reader call these; none derives them again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cc {

struct ParallelConfig;

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

// --num-layers-per-virtual-pipeline-stage N, as Megatron-LM's arguments.py reads it: each
// pipeline rank holds (num_layers [+1 with --account-for-embedding-in-pipeline-split] [+1 with
// --account-for-loss-in-pipeline-split]) / PP layers in chunks of N, so N must divide them.
// Read after `config`'s PP, uneven stages and account-for flags are set; uneven first/last
// stages are refused (Megatron-LM asks for --num-virtual-stages-per-pipeline-rank there).
int virtual_stages_from_layers_per_stage(int layers_per_virtual_stage, int num_layers, const ParallelConfig& config,
                                         const std::string& where);

// The virtual stages per rank a --pipeline-model-parallel-layout string sets, as Megatron-LM
// infers them: its stage count / PP, which must divide.
int virtual_stages_from_layout(const std::string& layout, int pp, const std::string& where);

}  // namespace cc
