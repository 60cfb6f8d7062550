// iteration_costs.h — prices everything one iteration runs, per pipeline stage and chunk,
// through a CostSource: forward and backward passes (with recompute and exposed TP and CP
// communication), pipeline transfers, gradient reduction over DP x CP, optimizer step.
// The task graph (simulator.cpp) only arranges these durations in time.
#pragma once

#include <algorithm>
#include <vector>

#include "sim/cost_source.h"
#include "sim/layer_program.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"
#include "sim/step_plan.h"

namespace cc {

struct PassCost {
  double compute_s = 0;
  double recompute_s = 0;
  double tp_comm_s = 0;  // exposed tensor-parallel communication
  double ep_comm_s = 0;  // exposed expert-parallel dispatch and combine (MoE layers)
  double cp_comm_s = 0;  // exposed context-parallel communication
  double cp_transfer_s = 0;  // context-parallel communication in full, hidden or not (the timeline's cp lane)
  double measured_s = 0;
  double host_s = 0;     // host time to issue the pass (ProgramCost::host_s, per-pass overhead)
  double span_s = 0;     // the pass from a standing start, host and device together (ProgramCost)
  double device() const { return compute_s + recompute_s + tp_comm_s + ep_comm_s + cp_comm_s; }
  double total() const { return span_s; }
  // The stretch the device sits idle waiting for the host to issue work.
  double host_wait() const { return span_s - device(); }
};

struct ChunkCosts {
  int layers = 0;
  PassCost forward, backward;
};

struct IterationCosts {
  std::vector<std::vector<ChunkCosts>> chunks;  // [stage][chunk]
  double p2p_s = 0;                  // one activation (or gradient) transfer between stages
  std::vector<std::int64_t> stage_params;  // per GPU
  std::vector<double> grad_reduce_s;       // whole-stage reduction over DP x CP in one call
  double bucket_params = 0;                // DP bucket size (Megatron-LM DDP default)
  std::vector<double> bucket_reduce_s;     // one full bucket's reduction, per stage
  std::vector<double> optimizer_s;
  std::vector<double> param_gather_s;      // distributed optimizer: bf16 parameter all-gather
  double embedding_sync_s = 0;             // tied embeddings across first and last stage
  double grad_norm_sync_s = 0;             // global gradient norm over the model-parallel group
  double measured_s = 0, modelled_s = 0;   // totals over every priced item, for the measured share
};

// The priced programs of one layer, the embedding and the output layer. They depend only
// on the per-rank shape (TP, CP, SP, micro batch, precision, attention kernel), so a search
// prices them once per shape and reuses them across PP, DP and recompute choices.
struct LayerCosts {
  ProgramCost forward, backward;
  ProgramCost selective_recompute, full_recompute;
  ProgramCost embedding_forward, embedding_backward, output_forward, output_backward;
  // An MoE layer's (zero for a dense model).
  ProgramCost moe_forward, moe_backward, moe_selective_recompute, moe_full_recompute;

  // What one layer (an MoE one when `moe`) reruns in backward under `config` (nothing without
  // recomputation).
  ProgramCost recompute_for(const ParallelConfig& config, bool moe = false) const {
    switch (recompute_scope(config)) {
      case RecomputeScope::WholeLayer: return moe ? moe_full_recompute : full_recompute;
      case RecomputeScope::CoreAttention: return moe ? moe_selective_recompute : selective_recompute;
      case RecomputeScope::Nothing: break;
    }
    return {};
  }
};

LayerCosts price_layers(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config,
                        const CostSource& costs);

IterationCosts price_iteration(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config,
                               const CostSource& costs);
IterationCosts price_iteration(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config,
                               const CostSource& costs, const LayerCosts& layers);

}  // namespace cc

namespace cc {

// One transformer layer for one microbatch on one rank, as Korthikanti et al. 2022 Table 4
// reports it: forward, and backward including what recomputation adds.
struct LayerTimes {
  double forward_s = 0;
  double backward_s = 0;  // includes recompute
  double recompute_s = 0;
};

LayerTimes layer_times(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config,
                       const CostSource& costs);

}  // namespace cc
