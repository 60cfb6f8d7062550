// memory_model.h — bytes each GPU holds at its peak: weights, gradients, optimizer state,
// activations (Korthikanti et al. 2022, Table 2, generalised to GQA and gated MLPs) times
// the microbatches in flight under the pipeline schedule, plus a stated allowance.
#pragma once

#include <string_view>
#include <vector>

#include "sim/cluster_spec.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

struct MemoryBreakdown {  // bytes
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  // The GEMM libraries' workspaces, held from the first GEMM on (library_workspaces.h).
  double workspaces = 0;
  double other = 0;  // CUDA context, communication buffers, allocator fragmentation
  // Of weights, gradients and optimizer state: the routed experts' part (0 without MoE layers).
  // A share of the parts above, not a part of its own: total() does not add it.
  double experts = 0;
  double total() const { return weights + gradients + optimizer + activations + workspaces + other; }
  // What PyTorch's allocator holds between steps (torch.cuda.memory_allocated()): the
  // parameters' state and the libraries' workspaces.
  double resident() const { return weights + gradients + optimizer + workspaces; }
};

// Allowances outside the model's own tensors. Defaults: a CUDA 12 context with cuBLAS
// handles takes 0.5-1 GiB (nvidia-smi on an idle process); NCCL keeps about 0.5 GiB of
// channel buffers for the TP, DP and PP communicators (NCCL_BUFFSIZE 4 MiB per channel and
// peer); PyTorch's caching allocator fragments about a tenth of the activation memory that
// it churns each microbatch. On top of that a layout must leave `headroom_fraction` of
// HBM unallocated to count as fitting: peaks of individual kernels' temporaries (cuBLAS
// workspaces, SP all-gather buffers, fp32 logits copies) and allocator spikes above the
// average; a layout predicted at 79.9 of 80 GiB crashes on a real cluster.
struct MemoryReserve {
  double cuda_context_gib = 0.8;
  double comm_buffers_gib = 0.5;
  double fragmentation_fraction = 0.10;
  double headroom_fraction = 0.05;

  double usable_gib(double hbm_gib) const { return hbm_gib * (1.0 - headroom_fraction); }
};

// Activation bytes kept for backward by one transformer layer for one microbatch.
// Korthikanti Table 2 for GPT-style layers: sbh(34 + 5as/h) without parallelism, and its
// TP / SP / selective forms; full recomputation keeps only the layer input. Under context
// parallelism every term is of the rank's s/CP tokens.
double layer_activation_bytes(const ModelSpec& model, const ParallelConfig& config);
// The same layer with nothing recomputed: the working set while a recomputed layer runs.
double layer_activation_bytes_without_recompute(const ModelSpec& model, const ParallelConfig& config);

// Activation bytes of pipeline stage `stage`, split by how they vary over the iteration:
// `per_in_flight` for each (microbatch, chunk) whose forward has run and backward has not,
// `working` while a backward pass recomputes (full recomputation), `fixed` held throughout
// (the last stage's output layer and logits), `loss_workspace` while the last chunk's loss
// runs (forward) and its gradient leaves it (backward). memory_model() takes them at the
// peak in flight; memory_timeline() follows them pass by pass.
struct StageActivations {
  double per_in_flight = 0;
  double working = 0;
  double fixed = 0;
  // The 16-bit logits are still referenced while the loss works on their fp32 copy
  // (Megatron-Core's vocab-parallel cross-entropy starts with logits.float(); the backward
  // casts the fp32 gradient back down beside it): e·s·b·v/t beyond the kept fp32 logits; the
  // fused loss (--cross-entropy-loss-fusion) holds a second fp32 copy besides, 4·s·b·v/t more.
  // Not at the same moment as a recomputed layer's working set.
  double loss_workspace = 0;
  // Context parallelism: what one layer's attention holds beyond the kept activations while
  // it runs (context_parallel_buffer_bytes()), on top of a recomputed layer's working set.
  double context_parallel_buffers = 0;
};
StageActivations stage_activations(const ModelSpec& model, const ParallelConfig& config, int stage);

