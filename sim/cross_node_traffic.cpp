#include "sim/cross_node_traffic.h"

#include <algorithm>

#include "sim/analytic_costs.h"
#include "sim/iteration_costs.h"
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

// Bytes one member of each TP collective of `program` sends to its ring neighbour
// (nccl-tests' bus factor times the buffer). Point-to-point sends are pipeline traffic.
double tp_ring_bytes(const OpProgram& program) {
  double bytes = 0;
  for (const ProgramStep& step : program)
    if (step.is_collective && step.comm.kind != CollectiveKind::SendRecv)
      bytes += step.comm.bytes * bus_bandwidth_factor(step.comm.kind, step.comm.group.size);
  return bytes;
}

// Bytes each rank of stage s's TP groups sends to its ring neighbour in one iteration: per
// microbatch, every chunk's forward and backward (with what its recomputed layers rerun),
// and the re-gather after each pipeline transfer the chunk receives.
std::vector<double> tp_bytes_per_member(const StepPlan& plan) {
  const LayerOps& ops = plan.ops;
  const double layer_forward = tp_ring_bytes(ops.forward), layer_backward = tp_ring_bytes(ops.backward);
  const double recompute = tp_ring_bytes(ops.recompute), receive = tp_ring_bytes(ops.pipeline_receive);
  std::vector<double> out;
  for (const auto& stage : plan.chunks) {
    double per_microbatch = 0;
    for (const ChunkPlan& chunk : stage) {
      per_microbatch += chunk.layers.count * (layer_forward + layer_backward) + chunk.recomputed_layers() * recompute;
      if (chunk.has_embedding) per_microbatch += tp_ring_bytes(ops.embedding_forward) + tp_ring_bytes(ops.embedding_backward);
      if (chunk.has_output) per_microbatch += tp_ring_bytes(ops.output_forward) + tp_ring_bytes(ops.output_backward);
      per_microbatch += ((chunk.previous_stage >= 0) + (chunk.next_stage >= 0)) * receive;
    }
    out.push_back(per_microbatch * plan.microbatches);
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
  }
  return "?";
}

CrossNodeTraffic cross_node_traffic(const ModelSpec& m, const ClusterSpec& cluster, const ParallelConfig& c) {
  RecordingCosts recorder(cluster, c.precision);
  price_iteration(m, cluster, c, recorder);
  const ParallelLayout layout(c.tp, c.dp, c.pp);
  const int g = cluster.gpus_per_node;
  auto node = [&](RankCoords rc) { return layout.rank(rc) / g; };

  std::map<std::tuple<int, int, TrafficKind>, double> pairs;
  auto add = [&](int a, int b, TrafficKind kind, double bytes) {
    if (a == b || bytes <= 0) return;
    pairs[{std::min(a, b), std::max(a, b), kind}] += bytes;
  };

  // Pipeline: each microbatch crosses every stage boundary once per chunk forward (its
  // activation) and once backward (its gradient); with interleaving, chunk k's last stage
  // also feeds chunk k+1's first stage. Each TP rank sends its 1/t share.
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
      for (int t = 0; t < c.tp; ++t)
        for (int s = 0; s < c.pp; ++s)
          for (const auto& [next, count] : transfers[static_cast<std::size_t>(s)])
            add(node({t, d, s}), node({t, d, next}), TrafficKind::Pipeline, per_pass * count);
  }

  // Data parallel: a ring in DP order per (TP rank, stage); each member sends its share of
  // the buffer to the next: 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter and for the
  // distributed optimizer's parameter all-gather.
  const std::vector<double> grads = bytes_named(recorder.recorded, "dp.grad_reduce");
  const std::vector<double> params = bytes_named(recorder.recorded, "dp.param_gather");
  if (c.dp > 1) {
    const double n = c.dp;
    for (int s = 0; s < c.pp; ++s) {
      const auto i = static_cast<std::size_t>(s);
      double per_member = i < grads.size() ? grads[i] * (c.distributed_optimizer ? (n - 1) / n : 2 * (n - 1) / n) : 0;
      if (c.distributed_optimizer && i < params.size()) per_member += params[i] * (n - 1) / n;
      for (int t = 0; t < c.tp; ++t)
        for (int d = 0; d < c.dp; ++d) add(node({t, d, s}), node({t, (d + 1) % c.dp, s}), TrafficKind::DataParallel, per_member);
    }
  }

  // Tensor parallel: a ring in TP order per (replica, stage); only the hops between nodes
  // show, so a group inside one node adds nothing.
  if (c.tp > 1 && place_group(layout.tp_group(0), g).nodes > 1) {
    const std::vector<double> tp_bytes = tp_bytes_per_member(plan);
    for (int s = 0; s < c.pp; ++s)
      for (int d = 0; d < c.dp; ++d)
        for (int t = 0; t < c.tp; ++t)
          add(node({t, d, s}), node({(t + 1) % c.tp, d, s}), TrafficKind::TensorParallel,
              tp_bytes[static_cast<std::size_t>(s)]);
  }

  // Tied embeddings: the first and last stage's TP rank t all-reduce the embedding gradient
  // shard (two members: each sends the whole buffer once).
  const std::vector<double> embedding = bytes_named(recorder.recorded, "embedding_grad_sync");
  if (!embedding.empty())
    for (int d = 0; d < c.dp; ++d)
      for (int t = 0; t < c.tp; ++t)
        add(node({t, d, 0}), node({t, d, c.pp - 1}), TrafficKind::Embedding, 2 * embedding.front());

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
  out.tp_spans_nodes = place_group(layout.tp_group(0), g).nodes > 1;
  return out;
}

}  // namespace cc
