#include "sim/layout_validation.h"
#include "sim/simulator.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/error.h"
#include "sim/event_engine.h"
#include "sim/flops.h"
#include "sim/iteration_costs.h"
#include "sim/layer_program.h"
#include "sim/memory_model.h"
#include "sim/parallel_layout.h"
#include "sim/pipeline_schedule.h"
#include "sim/step_plan.h"

namespace cc {

const char* to_string(TaskKind k) {
  switch (k) {
    case TaskKind::Forward: return "forward";
    case TaskKind::Backward: return "backward";
    case TaskKind::Send: return "send";
    case TaskKind::GradReduce: return "grad_reduce";
    case TaskKind::EmbeddingSync: return "embedding_sync";
    case TaskKind::GradNorm: return "grad_norm";
    case TaskKind::Optimizer: return "optimizer";
    case TaskKind::ParamGather: return "param_gather";
  }
  return "?";
}

namespace {

// What a task is, for the breakdown and the timeline.
struct TaskInfo {
  TaskKind kind;
  int gang;  // pipeline stage in symmetric mode; stage·dp + replica in every-rank mode
  int microbatch = -1;
  int chunk = 0;
  PassCost cost;  // compute tasks: where their duration goes
};

class IterationGraph {
 public:
  IterationGraph(const ModelSpec& m, const ClusterSpec& cluster, const ParallelConfig& c, const IterationCosts& costs,
                 const SimOptions& o)
      : m_(m),
        cluster_(cluster),
        c_(c),
        costs_(costs),
        replicas_(o.every_rank ? c.dp : 1),
        blocking_p2p_(pipeline_sends_block(c)) {
    slowdown_.assign(static_cast<std::size_t>(c.pp * replicas_), 1.0);
    // TP and CP peers meet at every layer's collectives, so a straggler slows its whole gang.
    const ParallelGrid grid = c.grid();
    for (const auto& s : o.stragglers) {
      if (s.rank < 0 || s.rank >= c.gpus())
        fail("straggler rank {} is outside 0..{}", s.rank, c.gpus() - 1);
      double& f = slowdown_[static_cast<std::size_t>(
          gang(grid.coord(s.rank, "pp"), o.every_rank ? grid.coord(s.rank, "dp") : 0))];
      f = std::max(f, s.slowdown);
    }
  }

  // The iteration's tasks, phase by phase; each phase depends on the tasks the ones before it added.
  void build() {
    schedule_ = pipeline_schedule(c_.pp, c_.num_microbatches(), c_.virtual_stages, c_.microbatch_group_size);
    chunks_.assign(static_cast<std::size_t>(c_.pp), {});
    for (int s = 0; s < c_.pp; ++s)
      for (int k = 0; k < c_.virtual_stages; ++k)
        chunks_[static_cast<std::size_t>(s)].push_back(chunk_plan(m_, c_, s, k));
    add_streams();
    add_links();
    add_compute_passes();
    add_pipeline_transfers();
    add_gradient_reductions();
    add_optimizer_steps();
    add_parameter_gathers();
  }

  EventEngine& engine() { return engine_; }
  const std::vector<TaskInfo>& info() const { return info_; }
  const std::vector<StreamId>& compute_streams() const { return compute_; }
  int replicas() const { return replicas_; }

 private:
  // Three streams per simulated rank, in StreamLane's order: simulate() reads each stream's lane
  // from its index.
  void add_streams() {
    for (int s = 0; s < c_.pp; ++s)
      for (int r = 0; r < replicas_; ++r) {
        auto name = [&](StreamLane lane) { return fmt::format("stage {} replica {} {}", s, r, to_string(lane)); };
        compute_.push_back(engine_.add_stream(name(StreamLane::Compute)));
        send_.push_back(engine_.add_stream(name(StreamLane::P2p)));
        dp_.push_back(engine_.add_stream(name(StreamLane::Dp)));
      }
    // Index of every pass task: [gang][chunk][microbatch] for forward and backward.
    const auto slots = static_cast<std::size_t>(c_.virtual_stages * c_.num_microbatches());
    const auto gangs = static_cast<std::size_t>(c_.pp * replicas_);
    fwd_.assign(gangs, std::vector<TaskId>(slots, -1));
    bwd_ = fwd_;
    bwd_last_ = fwd_;
    last_compute_.assign(gangs, -1);
    last_pieces_.assign(gangs, {});
  }

