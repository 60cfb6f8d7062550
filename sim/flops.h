// flops.h — FLOPs of one training iteration. Model FLOPs follow Narayanan et al. 2021
// (72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h)) for GPT-style layers), generalised to grouped-query
// attention and gated MLPs by counting each GEMM; hardware FLOPs add the forward work
// that recomputation actually re-executes. Both count the attention products over the full
// s x s square (Narayanan's s/(6h) term), as Megatron-LM reports them, although a causal
// kernel computes only the lower half: at long sequences, where that term dominates (42.7 at
// s = 1M, h = 4096), MFU so counted reads up to twice the Tensor Core work done. Context
// parallelism changes neither: it splits the same work over CP ranks.
#pragma once

#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

// Forward FLOPs of one dense transformer layer for one sequence (GEMMs and attention products;
// multi-latent attention's own projections and head widths where the model has it).
double layer_forward_flops(const ModelSpec& model);
// The same for an MoE layer: its attention, the router's logits over every expert, each token's
// top-k routed experts and the shared experts. Model FLOPs count the experts a token uses, so
// they follow the active parameters, not the total.
double moe_layer_forward_flops(const ModelSpec& model);
// Forward FLOPs of the multi-token prediction layers for one sequence: each one's 2h -> h
// projection, its transformer layer (the last decoder layer's kind) and its logits; 0 without.
double mtp_forward_flops(const ModelSpec& model);
// Forward+backward FLOPs of an iteration of `global_batch` sequences, no recomputation (each
// layer dense or MoE as ModelSpec::is_moe_layer says; the multi-token prediction layers too:
// the step runs them, and their parameters are among the active ones).
double model_flops_per_iteration(const ModelSpec& model, int global_batch);
// model FLOPs plus the recomputed forward work under `config`'s recompute settings:
// full recomputation reruns each recomputed layer's forward (24·B·L·s·h²·(1 + s/(6h)) for
// GPT); selective reruns the attention score and context products (4·B·L·s²·h).
double hardware_flops_per_iteration(const ModelSpec& model, const ParallelConfig& config);

}  // namespace cc
