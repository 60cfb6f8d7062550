// host_memory.h — refuse a CPU-engine run that cannot fit in this machine's RAM before it
// allocates anything, instead of dying of std::bad_alloc (or the OOM killer) mid-run.
#pragma once

#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::engine {

// Bytes one rank of the CPU engine holds at its peak: fp32 weights, a copy of the initial
// weights (for the report's update norm), gradients and both AdamW moments of its stage
// (20 bytes per parameter) plus its activations at the peak in flight — their sizes from
// the simulator's memory model (sim/memory_model.h), which `validate` checks against the
// engine's measured activations, without the GPU-only allowances (CUDA context, NCCL buffers).
double rank_peak_bytes(const ModelSpec& model, const ParallelConfig& config);

// Throws SpecError when `ranks_on_host` ranks of this run need more than `available_bytes`
// (MemAvailable), naming the model, the layout and both figures.
void check_host_memory(const ModelSpec& model, const ParallelConfig& config, int ranks_on_host,
                       double available_bytes);

// MemAvailable of /proc/meminfo in bytes (what can be allocated without swapping); a very
// large number where the kernel does not say.
double available_host_bytes();

}  // namespace cc::engine