  // Links of every simulated rank, one direction each: its NIC (traffic to other NVLink domains)
  // and its NVLink port (inside its domain). A simulated rank stands for each GPU of its TP x CP
  // gang (and, in symmetric mode, of its DP replicas), each with its own NIC and port carrying
  // the same traffic, so one rank's links are every such GPU's. Whether a group leaves its NVLink
  // domain is read from its placement, as pricing reads it (the groups are regular: rank 0's
  // stands for all).
  void add_links() {
    const ParallelGrid grid = c_.grid();
    for (int s = 0; s < c_.pp; ++s)
      for (int r = 0; r < replicas_; ++r) {
        auto name = [&](const char* what) { return fmt::format("stage {} replica {} {}", s, r, what); };
        first_rank_.push_back(grid.rank({0, 0, r, s}));  // kDenseGridOrder: tp, cp, dp, pp
        links_.push_back({engine_.add_link(name("nic out")), engine_.add_link(name("nic in")),
                          engine_.add_link(name("nvlink out")), engine_.add_link(name("nvlink in"))});
      }
    dp_leaves_domain_ = place_in_nvlink_domains(grid.group(0, kGradientGroup), cluster_).nodes > 1;
    if (m_.moe.enabled()) {
      dp_leaves_domain_ =
          dp_leaves_domain_ || place_in_nvlink_domains(c_.expert_grid().group(0, "edp"), cluster_).nodes > 1;
      ep_leaves_domain_ = place_layer_groups(c_, cluster_.nvlink_domain_size()).ep_etp.nodes > 1;
    }
  }
  struct RankLinks {
    LinkId nic_out, nic_in, nvlink_out, nvlink_in;
  };
  // A transfer from `from` to `to` (gangs) goes out of one and into the other, over NICs when
  // they are in different NVLink domains.
  std::vector<LinkId> transfer_links(int from, int to) const {
    const RankLinks& a = links_[static_cast<std::size_t>(from)];
    const RankLinks& b = links_[static_cast<std::size_t>(to)];
    if (cluster_.same_nvlink_domain(first_rank_[static_cast<std::size_t>(from)], first_rank_[static_cast<std::size_t>(to)]))
      return {a.nvlink_out, b.nvlink_in};
    return {a.nic_out, b.nic_in};
  }
  // A collective's ring sends and receives at every member: both directions of each one's NIC
  // when the group leaves its NVLink domain, else of its NVLink port.
  std::vector<LinkId> collective_links(const std::vector<int>& gangs, bool leaves_domain) const {
    std::vector<LinkId> out;
    for (int gg : gangs) {
      const RankLinks& l = links_[static_cast<std::size_t>(gg)];
      if (leaves_domain) out.insert(out.end(), {l.nic_out, l.nic_in});
      else out.insert(out.end(), {l.nvlink_out, l.nvlink_in});
    }
    return out;
  }
  // The whole of a transfer's priced time shares its links (its latency, microseconds against
  // the milliseconds of its bytes, too).
  void share_links(TaskId t, const std::vector<LinkId>& links) { engine_.use_links(t, engine_.duration_alone(t), links); }

