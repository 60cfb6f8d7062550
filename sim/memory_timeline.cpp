#include "sim/memory_timeline.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/error.h"
#include "sim/pipeline_schedule.h"
#include "sim/step_plan.h"

namespace cc {

namespace {

struct Pass {
  PipelinePass pass;
  SimTime start = 0, end = 0;
};

// Whether a timeline task is (a piece of) the given pass: a backward may run as several pieces
// when gradient reduction overlaps it.
bool runs(const TimelineEvent& e, const PipelinePass& p) {
  const TaskKind kind = p.kind == PassKind::Forward ? TaskKind::Forward : TaskKind::Backward;
  return e.kind == kind && e.microbatch == p.microbatch && e.chunk == p.chunk;
}

// Walks the stage's compute tasks in time order against its schedule, so every pass gets its
// real start and end.
std::vector<Pass> timed_passes(const std::vector<const TimelineEvent*>& compute,
                               const std::vector<PipelinePass>& schedule, int stage) {
  std::vector<Pass> out;
  std::size_t e = 0;
  for (const PipelinePass& p : schedule) {
    while (e < compute.size() && !runs(*compute[e], p)) ++e;  // optimizer, norms: not passes
    if (e == compute.size())
      throw std::logic_error(fmt::format("memory_timeline: stage {} has no task for pass {}{} c{}", stage,
                                         p.kind == PassKind::Forward ? 'F' : 'B', p.microbatch, p.chunk));
    Pass t{p, compute[e]->start, compute[e]->start + compute[e]->duration};
    while (e < compute.size() && runs(*compute[e], p)) {
      t.end = compute[e]->start + compute[e]->duration;
      ++e;
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace

std::vector<StageMemoryCurve> memory_timeline(const SimResult& r, const MemoryReserve& reserve) {
  if (r.timeline.empty()) fail("memory_timeline needs a result simulated with keep_timeline");
  const ParallelConfig& c = r.config;
  const auto schedule = pipeline_schedule(c.pp, c.num_microbatches(), c.virtual_stages, c.microbatch_group_size);
  const SimTime end = to_sim_time(r.iteration_time_s);

  std::vector<StageMemoryCurve> curves;
  for (int s = 0; s < c.pp; ++s) {
    std::vector<const TimelineEvent*> compute;
    for (const TimelineEvent& e : r.timeline)
      if (e.stage == s && e.replica == 0 && e.lane == StreamLane::Compute) compute.push_back(&e);
    std::stable_sort(compute.begin(), compute.end(),
                     [](const TimelineEvent* a, const TimelineEvent* b) { return a->start < b->start; });

    const MemoryBreakdown& held = r.memory.stages[static_cast<std::size_t>(s)].bytes;
    const StageActivations a = stage_activations(r.model, c, s);
    // Fragmentation is charged in proportion to the activations, as memory_model() does.
    const double scale = 1.0 + reserve.fragmentation_fraction;
    const double base = held.resident() + (reserve.cuda_context_gib + reserve.comm_buffers_gib) * kGiB + scale * a.fixed;

    // (time, change in bytes): a forward's activations are held from its start until its
    // backward ends; full recomputation's working set only while that backward runs, and the
    // CP buffers of a layer's attention while any pass runs; the loss's workspace while the
    // chunk holding the output layer runs (it never meets those: the loss is done before any
    // layer reruns or attends).
    std::vector<std::pair<SimTime, double>> steps;
    std::vector<bool> holds_output;  // by chunk: the step plan's chunk with the final norm, logits and loss
    for (int k = 0; k < c.virtual_stages; ++k) holds_output.push_back(chunk_plan(r.model, c, s, k).has_output);
    for (const Pass& p : timed_passes(compute, schedule[static_cast<std::size_t>(s)], s)) {
      const bool loss = a.loss_workspace > 0 && holds_output[static_cast<std::size_t>(p.pass.chunk)];
      const double attention = a.context_parallel_buffers;
      if (p.pass.kind == PassKind::Forward) {
        const double transient = loss ? std::max(attention, a.loss_workspace) : attention;
        steps.emplace_back(p.start, scale * (a.per_in_flight + transient));
        if (transient > 0) steps.emplace_back(p.end, -scale * transient);
      } else {
        const double transient =
            loss ? std::max(a.working + attention, a.loss_workspace) : a.working + attention;
        steps.emplace_back(p.start, scale * transient);
        steps.emplace_back(p.end, -scale * (transient + a.per_in_flight));
      }
    }
    // Releases before allocations at equal times: the curve never overstates the peak.
    std::stable_sort(steps.begin(), steps.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : x.second < y.second;
    });

    StageMemoryCurve curve;
    curve.stage = s;
    curve.points.push_back({0, base});
    double level = base;
    for (const auto& [t, delta] : steps) {
      if (delta == 0) continue;  // a backward without recomputation's working set
      level += delta;
      if (curve.points.back().time == t) curve.points.back().bytes = level;
      else curve.points.push_back({t, level});
    }
    curve.points.push_back({std::max(end, curve.points.back().time), base});
    curve.peak_bytes = base;
    for (const MemoryPoint& p : curve.points)
      if (p.bytes > curve.peak_bytes) {
        curve.peak_bytes = p.bytes;
        curve.peak_time = p.time;
      }
    curves.push_back(std::move(curve));
  }
  return curves;
}

}  // namespace cc