struct StageMemory {
  MemoryBreakdown bytes;
  std::int64_t parameters = 0;  // parameters held by one GPU of this stage
  int in_flight = 0;            // (microbatch, chunk) activations held at the peak
  // How far the loss's workspace lifts the activation peak above the kept activations, the
  // recompute working set and the CP buffers (included in bytes.activations): what an engine that counts
  // the tensors it keeps for backward does not count.
  double loss_peak_extra = 0;
};

struct MemoryReport {
  std::vector<StageMemory> stages;
  int peak_stage = 0;
  const MemoryBreakdown& peak() const { return stages[static_cast<std::size_t>(peak_stage)].bytes; }
};

// `gpu`: the GPU the run uses, which sizes the GEMM libraries' workspaces; none: no CUDA
// libraries (the CPU engine).
MemoryReport memory_model(const ModelSpec& model, const ParallelConfig& config, const MemoryReserve& reserve = {},
                          const GpuSpec* gpu = nullptr);

// The ranks that hold the same parameters and so reduce their gradients together, and over
// which the distributed optimizer shards its state: Megatron-Core's data-parallel group with
// context parallelism (each CP rank saw other tokens of the same sequences), as grid dimensions.
inline constexpr std::string_view kGradientGroup = "cp-dp";
int gradient_group_size(const ParallelConfig& config);  // DP x CP
// The ranks one copy of the dense optimizer state is sharded over: DP x CP over the distributed
// optimizer's instances with it, 1 without.
int optimizer_shard_size(const ParallelConfig& config);

// Parameters one GPU of pipeline stage `stage` holds (TP-split tensors divided, norms and
// row-parallel biases replicated; the embedding on the first stage, the output layer on
// the last — tied embeddings keep a copy there when PP > 1, as Megatron-LM does).
std::int64_t stage_parameters(const ModelSpec& model, const ParallelConfig& config, int stage);
// The part of stage_parameters() that is the vocabulary embedding, the untied (or, with PP > 1,
// the last stage's copy of the tied) output layer and learned position embeddings: Megatron-Core's
// own layers, outside Transformer Engine's.
std::int64_t stage_embedding_parameters(const ModelSpec& model, const ParallelConfig& config, int stage);
// The part of stage_parameters() kept in FP8 under --fp8-param-gather (0 without it): the weights
// of Transformer Engine's linear layers (attention, MLP, shared and routed experts, multi-token
// prediction's projection), which Megatron-Core builds under TE's fp8_model_init and keeps in a
// uint8 buffer (param_and_grad_buffer.py). The embedding and output layer and the routers stay
// 16-bit; the layers' norm weights and biases (a few thousand) are counted with their weights.
// Transformer Engine's own FP8 copies of weights (the cached cast of a 16-bit weight, the
// transpose of an FP8 one) are in neither case.
std::int64_t fp8_weight_parameters(const ModelSpec& model, const ParallelConfig& config, int stage);
// Bytes of `params` weights of which `fp8_params` are kept in FP8 (one byte each), the rest at the
// run's width (two bytes, four for fp32 runs): what they hold in memory and what the parameter
// all-gather sends.
double weight_bytes(const ParallelConfig& config, double params, double fp8_params);
// The part of stage_parameters() that is routed experts: the stage's MoE layers x its E/EP local
// experts x one expert's parameters / ETP. Their gradients are reduced, and their optimizer state
// sharded, over the expert-data-parallel group (EDP), not DP x CP.
std::int64_t stage_expert_parameters(const ModelSpec& model, const ParallelConfig& config, int stage);
// MoE layers among the layers pipeline stage `stage` holds.
int stage_moe_layer_count(const ModelSpec& model, const ParallelConfig& config, int stage);

// Activation bytes one MoE block keeps for backward per microbatch beyond its attention (in place
// of the dense MLP's), on one rank: see moe_block_activation_bytes() in memory_model.cpp.
double moe_block_activation_bytes(const ModelSpec& model, const ParallelConfig& config);

}  // namespace cc