  // Compute passes, in each rank's schedule order.
  void add_compute_passes() {
    for (int r = 0; r < replicas_; ++r)
      for (int s = 0; s < c_.pp; ++s) {
        const int gg = gang(s, r);
        const auto& list = schedule_[static_cast<std::size_t>(s)];
        std::vector<bool> last_backward_of_chunk(list.size(), false);
        if (c_.overlap_grad_reduce) {
          std::vector<bool> seen(static_cast<std::size_t>(c_.virtual_stages), false);
          for (std::size_t i = list.size(); i-- > 0;)
            if (list[i].kind == PassKind::Backward && !seen[static_cast<std::size_t>(list[i].chunk)]) {
              seen[static_cast<std::size_t>(list[i].chunk)] = true;
              last_backward_of_chunk[i] = true;
            }
        }
        for (std::size_t i = 0; i < list.size(); ++i) {
          const PipelinePass& pass = list[i];
          const ChunkCosts& chunk = costs_.chunks[static_cast<std::size_t>(s)][static_cast<std::size_t>(pass.chunk)];
          const bool forward = pass.kind == PassKind::Forward;
          const PassCost& cost = forward ? chunk.forward : chunk.backward;
          const int pieces = last_backward_of_chunk[i] ? buckets(s, chunk) : 1;
          TaskId first = -1;
          for (int piece = 0; piece < pieces; ++piece) {
            PassCost share = cost;
            for (double* x : {&share.compute_s, &share.recompute_s, &share.tp_comm_s, &share.ep_comm_s, &share.cp_comm_s,
                              &share.cp_transfer_s, &share.measured_s, &share.host_s, &share.span_s})
              *x /= pieces;
            const TaskId t = add(share.total() * slowdown(gg), {compute_[static_cast<std::size_t>(gg)]},
                                 {forward ? TaskKind::Forward : TaskKind::Backward, gg, pass.microbatch, pass.chunk, share});
            // MoE dispatch and combine that leave the NVLink domain share the NIC with the
            // pipeline and DP traffic of the moment; taken as the pass's last stretch (the
            // engine's link part comes after its own-pace part).
            if (ep_leaves_domain_ && share.ep_comm_s > 0) {
              const RankLinks& l = links_[static_cast<std::size_t>(gg)];
              engine_.use_links(t, std::min(engine_.duration_alone(t), to_sim_time(share.ep_comm_s)), {l.nic_out, l.nic_in});
            }
            if (first < 0) first = t;
            if (pieces > 1) last_pieces_[static_cast<std::size_t>(gg)].push_back(t);
          }
          (forward ? fwd_ : bwd_)[static_cast<std::size_t>(gg)][slot(pass.chunk, pass.microbatch)] = first;
          if (!forward) bwd_last_[static_cast<std::size_t>(gg)][slot(pass.chunk, pass.microbatch)] = last_compute_[static_cast<std::size_t>(gg)];
        }
      }
  }

  // Pipeline transfers, on each sender's p2p stream in the order it runs its passes.
  // Megatron-LM's and DeepSpeed's p2p block: the sender's next pass waits for its send too. A
  // stack whose sends do not block (the framework preset says) only delays the receiver.
  void add_pipeline_transfers() {
    for (int r = 0; r < replicas_; ++r)
      for (int s = 0; s < c_.pp; ++s) {
        const int gg = gang(s, r);
        for (const PipelinePass& scheduled : schedule_[static_cast<std::size_t>(s)]) {
          const PlannedPass pass =
              plan_pass(scheduled, chunks_[static_cast<std::size_t>(s)][static_cast<std::size_t>(scheduled.chunk)]);
          if (pass.send_to < 0) continue;
          const bool forward = pass.kind == PassKind::Forward;
          const TaskId from = (forward ? fwd_ : bwd_last_)[static_cast<std::size_t>(gg)][slot(pass.chunk, pass.microbatch)];
          const TaskId send = add(costs_.p2p_s, {send_[static_cast<std::size_t>(gg)]},
                                  {TaskKind::Send, gg, pass.microbatch, pass.chunk, {}});
          engine_.add_dependency(from, send);
          const int to_gang = gang(pass.send_to, r);
          share_links(send, transfer_links(gg, to_gang));
          engine_.add_dependency(send, (forward ? fwd_ : bwd_)[static_cast<std::size_t>(to_gang)][slot(pass.send_to_chunk, pass.microbatch)]);
          const TaskId next = next_compute_[static_cast<std::size_t>(from)];
          if (next >= 0 && blocking_p2p_) engine_.add_dependency(send, next);
        }
      }
  }

