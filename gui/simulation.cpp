#include "gui/simulation.h"

#include <chrono>
#include <map>
#include <utility>

#include "interop/resolver.h"
#include "sim/error.h"

namespace cc::gui {

std::string setup_field_of(const std::string& field) {
  // The flag or key a SpecError names (sim/error.h) -> the setup widget that edits it.
  static const std::map<std::string, std::string> kWidgets = {
      {"--tensor-model-parallel-size", "tp"},
      {"--context-parallel-size", "cp"},
      {"--cp-comm-type", "cp_comm_type"},
      {"--hierarchical-context-parallel-sizes", "cp_a2a_size"},
      {"--pipeline-model-parallel-size", "pp"},
      {"--data-parallel-size", "dp"},
      {"--gpus", "gpus"},
      {"--global-batch-size", "global_batch"},
      {"--micro-batch-size", "micro_batch"},
      {"--num-layers-per-virtual-pipeline-stage", "virtual_stages"},
      {"--num-virtual-stages-per-pipeline-rank", "virtual_stages"},
      {"--microbatch-group-size-per-virtual-pipeline-stage", "microbatch_group_size"},
      {"--decoder-first-pipeline-num-layers", "first_stage_layers"},
      {"--decoder-last-pipeline-num-layers", "last_stage_layers"},
      {"--account-for-embedding-in-pipeline-split", "account_for_embedding"},
      {"--account-for-loss-in-pipeline-split", "account_for_loss"},
      {"--pipeline-model-parallel-layout", "pipeline_layout"},
      {"--recompute-granularity", "recompute"},
      {"--recompute-method", "recompute"},
      {"--recompute-num-layers", "recompute"},
      {"--sequence-parallel", "sequence_parallel"},
      {"--use-distributed-optimizer", "distributed_optimizer"},
      {"--num-distributed-optimizer-instances", "num_distributed_optimizer_instances"},
      {"--tp-comm-overlap", "tp_comm_overlap"},
      {"--cross-entropy-loss-fusion", "cross_entropy_loss_fusion"},
      {"--cross-entropy-fusion-impl", "cross_entropy_loss_fusion"},
      {"--no-rope-fusion", "apply_rope_fusion"},
      {"--precision", "precision"},
      {"--attention-backend", "attention"},
      {"--costs", "costs"},
      {"--cluster", "cluster"},
      {"--model", "model"},
      {"--num-layers", "model"},
      {"--hidden-size", "model"},
      {"--num-attention-heads", "model"},
      {"--num-query-groups", "model"},
      {"--ffn-hidden-size", "model"},
      {"--kv-channels", "model"},
      {"--seq-length", "model"},
      {"--vocab-size", "model"},
      {"--expert-model-parallel-size", "ep"},
      {"--expert-tensor-parallel-size", "etp"},
      {"--num-experts", "num_experts"},
      {"--moe-router-topk", "moe_router_topk"},
      {"--moe-ffn-hidden-size", "moe_ffn_hidden_size"},
      {"--moe-shared-expert-intermediate-size", "moe_shared_expert_intermediate_size"},
      {"--moe-shared-expert-gate", "moe_shared_expert_intermediate_size"},
      {"--moe-layer-freq", "moe_layer_freq"},
      {"--moe-router-score-function", "moe_router_score_function"},
      {"--moe-router-num-groups", "moe_router_num_groups"},
      {"--moe-router-group-topk", "moe_router_group_topk"},
      {"--moe-router-topk-scaling-factor", "moe_router_score_function"},
      {"--multi-latent-attention", "multi_latent_attention"},
      {"--q-lora-rank", "q_lora_rank"},
      {"--kv-lora-rank", "kv_lora_rank"},
      {"--qk-head-dim", "qk_head_dim"},
      {"--qk-pos-emb-head-dim", "qk_pos_emb_head_dim"},
      {"--v-head-dim", "v_head_dim"},
      {"--mtp-num-layers", "mtp_num_layers"},
      {"--moe-token-dispatcher-type", "moe_token_dispatcher_type"},
      {"--moe-flex-dispatcher-backend", "moe_flex_dispatcher_backend"},
      {"--moe-enable-deepep", "moe_flex_dispatcher_backend"},  // Megatron-LM's older spelling of deepep
      {"--moe-grouped-gemm", "moe_grouped_gemm"},
      {"--moe-expert-capacity-factor", "moe_expert_capacity_factor"},
      {"--moe-pad-expert-input-to-capacity", "moe_pad_expert_input_to_capacity"},
      {"--moe-load-imbalance", "moe_load_imbalance"},
      {"--moe-shared-expert-overlap", "moe_shared_expert_overlap"},
      {"--overlap-moe-expert-parallel-comm", "overlap_moe_expert_parallel_comm"},
      // No widget shows the load balancing, the aux-loss weight or the drop policy (the panel keeps
      // them as the project holds them). Sinkhorn is refused beside a capacity factor and the drop
      // policy is read with one, so both land on the capacity factor, the field that changes the
      // outcome; the aux-loss weight's refusal has no such field and lands on the first MoE switch.
      {"--moe-router-load-balancing-type", "moe_expert_capacity_factor"},
      {"--moe-aux-loss-coeff", "moe_token_dispatcher_type"},
      {"--moe-token-drop-policy", "moe_expert_capacity_factor"},
  };
  const auto it = kWidgets.find(field);
  return it == kWidgets.end() ? "layout" : it->second;
}

SimulationOutcome run_simulation(const Project& project) {
  const auto start = std::chrono::steady_clock::now();
  SimulationOutcome out;
  try {
    // The CLI's own resolver: the same defaults, stack, checks and cost source as `simulate`.
    const ResolvedRun run = resolve_run(project.request());
    out.costs = run.measured;
    out.warnings = run.warnings;
    const std::unique_ptr<CostSource> costs = run.cost_source();
    SimOptions options;
    options.keep_timeline = true;  // the timeline and memory tabs need it
    options.every_rank = project.every_rank;
    options.train_tokens = project.train_tokens;
    options.reserve = project.reserve;
    auto result = std::make_shared<SimResult>(simulate(run.model, run.cluster, run.config, *costs, options));
    out.memory_curves = memory_timeline(*result, project.reserve);
    out.result = std::move(result);
  } catch (const SpecError& e) {
    out.error = e.what();
    out.error_field = setup_field_of(e.field());
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace cc::gui
