#include "sim/cross_node_traffic.h"

#include <algorithm>

#include "sim/analytic_costs.h"
#include "sim/iteration_costs.h"
#include "sim/memory_model.h"
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
// its whole buffer), to each other member for an all-to-all (1/n of its buffer apiece).
struct MemberBytes {
  double ring = 0;
  double all_to_all = 0;  // the buffer; each peer gets 1/n of it
};
MemberBytes member_bytes(const OpProgram& program, CommGroup runs_on) {
  MemberBytes bytes;
  for (const ProgramStep& step : program) {
    if (!step.is_collective || step.comm.runs_on != runs_on) continue;
    if (step.comm.kind == CollectiveKind::AllToAll) bytes.all_to_all += step.comm.bytes;
    else bytes.ring += step.comm.bytes * bus_bandwidth_factor(step.comm.kind, step.comm.group.size);
  }
  return bytes;
}

// What each member of stage s's groups of `runs_on` sends in one iteration: per microbatch,
// every chunk's forward and backward (with what its recomputed layers rerun), and the TP
// re-gather after each pipeline transfer the chunk receives.
std::vector<MemberBytes> bytes_per_member(const StepPlan& plan, CommGroup runs_on) {
  const LayerOps& ops = plan.ops;
  auto of = [&](const OpProgram& p) { return member_bytes(p, runs_on); };
  std::vector<MemberBytes> out;
  for (const auto& stage : plan.chunks) {
    MemberBytes per_microbatch;
    auto add = [&](const MemberBytes& b, double times) {
      per_microbatch.ring += times * b.ring;
      per_microbatch.all_to_all += times * b.all_to_all;
    };
    for (const ChunkPlan& chunk : stage) {
      add(of(ops.forward), chunk.layers.count);
      add(of(ops.backward), chunk.layers.count);
      add(of(ops.recompute), chunk.recomputed_layers());
      if (chunk.has_embedding) add(of(ops.embedding_forward), 1), add(of(ops.embedding_backward), 1);
      if (chunk.has_output) add(of(ops.output_forward), 1), add(of(ops.output_backward), 1);
      add(of(ops.pipeline_receive), (chunk.previous_stage >= 0) + (chunk.next_stage >= 0));
    }
    per_microbatch.ring *= plan.microbatches;
    per_microbatch.all_to_all *= plan.microbatches;
    out.push_back(per_microbatch);
  }
  return out;
}

std::vector<double> bytes_named(const std::vector<CollectiveOp>& ops, const std::string& name) {
  std::vector<double> out;
  for (const CollectiveOp& op : ops)
    if (name == op.name) out.push_back(op.bytes);
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
  // and for the distributed optimizer's parameter all-gather.
  const std::vector<double> grads = bytes_named(recorder.recorded, "dp.grad_reduce");
  const std::vector<double> params = bytes_named(recorder.recorded, "dp.param_gather");
  if (gradient_group_size(c) > 1) {
    const double n = gradient_group_size(c);
    for (int s = 0; s < c.pp; ++s) {
      const auto i = static_cast<std::size_t>(s);
      double per_member = i < grads.size() ? grads[i] * (c.distributed_optimizer ? (n - 1) / n : 2 * (n - 1) / n) : 0;
      if (c.distributed_optimizer && i < params.size()) per_member += params[i] * (n - 1) / n;
      for (int t = 0; t < c.tp; ++t)
        ring(grid.group(rank_at(t, 0, 0, s), kGradientGroup), TrafficKind::DataParallel, per_member);
    }
  }

  // Tensor parallel: a ring in TP order per (CP rank, replica, stage); only the hops between
  // NVLink domains show, so a group inside one domain adds nothing.
  const bool tp_spans_nodes = place_in_nvlink_domains(grid.group(0, "tp"), cluster).nodes > 1;
  if (c.tp > 1 && tp_spans_nodes) {
    const std::vector<MemberBytes> tp_bytes = bytes_per_member(plan, CommGroup::Tensor);
    for (const std::vector<int>& group : grid.groups("tp"))
      ring(group, TrafficKind::TensorParallel, tp_bytes[static_cast<std::size_t>(grid.coord(group.front(), "pp"))].ring);
  }

  // Context parallel: in every CP group (per TP rank, replica and stage), the K,V ring steps,
  // all-gathers and reduce-scatters as rings in CP order, the all-to-alls peer to peer.
  if (c.cp > 1) {
    const int a2a = cp_all_to_all_size(c);
    for (CommGroup runs_on : {CommGroup::Context, CommGroup::ContextAllToAll, CommGroup::ContextRing}) {
      const std::vector<MemberBytes> cp_bytes = bytes_per_member(plan, runs_on);
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