  // Gradient reduction over DP x CP (kGradientGroup): per bucket as the last backward of each chunk finishes
  // (overlap), or once over the whole stage after its last pass.
  void add_gradient_reductions() {
    for (int s = 0; s < c_.pp; ++s) {
      std::vector<StreamId> group;
      for (int r = 0; r < replicas_; ++r) group.push_back(dp_[static_cast<std::size_t>(gang(s, r))]);
      const std::vector<LinkId> links = collective_links(replica_gangs(s), dp_leaves_domain_);
      auto dep_all = [&](TaskId t, auto pick) {
        for (int r = 0; r < replicas_; ++r) engine_.add_dependency(pick(gang(s, r)), t);
      };
      if (gradient_group_size(c_) > 1 || replicas_ > 1) {
        if (c_.overlap_grad_reduce) {
          const auto& pieces0 = last_pieces_[static_cast<std::size_t>(gang(s, 0))];
          for (std::size_t k = 0; k < pieces0.size(); ++k) {
            const TaskId t = add(costs_.bucket_reduce_s[static_cast<std::size_t>(s)], group,
                                 {TaskKind::GradReduce, gang(s, 0), -1, 0, {}});
            share_links(t, links);
            dep_all(t, [&](int gg) { return last_pieces_[static_cast<std::size_t>(gg)][k]; });
          }
        } else {
          const TaskId t = add(costs_.grad_reduce_s[static_cast<std::size_t>(s)], group,
                               {TaskKind::GradReduce, gang(s, 0), -1, 0, {}});
          share_links(t, links);
          dep_all(t, [&](int gg) { return engine_.stream_tasks(compute_[static_cast<std::size_t>(gg)]).back(); });
        }
      }
    }
    // Tied embeddings: first and last stage sum their word-embedding gradients.
    if (costs_.embedding_sync_s > 0)
      for (int r = 0; r < replicas_; ++r) {
        const int first = gang(0, r), last = gang(c_.pp - 1, r);
        const TaskId t = add(costs_.embedding_sync_s, {dp_[static_cast<std::size_t>(first)], dp_[static_cast<std::size_t>(last)]},
                             {TaskKind::EmbeddingSync, first, -1, 0, {}});
        share_links(t, collective_links({first, last}, !cluster_.same_nvlink_domain(first_rank_[static_cast<std::size_t>(first)],
                                                                                      first_rank_[static_cast<std::size_t>(last)])));
      }
  }

  // Global gradient norm (every stage meets), then each stage's optimizer step.
  void add_optimizer_steps() {
    const TaskId norm = add(costs_.grad_norm_sync_s, std::vector<StreamId>{}, {TaskKind::GradNorm, 0, -1, 0, {}});
    for (std::size_t gg = 0; gg < compute_.size(); ++gg) {
      engine_.add_dependency(engine_.stream_tasks(compute_[gg]).back(), norm);
      if (!engine_.stream_tasks(dp_[gg]).empty()) engine_.add_dependency(engine_.stream_tasks(dp_[gg]).back(), norm);
    }
    for (int r = 0; r < replicas_; ++r)
      for (int s = 0; s < c_.pp; ++s) {
        const int gg = gang(s, r);
        PassCost opt;
        opt.compute_s = costs_.optimizer_s[static_cast<std::size_t>(s)];
        const TaskId step = add(opt.compute_s * slowdown(gg), {compute_[static_cast<std::size_t>(gg)]},
                                {TaskKind::Optimizer, gg, -1, 0, opt});
        engine_.add_dependency(norm, step);
        optimizer_.push_back(step);
      }
  }

  // Distributed optimizer: updated parameters are all-gathered over DP x CP (unless the gather
  // hides in the next iteration's forward).
  void add_parameter_gathers() {
    if (!c_.distributed_optimizer || c_.overlap_param_gather || gradient_group_size(c_) == 1) return;
    for (int s = 0; s < c_.pp; ++s) {
      std::vector<StreamId> group;
      for (int r = 0; r < replicas_; ++r) group.push_back(dp_[static_cast<std::size_t>(gang(s, r))]);
      const TaskId t = add(costs_.param_gather_s[static_cast<std::size_t>(s)], group,
                           {TaskKind::ParamGather, gang(s, 0), -1, 0, {}});
      share_links(t, collective_links(replica_gangs(s), dp_leaves_domain_));
      for (int r = 0; r < replicas_; ++r) engine_.add_dependency(optimizer_[static_cast<std::size_t>(r * c_.pp + s)], t);
    }
  }

