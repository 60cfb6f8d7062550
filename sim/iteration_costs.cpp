#include "sim/iteration_costs.h"

#include <algorithm>

#include "sim/memory_model.h"
#include "sim/optimizer_instances.h"
#include "sim/parallel_layout.h"

namespace cc {

namespace {

// A pass priced as one program; `recompute` is the part of it that reruns forward work.
// After a device sync (a blocking pipeline exchange) the pass starts with host and device
// both idle: its flow-shop span. Without one the host has run ahead through the previous
// passes, and the pass costs the slower of the two machines.
PassCost as_pass(const ProgramCost& whole, bool standing_start, const ProgramCost& recompute = {}) {
  PassCost p;
  p.compute_s = whole.compute_s - recompute.compute_s;
  p.recompute_s = recompute.device();
  p.tp_comm_s = whole.comm_exposed_s - recompute.comm_exposed_s;
  p.ep_comm_s = whole.ep_comm_exposed_s - recompute.ep_comm_exposed_s;
  p.cp_comm_s = whole.cp_comm_exposed_s - recompute.cp_comm_exposed_s;
  p.cp_transfer_s = whole.cp_comm_s;
  p.measured_s = whole.measured_s;
  p.host_s = whole.host_s;
  p.span_s = standing_start ? whole.span_s : std::max(whole.device(), whole.host_s);
  return p;
}

}  // namespace

LayerCosts price_layers(const ModelSpec& m, const ClusterSpec& cluster, const ParallelConfig& c,
                        const CostSource& costs) {
  const LayerShape shape = make_layer_shape(m, c, place_layer_groups(c, cluster.nvlink_domain_size()));
  // The plan's op list, with both reruns priced: a search reuses these prices across
  // recompute choices.
  const LayerOps ops = layer_ops(shape, RecomputeScope::WholeLayer);
  LayerCosts l;
  l.forward = cost_of(ops.forward, costs);
  l.backward = cost_of(ops.backward, costs);
  l.full_recompute = cost_of(ops.recompute, costs);
  l.selective_recompute =
      cost_of(recompute_program(shape, recompute_scope(RecomputeGranularity::Selective, c.attention)), costs);
  l.embedding_forward = cost_of(ops.embedding_forward, costs);
  l.embedding_backward = cost_of(ops.embedding_backward, costs);
  l.output_forward = cost_of(ops.output_forward, costs);
  l.output_backward = cost_of(ops.output_backward, costs);
  if (!ops.moe_forward.empty()) {
    const LayerShape moe = moe_layer_shape(shape);
    l.moe_forward = cost_of(ops.moe_forward, costs);
    l.moe_backward = cost_of(ops.moe_backward, costs);
    l.moe_full_recompute = cost_of(ops.moe_recompute, costs);
    l.moe_selective_recompute =
        cost_of(recompute_program(moe, recompute_scope(RecomputeGranularity::Selective, c.attention)), costs);
  }
  return l;
}

IterationCosts price_iteration(const ModelSpec& m, const ClusterSpec& cluster, const ParallelConfig& c,
                               const CostSource& costs) {
  return price_iteration(m, cluster, c, costs, price_layers(m, cluster, c, costs));
}

IterationCosts price_iteration(const ModelSpec& m, const ClusterSpec& cluster, const ParallelConfig& c,
                               const CostSource& costs, const LayerCosts& l) {
  IterationCosts out;
  const ParallelGrid grid = c.grid();
  auto placed = [&](const std::vector<int>& ranks) { return place_in_nvlink_domains(ranks, cluster); };
  const GroupPlacement dp_group = placed(grid.group(0, kGradientGroup));
  const LayerShape shape = make_layer_shape(m, c, place_layer_groups(c, cluster.nvlink_domain_size()));
  auto track_op = [&](const OpCost& oc) {
    out.measured_s += oc.measured ? oc.seconds : 0;
    out.modelled_s += oc.seconds;
    return oc.seconds;
  };
  const ProgramCost& fwd = l.forward;
  const ProgramCost& bwd = l.backward;
  const ProgramCost recompute = l.recompute_for(c);
  const ProgramCost& emb_f = l.embedding_forward;
  const ProgramCost& emb_b = l.embedding_backward;
  const ProgramCost& out_f = l.output_forward;
  const ProgramCost& out_b = l.output_backward;

  const bool synced = c.pp > 1 && pipeline_sends_block(c);
  out.chunks.resize(static_cast<std::size_t>(c.pp));
  for (int s = 0; s < c.pp; ++s) {
    for (int k = 0; k < c.virtual_stages; ++k) {
      const ChunkPlan plan = chunk_plan(m, c, s, k);
      ChunkCosts chunk;
      chunk.layers = plan.layers.count;
      const int n = chunk.layers;
      const int recomputed = plan.recomputed_layers();
      // MoE layers among the chunk's, and among its recomputed ones. Each kind is priced as one
      // run of its layers: the pass's device time is the same in any order, and so is its span
      // while the device stays busier than the host.
      const int moe = plan.moe_layers, moe_recomputed = plan.moe_recomputed_layers;
      const ProgramCost moe_recompute = l.recompute_for(c, true);
      const bool first = plan.has_embedding, last = plan.has_output;
      // Each pass in the order it runs: the stack's per-pass host work (schedule, p2p setup,
      // autograd) first, then embedding, layers, output layer (backward the other way round;
      // a recomputed layer reruns its forward just before its backward, and under the block
      // method the recomputed layers are the chunk's first, so they come last in backward).
      ProgramCost forward = ProgramCost::host_only(costs.pass_overhead_s());
      if (first) forward += emb_f;
      forward += fwd.repeated(n - moe);
      if (moe > 0) forward += l.moe_forward.repeated(moe);
      if (last) forward += out_f;
      ProgramCost recompute_then_backward = recompute;
      recompute_then_backward += bwd;
      ProgramCost backward = ProgramCost::host_only(costs.pass_overhead_s());
      if (last) backward += out_b;
      backward += bwd.repeated(n - moe - (recomputed - moe_recomputed));
      backward += recompute_then_backward.repeated(recomputed - moe_recomputed);
      ProgramCost recomputed_work = recompute.repeated(recomputed - moe_recomputed);
      if (moe > 0) {
        ProgramCost moe_recompute_then_backward = moe_recompute;
        moe_recompute_then_backward += l.moe_backward;
        backward += l.moe_backward.repeated(moe - moe_recomputed);
        backward += moe_recompute_then_backward.repeated(moe_recomputed);
        recomputed_work += moe_recompute.repeated(moe_recomputed);
      }
      if (first) backward += emb_b;
      chunk.forward = as_pass(forward, synced);
      chunk.backward = as_pass(backward, synced, recomputed_work);
      // Each chunk runs once per microbatch: weight the measured share accordingly.
      out.measured_s += c.num_microbatches() * (chunk.forward.measured_s + chunk.backward.measured_s);
      out.modelled_s += c.num_microbatches() * (chunk.forward.total() + chunk.backward.total());
      out.chunks[static_cast<std::size_t>(s)].push_back(chunk);
    }
  }

  // Pipeline transfer: Megatron sends 1/t of the activation per TP rank (scatter-gather
  // optimisation, or the SP shard) and re-gathers it over NVLink when SP is off. Every group
  // is placed on NVLink domains: inside one its collectives ride NVLink.
  if (c.pp > 1) {
    const int next_stage_rank = grid.rank({0, 0, 0, 1});  // kDenseGridOrder: tp, cp, dp, pp
    const GroupPlacement pair = placed({0, next_stage_rank});
    const double activation = shape.elem * static_cast<double>(shape.tokens * shape.h);
    out.p2p_s = track_op(costs.collective({"p2p", CollectiveKind::SendRecv, Phase::Forward, activation / c.tp, pair}));
    const ProgramCost receive = cost_of(pipeline_receive(shape), costs);
    out.p2p_s += receive.device();
    out.measured_s += receive.measured_s;
    out.modelled_s += receive.device();
  }

  // Data parallel: fp32 main gradients all-reduced (or reduce-scattered with the distributed
  // optimizer) over DP x CP in buckets of max(40M, 1M·DP) parameters: Megatron-Core DDP's
  // default sizes them by its data-parallel group without context parallelism (dp_group), though
  // it reduces over the group with it.
  out.bucket_params = std::max(40e6, 1e6 * c.dp);
  const CollectiveKind reduce_kind = c.distributed_optimizer ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;
  const double shard = optimizer_shard_size(c);
  // The partial distributed optimizer (instances > 1) reduce-scatters and gathers inside each
  // instance's block of the group (Megatron-Core's intra-instance group: consecutive members of
  // it), then all-reduces each shard across the blocks (the members at the same place in each).
  const int instances = c.distributed_optimizer ? c.distributed_optimizer_instances : 1;
  GroupPlacement shard_group = dp_group, across_group;
  if (instances > 1) {
    const std::vector<int> members = grid.group(0, kGradientGroup);
    const auto block = static_cast<std::size_t>(shard);
    shard_group = placed(instance_block(members, block, 0));
    across_group = placed(across_instances(members, block, 0));
  }
  // Seconds to reduce `bytes` of gradients (`across` names the all-reduce between instances);
  // `track` counts them in the measured/modelled shares.
  auto reduce_gradients = [&](const char* name, const char* across, double bytes, bool track) {
    auto seconds = [&](const OpCost& oc) { return track ? track_op(oc) : oc.seconds; };
    double s = seconds(costs.collective({name, reduce_kind, Phase::Backward, bytes, shard_group}));
    if (instances > 1)
      s += seconds(costs.collective({across, CollectiveKind::AllReduce, Phase::Backward, bytes / shard, across_group}));
    return s;
  };
  // Routed experts' gradients (and parameter gathers) go over their expert-data-parallel group
  // (EDP, expert grid), as Megatron-Core's DDP keeps expert parameters in buffers of their own.
  const bool experts = m.moe.enabled();
  const GroupPlacement edp_group = experts ? placed(c.expert_grid().group(0, "edp")) : GroupPlacement{};
  const double expert_shard = c.distributed_optimizer ? c.expert_dp() : 1.0;
  for (int s = 0; s < c.pp; ++s) {
    const std::int64_t params = stage_parameters(m, c, s);
    const std::int64_t expert_params = stage_expert_parameters(m, c, s);
    const double dense_params = static_cast<double>(params - expert_params);
    out.stage_params.push_back(params);
    const double bytes = dense_params * c.main_grad_bytes();
    const double expert_bytes = static_cast<double>(expert_params) * c.main_grad_bytes();
    double reduce = reduce_gradients("dp.grad_reduce", "dp.grad_all_reduce_across_instances", bytes, true);
    if (expert_params > 0)
      reduce += track_op(
          costs.collective({"edp.grad_reduce", reduce_kind, Phase::Backward, expert_bytes, edp_group}));
    out.grad_reduce_s.push_back(reduce);
    out.bucket_reduce_s.push_back(reduce_gradients("dp.grad_reduce_bucket", "dp.grad_reduce_bucket_across_instances",
                                                   out.bucket_params * c.main_grad_bytes(), false));
    // Adam over the local shard: read grad, master, two moments; write master, moments and
    // the bf16 weight (30 B/param); the gradient-norm pass reads the shard's fp32 grads
    // (4 B) and the grad buffer is zeroed for the next iteration (a main-gradient element over all of it).
    const double local = dense_params / shard + static_cast<double>(expert_params) / expert_shard;
    ComputeOp step{"optimizer.adam", OpKind::Optimizer, Phase::Forward,
                   static_cast<std::int64_t>(local), 1, 1, 1, 12.0 * local,
                   local * 34.0 + static_cast<double>(params) * priced_main_grad_bytes(c)};
    // The stack's per-iteration host work (launches, loss reduction, logging, data loader)
    // is charged with the optimizer step that closes the iteration. The step's own launches
    // (one per tensor group) run ahead of its kernels, so it takes the longer of the two.
    const OpCost adam = costs.compute(step);
    out.optimizer_s.push_back(std::max(track_op(adam), adam.host_s) + costs.iteration_overhead_s());
    double gather = 0;
    if (c.distributed_optimizer) {
      // FP8 weights (--fp8-param-gather) are gathered at one byte each, routed experts' among them.
      const double experts_fp8 = c.fp8_param_gather ? static_cast<double>(expert_params) : 0.0;
      const double dense_fp8 = static_cast<double>(fp8_weight_parameters(m, c, s)) - experts_fp8;
      gather = track_op(costs.collective({"dp.param_gather", CollectiveKind::AllGather, Phase::Forward,
                                          weight_bytes(c, dense_params, dense_fp8), shard_group}));
      if (expert_params > 0)
        gather += track_op(costs.collective({"edp.param_gather", CollectiveKind::AllGather, Phase::Forward,
                                             weight_bytes(c, static_cast<double>(expert_params), experts_fp8),
                                             edp_group}));
    }
    out.param_gather_s.push_back(gather);
  }
  if (c.pp > 1 && m.tied_embeddings) {
    const GroupPlacement ends = placed({0, grid.rank({0, 0, 0, c.pp - 1})});
    const double bytes = static_cast<double>(shape.vocab * shape.h) * c.main_grad_bytes();
    out.embedding_sync_s =
        track_op(costs.collective({"embedding_grad_sync", CollectiveKind::AllReduce, Phase::Backward, bytes, ends}));
  }
  out.grad_norm_sync_s = track_op(costs.collective(
      {"grad_norm", CollectiveKind::AllReduce, Phase::Backward, 8.0, placed(grid.group(0, "tp-pp"))}));
  return out;
}

}  // namespace cc

namespace cc {

LayerTimes layer_times(const ModelSpec& m, const ClusterSpec& cluster, const ParallelConfig& c, const CostSource& costs) {
  const LayerCosts l = price_layers(m, cluster, c, costs);
  LayerTimes t;
  t.forward_s = l.forward.total();
  t.recompute_s = l.recompute_for(c).total();
  t.backward_s = l.backward.total() + t.recompute_s;
  return t;
}

}  // namespace cc
