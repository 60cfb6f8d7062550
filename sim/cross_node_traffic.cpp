#include "sim/cross_node_traffic.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "sim/analytic_costs.h"
#include "sim/iteration_costs.h"
#include "sim/memory_model.h"
#include "sim/optimizer_instances.h"
#include "sim/parallel_layout.h"
#include "sim/step_plan.h"

namespace cc {

namespace {

// Prices through the analytic model and remembers every collective asked for, in order:
// the sizes the simulator's iteration uses, without restating its formulas here.
class RecordingCosts final : public CostSource {
 public:
  RecordingCosts(const ClusterSpec& cluster, Precision p) : inner_(cluster, p) {}
  OpCost compute(const ComputeOp& op) const override { return inner_.compute(op); }
  OpCost collective(const CollectiveOp& op) const override {
    recorded.push_back(op);
    return inner_.collective(op);
  }
  std::string describe() const override { return inner_.describe(); }
  mutable std::vector<CollectiveOp> recorded;

 private:
  AnalyticCosts inner_;
};

// What one member of each collective of `program` on group `runs_on` sends: to its ring
// neighbour for ring collectives (nccl-tests' bus factor times the buffer; a send/recv step
// its whole buffer), to each other member for an all-to-all (1/n of its buffer apiece), and for
// a relayed all-to-all (the flex dispatcher) one network copy per other node it reaches.
struct MemberBytes {
  double ring = 0;
  double all_to_all = 0;  // the buffer; each peer gets 1/n of it
  double relayed = 0;     // bytes that leave the NVLink domain, spread over the other domains
  void add(const MemberBytes& b, double times) {
    ring += times * b.ring;
    all_to_all += times * b.all_to_all;
    relayed += times * b.relayed;
  }
};
MemberBytes member_bytes(const OpProgram& program, CommGroup runs_on) {
  MemberBytes bytes;
  for (const ProgramStep& step : program) {
    if (!step.is_collective || step.comm.runs_on != runs_on) continue;
    if (step.comm.kind == CollectiveKind::AllToAll && step.comm.node_relay_share > 0)
      bytes.relayed += step.comm.bytes * step.comm.node_relay_share;
    else if (step.comm.kind == CollectiveKind::AllToAll)
      bytes.all_to_all += step.comm.bytes;
    else
      bytes.ring += step.comm.bytes * bus_bandwidth_factor(step.comm.kind, step.comm.group.size);
  }
  return bytes;
}

// What each member of stage s's groups of `runs_on` sends in one iteration: per microbatch,
// every chunk's forward and backward (dense and MoE layers each with their own programs, with
// what the recomputed ones rerun), and the TP re-gather after each pipeline transfer the
// chunk receives. `ops`: the layer programs with their groups placed on the cluster (the flex
// dispatcher's network share depends on the NVLink domains its EP group joins).
std::vector<MemberBytes> bytes_per_member(const StepPlan& plan, const LayerOps& ops,
                                          CommGroup runs_on) {
  auto of = [&](const OpProgram& p) { return member_bytes(p, runs_on); };
  std::vector<MemberBytes> out;
  for (const auto& stage : plan.chunks) {
    MemberBytes per_microbatch;
    for (const ChunkPlan& chunk : stage) {
      const int moe = chunk.moe_layers, moe_recomputed = chunk.moe_recomputed_layers;
      per_microbatch.add(of(ops.forward), chunk.layers.count - moe);
      per_microbatch.add(of(ops.backward), chunk.layers.count - moe);
      per_microbatch.add(of(ops.recompute), chunk.recomputed_layers() - moe_recomputed);
      if (moe > 0) {
        per_microbatch.add(of(ops.moe_forward), moe);
        per_microbatch.add(of(ops.moe_backward), moe);
        per_microbatch.add(of(ops.moe_recompute), moe_recomputed);
      }
      if (chunk.has_embedding) per_microbatch.add(of(ops.embedding_forward), 1), per_microbatch.add(of(ops.embedding_backward), 1);
      if (chunk.has_output) per_microbatch.add(of(ops.output_forward), 1), per_microbatch.add(of(ops.output_backward), 1);
      per_microbatch.add(of(ops.pipeline_receive), (chunk.previous_stage >= 0) + (chunk.next_stage >= 0));
    }
    MemberBytes per_iteration;
    per_iteration.add(per_microbatch, plan.microbatches);
    out.push_back(per_iteration);
  }
  return out;
}

std::vector<double> bytes_named(const std::vector<CollectiveOp>& ops, const std::string& name) {
  std::vector<double> out;
  for (const CollectiveOp& op : ops)
    if (name == op.name) out.push_back(op.bytes);
  return out;
}

// The bytes of collective `name` on each of `stages` stages (0 where a stage has none): the
// iteration prices each stage's DP collectives together, "dp.grad_reduce" first.
std::vector<double> per_stage(const std::vector<CollectiveOp>& ops, const std::string& name, int stages) {
  std::vector<double> out(static_cast<std::size_t>(stages), 0.0);
  int stage = -1;
  for (const CollectiveOp& op : ops) {
    if (std::string_view(op.name) == "dp.grad_reduce") ++stage;
    else if (name == op.name && stage >= 0 && stage < stages) out[static_cast<std::size_t>(stage)] += op.bytes;
  }
  return out;
}

}  // namespace

const char* to_string(TrafficKind k) {
  switch (k) {
    case TrafficKind::Pipeline: return "pipeline";
    case TrafficKind::DataParallel: return "data parallel";
    case TrafficKind::TensorParallel: return "tensor parallel";
    case TrafficKind::Embedding: return "embedding sync";
    case TrafficKind::ContextParallel: return "context parallel";
    case TrafficKind::ExpertParallel: return "expert parallel";
  }
  return "?";
}

CrossNodeTraffic cross_node_traffic(const ModelSpec& m, const ClusterSpec& cluster, const ParallelConfig& c) {
  RecordingCosts recorder(cluster, c.precision);
  price_iteration(m, cluster, c, recorder);
  const ParallelGrid grid = c.grid();
  auto node = [&](int rank) { return rank / cluster.gpus_per_node; };
  // kDenseGridOrder: coordinates tp, cp, dp, pp.
  auto rank_at = [&](int t, int cp, int d, int s) { return grid.rank({t, cp, d, s}); };

  // Bytes from rank a to rank b take the network only between NVLink domains (on a rack-scale
  // system two nodes of one domain talk over NVLink); they are booked to the nodes whose NICs
  // carry them.
  std::map<std::tuple<int, int, TrafficKind>, double> pairs;
  auto add = [&](int rank_a, int rank_b, TrafficKind kind, double bytes) {
    if (cluster.same_nvlink_domain(rank_a, rank_b) || bytes <= 0) return;
    const int a = node(rank_a), b = node(rank_b);
    pairs[{std::min(a, b), std::max(a, b), kind}] += bytes;
  };
  // A ring over `members` in their order: each sends `bytes` to the next.
  auto ring = [&](const std::vector<int>& members, TrafficKind kind, double bytes) {
    for (std::size_t i = 0; i < members.size(); ++i) add(members[i], members[(i + 1) % members.size()], kind, bytes);
  };

  // Pipeline: each microbatch crosses every stage boundary once per chunk forward (its
  // activation) and once backward (its gradient); with interleaving, chunk k's last stage
  // also feeds chunk k+1's first stage. Each TP (and CP) rank sends its share.
  const StepPlan plan = step_plan(m, c);
  const LayerOps placed_ops =
      layer_ops(make_layer_shape(m, c, place_layer_groups(c, cluster.nvlink_domain_size())), recompute_scope(c));
  const std::vector<double> p2p = bytes_named(recorder.recorded, "p2p");
  if (c.pp > 1 && !p2p.empty()) {
    const double per_pass = 2.0 * p2p.front() * c.num_microbatches();  // forward + backward
    // How many of each stage's chunks feed a chunk on each other stage.
    std::vector<std::map<int, int>> transfers(static_cast<std::size_t>(c.pp));
    for (int s = 0; s < c.pp; ++s)
      for (const ChunkPlan& chunk : plan.chunks[static_cast<std::size_t>(s)])
        if (chunk.next_stage >= 0) ++transfers[static_cast<std::size_t>(s)][chunk.next_stage];
    for (int d = 0; d < c.dp; ++d)
      for (int cp = 0; cp < c.cp; ++cp)
        for (int t = 0; t < c.tp; ++t)
          for (int s = 0; s < c.pp; ++s)
            for (const auto& [next, count] : transfers[static_cast<std::size_t>(s)])
              add(rank_at(t, cp, d, s), rank_at(t, cp, d, next), TrafficKind::Pipeline, per_pass * count);
  }

  // Data parallel: a ring over DP x CP (in rank order) per (TP rank, stage); each member sends
  // its share of the buffer to the next: 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter
  // and for the distributed optimizer's parameter all-gather. The partial distributed optimizer
  // rings inside each instance's block, then all-reduces the shards over the members at the same
  // place in each block.
  const std::vector<double> grads = bytes_named(recorder.recorded, "dp.grad_reduce");
  const std::vector<double> params = bytes_named(recorder.recorded, "dp.param_gather");
  const std::vector<double> across = bytes_named(recorder.recorded, "dp.grad_all_reduce_across_instances");
  if (gradient_group_size(c) > 1) {
    const int instances = c.distributed_optimizer ? c.distributed_optimizer_instances : 1;
    const auto block = static_cast<std::size_t>(gradient_group_size(c) / instances);
    const double n = static_cast<double>(block);
    const double k = instances;
    for (int s = 0; s < c.pp; ++s) {
      const auto i = static_cast<std::size_t>(s);
      double per_member = i < grads.size() ? grads[i] * (c.distributed_optimizer ? (n - 1) / n : 2 * (n - 1) / n) : 0;
      if (c.distributed_optimizer && i < params.size()) per_member += params[i] * (n - 1) / n;
      for (int t = 0; t < c.tp; ++t) {
        const std::vector<int> members = grid.group(rank_at(t, 0, 0, s), kGradientGroup);
        for (std::size_t b = 0; b * block < members.size(); ++b)
          ring(instance_block(members, block, b), TrafficKind::DataParallel, per_member);
        if (instances == 1 || i >= across.size()) continue;
        for (std::size_t j = 0; j < block; ++j)
          ring(across_instances(members, block, j), TrafficKind::DataParallel, across[i] * 2 * (k - 1) / k);
      }
    }
  }

  // Routed experts' gradients and parameter gathers: a ring over each expert-data-parallel
  // group of the expert grid (per ETP and EP rank and stage), as the dense ones above.
  const ParallelGrid experts = c.expert_grid();
  if (m.moe.enabled() && c.expert_dp() > 1) {
    const std::vector<double> expert_grads = per_stage(recorder.recorded, "edp.grad_reduce", c.pp);
    const std::vector<double> expert_params = per_stage(recorder.recorded, "edp.param_gather", c.pp);
    const double n = c.expert_dp();
    for (const std::vector<int>& group : experts.groups("edp")) {
      const auto s = static_cast<std::size_t>(experts.coord(group.front(), "pp"));
      const double per_member = c.distributed_optimizer ? (expert_grads[s] + expert_params[s]) * (n - 1) / n
                                                        : expert_grads[s] * 2 * (n - 1) / n;
      ring(group, TrafficKind::DataParallel, per_member);
    }
  }

  // Tensor parallel: a ring in TP order per (CP rank, replica, stage); only the hops between
  // NVLink domains show, so a group inside one domain adds nothing.
  const bool tp_spans_nodes = place_in_nvlink_domains(grid.group(0, "tp"), cluster).nodes > 1;
  if (c.tp > 1 && tp_spans_nodes) {
    const std::vector<MemberBytes> tp_bytes = bytes_per_member(plan, placed_ops, CommGroup::Tensor);
    for (const std::vector<int>& group : grid.groups("tp"))
      ring(group, TrafficKind::TensorParallel, tp_bytes[static_cast<std::size_t>(grid.coord(group.front(), "pp"))].ring);
  }

  // Context parallel: in every CP group (per TP rank, replica and stage), the K,V ring steps,
  // all-gathers and reduce-scatters as rings in CP order, the all-to-alls peer to peer.
  if (c.cp > 1) {
    const int a2a = cp_all_to_all_size(c);
    for (CommGroup runs_on : {CommGroup::Context, CommGroup::ContextAllToAll, CommGroup::ContextRing}) {
      const std::vector<MemberBytes> cp_bytes = bytes_per_member(plan, placed_ops, runs_on);
      for (const std::vector<int>& group : grid.groups("cp")) {
        const MemberBytes& bytes = cp_bytes[static_cast<std::size_t>(grid.coord(group.front(), "pp"))];
        for (const std::vector<int>& members : context_parallel_subgroups(group, runs_on, a2a)) {
          ring(members, TrafficKind::ContextParallel, bytes.ring);
          const double share = bytes.all_to_all / static_cast<double>(members.size());
          for (int from : members)
            for (int to : members)
              if (from != to) add(from, to, TrafficKind::ContextParallel, share);
        }
      }
    }
  }

  // Expert parallel: in every EP group of the expert grid (per ETP rank, expert replica and
  // stage), the MoE layers' dispatches and combines. An all-to-all sends 1/n of its buffer to
  // each other member; the flex dispatcher's relayed copies leave once per other NVLink domain
  // the group joins, spread evenly over them (uniform routing); the ETP gathers and
  // reduce-scatters (or the allgather dispatcher's collectives over ETP x EP) run as rings in
  // group order. The priced buffers are the busiest EP rank's (the load imbalance paces the
  // exchange); an average member moves 1/imbalance of them, and that is what the links carry.
  if (m.moe.enabled() && c.ep * c.expert_tp() > 1) {
    const std::vector<MemberBytes> ep_bytes = bytes_per_member(plan, placed_ops, CommGroup::Expert);
    const double mean = c.moe.dispatcher == TokenDispatcher::AllGather ? 1.0 : 1.0 / moe_load_imbalance(c);
    auto stage_bytes = [&](const std::vector<int>& group) {
      return ep_bytes[static_cast<std::size_t>(experts.coord(group.front(), "pp"))];
    };
    for (const std::vector<int>& group : experts.groups("ep")) {
      const MemberBytes& bytes = stage_bytes(group);
      // Members per node and one member per other NVLink domain: the pairs the exchange joins.
      std::map<int, std::vector<int>> by_node;
      std::map<int, int> domain_rank;
      for (const int r : group) by_node[node(r)].push_back(r), domain_rank.emplace(cluster.nvlink_domain_of(r), r);
      const double share = mean * bytes.all_to_all / static_cast<double>(group.size());
      for (auto a = by_node.begin(); a != by_node.end(); ++a)
        for (auto b = std::next(a); b != by_node.end(); ++b)  // both directions
          add(a->second.front(), b->second.front(), TrafficKind::ExpertParallel,
              2.0 * share * static_cast<double>(a->second.size() * b->second.size()));
      if (bytes.relayed > 0 && domain_rank.size() > 1) {
        const double per_domain = mean * bytes.relayed / static_cast<double>(domain_rank.size() - 1);
        for (const int from : group)
          for (const auto& [domain, to] : domain_rank)
            if (domain != cluster.nvlink_domain_of(from)) add(from, to, TrafficKind::ExpertParallel, per_domain);
      }
    }
    const char* rings = c.moe.dispatcher == TokenDispatcher::AllGather ? "etp-ep" : "etp";
    for (const std::vector<int>& group : experts.groups(rings))
      ring(group, TrafficKind::ExpertParallel, mean * stage_bytes(group).ring);
  }

  // Tied embeddings: the first and last stage's TP rank t all-reduce the embedding gradient
  // shard (two members: each sends the whole buffer once).
  const std::vector<double> embedding = bytes_named(recorder.recorded, "embedding_grad_sync");
  if (!embedding.empty())
    for (int d = 0; d < c.dp; ++d)
      for (int cp = 0; cp < c.cp; ++cp)
        for (int t = 0; t < c.tp; ++t)
          add(rank_at(t, cp, d, 0), rank_at(t, cp, d, c.pp - 1), TrafficKind::Embedding, 2 * embedding.front());

  CrossNodeTraffic out;
  std::map<int, double> per_node;
  for (const auto& [key, bytes] : pairs) {
    const auto& [a, b, kind] = key;
    out.links.push_back({a, b, kind, bytes});
    out.total[kind] += bytes;
    per_node[a] += bytes;
    per_node[b] += bytes;
  }
  for (const auto& [n, bytes] : per_node)
    if (bytes > out.busiest_node_bytes) {
      out.busiest_node_bytes = bytes;
      out.busiest_node = n;
    }
  // Both directions share the node's NICs; each NIC moves bandwidth_gbs per direction.
  const double node_gbs = 2.0 * cluster.nics_per_node * cluster.inter_node.bandwidth_gbs;
  out.busiest_node_seconds = node_gbs > 0 ? out.busiest_node_bytes / (node_gbs * 1e9) : 0;
  out.tp_spans_nodes = tp_spans_nodes;
  return out;
}

}  // namespace cc