  int gang(int stage, int replica) const { return stage * replicas_ + replica; }
  std::vector<int> replica_gangs(int stage) const {
    std::vector<int> out;
    for (int r = 0; r < replicas_; ++r) out.push_back(gang(stage, r));
    return out;
  }
  std::size_t slot(int chunk, int microbatch) const {
    return static_cast<std::size_t>(chunk * c_.num_microbatches() + microbatch);
  }
  double slowdown(int gg) const { return slowdown_[static_cast<std::size_t>(gg)]; }
  int buckets(int stage, const ChunkCosts& chunk) const {
    const double chunk_params = static_cast<double>(costs_.stage_params[static_cast<std::size_t>(stage)]) *
                                chunk.layers / std::max(1, m_.num_layers / c_.pp);
    return std::max(1, static_cast<int>(std::ceil(chunk_params / costs_.bucket_params)));
  }
  TaskId add(double seconds, std::initializer_list<StreamId> streams, TaskInfo info) {
    return add(seconds, std::vector<StreamId>(streams), info);
  }
  TaskId add(double seconds, const std::vector<StreamId>& streams, TaskInfo info) {
    const TaskId t = engine_.add_task(to_sim_time(seconds), streams);
    info_.push_back(info);
    next_compute_.push_back(-1);
    // Remember each compute pass's successor on its stream: a blocking send delays it.
    if (info.kind == TaskKind::Forward || info.kind == TaskKind::Backward) {
      TaskId& last = last_compute_[static_cast<std::size_t>(info.gang)];
      if (last >= 0) next_compute_[static_cast<std::size_t>(last)] = t;
      last = t;
    }
    return t;
  }
  const ModelSpec& m_;
  const ClusterSpec& cluster_;
  const ParallelConfig& c_;
  const IterationCosts& costs_;
  int replicas_;
  bool blocking_p2p_;
  std::vector<double> slowdown_;
  EventEngine engine_;
  std::vector<TaskInfo> info_;
  std::vector<StreamId> compute_, send_, dp_;
  std::vector<RankLinks> links_;  // per gang
  std::vector<int> first_rank_;   // per gang: its TP-rank-0, CP-rank-0 GPU
  bool dp_leaves_domain_ = false, ep_leaves_domain_ = false;
  std::vector<std::vector<TaskId>> fwd_, bwd_, bwd_last_;  // [gang][slot]; bwd_last_: last bucket piece
  std::vector<TaskId> last_compute_;  // per gang, while building
  std::vector<std::vector<PipelinePass>> schedule_;  // each stage's passes
  std::vector<std::vector<ChunkPlan>> chunks_;       // [stage][chunk]
  std::vector<std::vector<TaskId>> last_pieces_;     // per gang: bucket pieces of each chunk's last backward
  std::vector<TaskId> next_compute_;  // per task: the next compute pass on its stream
  std::vector<TaskId> optimizer_;
};

bool is_dp_kind(TaskKind k) {
  return k == TaskKind::GradReduce || k == TaskKind::EmbeddingSync || k == TaskKind::GradNorm ||
         k == TaskKind::ParamGather;
}

// Splits one compute stream's timeline into the breakdown: busy time by what each task
// did; idle time by what it waited for, following the chain of waits backwards — a gap
// covered by a transfer is exposed pipeline communication, by a DP collective exposed DP
// communication, and by other stages' compute the pipeline bubble.
TimeBreakdown breakdown_of(const EventEngine& engine, const std::vector<TaskInfo>& info, StreamId stream) {
  TimeBreakdown b;
  auto classify_gap = [&](SimTime gap_start, SimTime gap_end, TaskId waited_on) {
    SimTime covered_to = gap_end;  // walk back from the gap's end
    for (TaskId w = waited_on; w >= 0 && covered_to > gap_start; w = engine.waited_for(w)) {
      const SimTime from = std::max(gap_start, engine.start(w));
      if (engine.end(w) < covered_to) covered_to = std::max(gap_start, engine.end(w));  // unexplained: bubble below
      const double seconds = to_seconds(std::max<SimTime>(0, covered_to - from));
      const TaskKind kind = info[static_cast<std::size_t>(w)].kind;
      if (kind == TaskKind::Send) b.pp_comm += seconds;
      else if (is_dp_kind(kind)) b.dp_comm += seconds;
      else b.bubble += seconds;
      covered_to = std::min(covered_to, from);
    }
    b.bubble += to_seconds(std::max<SimTime>(0, covered_to - gap_start));
  };
  SimTime cursor = 0;
  for (TaskId t : engine.stream_tasks(stream)) {
    classify_gap(cursor, engine.start(t), engine.waited_for(t));
    const TaskInfo& i = info[static_cast<std::size_t>(t)];
    const double seconds = to_seconds(engine.duration_alone(t));
    // A pass outlasts its own time only while its dispatch and combine share a NIC.
    b.ep_comm += to_seconds(engine.duration(t) - engine.duration_alone(t));
    if (i.kind == TaskKind::Optimizer) {
      b.optimizer += seconds;
    } else {
      const double modelled = i.cost.total();
      const double scale = modelled > 0 ? seconds / modelled : 0;  // integer rounding, stragglers
      b.compute += i.cost.compute_s * scale;
      b.recompute += i.cost.recompute_s * scale;
      b.tp_comm += i.cost.tp_comm_s * scale;
      b.cp_comm += i.cost.cp_comm_s * scale;
      b.ep_comm += i.cost.ep_comm_s * scale;
      b.host += i.cost.host_wait() * scale;
    }
    cursor = engine.end(t);
  }
  // After its optimizer step a stage may still wait: for the parameter all-gather (exposed
  // DP communication) or for slower stages (idle).
  TaskId last = -1;
  for (std::size_t t = 0; t < info.size(); ++t)
    if (engine.end(static_cast<TaskId>(t)) == engine.makespan()) last = static_cast<TaskId>(t);
  classify_gap(cursor, engine.makespan(), last);
  return b;
}

}  // namespace

const char* to_string(StreamLane lane) {
  switch (lane) {
    case StreamLane::Compute: return "compute";
    case StreamLane::P2p: return "p2p";
    case StreamLane::Dp: return "dp";
    case StreamLane::Cp: return "cp";
  }
  return "?";
}

namespace {

std::string pass_name(const TaskInfo& i) {
  switch (i.kind) {
    case TaskKind::Forward: return fmt::format("F{} c{}", i.microbatch, i.chunk);
    case TaskKind::Backward: return fmt::format("B{} c{}", i.microbatch, i.chunk);
    case TaskKind::Send: return fmt::format("send mb{} c{}", i.microbatch, i.chunk);
    default: return to_string(i.kind);
  }
}

}  // namespace

SimResult simulate(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config,
                   const CostSource& costs, const SimOptions& options) {
  validate(config, model, cluster, 0);
  if (!options.stragglers.empty() && !options.every_rank)
    fail("stragglers need every-rank mode (--every-rank): symmetric mode assumes identical ranks");
  if (options.every_rank) {
    const double passes = 2.0 * config.num_microbatches() * config.virtual_stages * config.pp * config.dp;
    if (passes > kMaxSimulatedPasses)
      fail_at("--every-rank",
              "--every-rank runs every pass of each of the {} DP replicas: {:.3g} passes, more than the {:.3g} million "
              "a simulation handles; simulate without --every-rank (one replica per stage) or with a smaller global "
              "batch",
              config.dp, passes, kMaxSimulatedPasses / 1e6);
  }

  SimResult r;
  r.model = model;
  r.cluster = cluster;
  r.config = config;
  r.cost_source = costs.describe();

  const IterationCosts priced = price_iteration(model, cluster, config, costs);
  // Simulated time is int64 nanoseconds (292 years): refuse what could not fit in it.
  double serial = 0;
  for (const auto& stage : priced.chunks)
    for (const auto& chunk : stage) serial += chunk.forward.total() + chunk.backward.total();
  serial *= config.num_microbatches();
  if (!(serial < 1e9))
    fail("one iteration of {} under {} would take about {:.3g} s of compute; that is beyond what the simulator "
         "represents (1e9 s) — check the model shape and batch",
         model.name, config.summary(), serial);
  IterationGraph graph(model, cluster, config, priced, options);
  graph.build();
  EventEngine& engine = graph.engine();
  engine.run();

  r.iteration_time_s = to_seconds(engine.makespan());
  r.tasks = engine.task_count();
  r.events = engine.events_processed();

  // Report the stage the iteration waits for: the one whose last pass finishes last (the
  // gradient-norm sync, and so every optimizer step, waits on it). Ties go to the lowest.
  const auto& info = graph.info();
  SimTime latest = -1;
  for (std::size_t gg = 0; gg < graph.compute_streams().size(); ++gg) {
    SimTime last_pass_end = 0;
    for (TaskId t : engine.stream_tasks(graph.compute_streams()[gg]))
      if (info[static_cast<std::size_t>(t)].kind != TaskKind::Optimizer) last_pass_end = std::max(last_pass_end, engine.end(t));
    if (last_pass_end > latest) {
      latest = last_pass_end;
      r.reported_stage = static_cast<int>(gg) / graph.replicas();
    }
  }
  r.breakdown = breakdown_of(engine, info,
                             graph.compute_streams()[static_cast<std::size_t>(r.reported_stage * graph.replicas())]);
  r.bubble_fraction = r.iteration_time_s > 0 ? r.breakdown.bubble / r.iteration_time_s : 0;

  const double gpus = config.gpus();
  const double peak = cluster.gpu.peak_flops(config.precision);
  r.model_flops = model_flops_per_iteration(model, config.global_batch);
  r.hardware_flops = hardware_flops_per_iteration(model, config);
  r.tflops_per_gpu = r.model_flops / r.iteration_time_s / gpus / kTera;
  r.hardware_tflops_per_gpu = r.hardware_flops / r.iteration_time_s / gpus / kTera;
  r.mfu = r.model_flops / r.iteration_time_s / gpus / peak;
  r.hfu = r.hardware_flops / r.iteration_time_s / gpus / peak;
  const double tokens_per_iteration = static_cast<double>(config.global_batch) * model.seq_length;
  r.tokens_per_s = tokens_per_iteration / r.iteration_time_s;
  r.train_tokens = options.train_tokens;
  if (options.train_tokens > 0)
    r.training_days = options.train_tokens / tokens_per_iteration * r.iteration_time_s / 86400.0;
  if (const auto band = costs.error_band(config.gpus())) {
    r.interval = PredictionInterval{band->low, band->high, band->basis};
  }

  r.memory = memory_model(model, config, options.reserve, &cluster.gpu);
  r.peak_memory_gib = r.memory.peak().total() / kGiB;
  r.hbm_gib = cluster.gpu.hbm_gib;
  r.usable_gib = options.reserve.usable_gib(r.hbm_gib);
  r.fits = r.peak_memory_gib <= r.usable_gib;
  r.measured_fraction = priced.modelled_s > 0 ? priced.measured_s / priced.modelled_s : 0;
  r.cost_coverage = costs.coverage();

  if (options.keep_timeline) {
    // IterationGraph adds three streams per (stage, replica), in StreamLane's order.
    constexpr std::size_t kLanes = 3;
    const int replicas = static_cast<int>(engine.stream_count() / kLanes) / config.pp;
    for (std::size_t s = 0; s < engine.stream_count(); ++s) {
      const int gang = static_cast<int>(s / kLanes);
      const auto lane = static_cast<StreamLane>(s % kLanes);
      for (TaskId t : engine.stream_tasks(static_cast<StreamId>(s))) {
        const TaskInfo& i = info[static_cast<std::size_t>(t)];
        r.timeline.push_back({gang, gang / replicas, gang % replicas, lane, i.microbatch, i.chunk, pass_name(i), i.kind,
                              engine.start(t), engine.duration(t)});
        // The pass's context-parallel exchanges, scaled as the pass was (stragglers, rounding).
        const double modelled = i.cost.total();
        if (i.cost.cp_transfer_s > 0 && modelled > 0)
          r.timeline.push_back({gang, gang / replicas, gang % replicas, StreamLane::Cp, i.microbatch, i.chunk,
                                "cp " + pass_name(i), i.kind, engine.start(t),
                                to_sim_time(i.cost.cp_transfer_s * to_seconds(engine.duration_alone(t)) / modelled)});
      }
    }
  }
  return r;
}

}  // namespace cc
