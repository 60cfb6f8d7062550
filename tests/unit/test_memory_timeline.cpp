// memory_timeline: activations rise through the 1F1B warm-up and fall in the cool-down,
// with the stage's memory_model() total as the peak.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/memory_timeline.h"
#include "sim/presets.h"

namespace cc {
namespace {

SimResult simulate_tiny(int pp, int global_batch, RecomputeGranularity recompute) {
  const ModelSpec m = load_model("tiny");
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  ParallelConfig c;
  c.pp = pp;
  c.global_batch = global_batch;
  c.recompute = recompute;
  SimOptions o;
  o.keep_timeline = true;
  return simulate(m, cluster, c, AnalyticCosts(cluster, c.precision), o);
}

// Activations held at the middle of each of `stage`'s passes (in time order), recovered from
// the curve's bytes: the simulator's own pass tasks say where each pass ran.
std::vector<int> held_during_passes(const SimResult& r, const StageMemoryCurve& curve) {
  const MemoryReserve reserve;
  const StageActivations a = stage_activations(r.model, r.config, curve.stage);
  const double base = curve.points.back().bytes;  // everything freed at the iteration's end
  std::vector<const TimelineEvent*> passes;
  for (const TimelineEvent& e : r.timeline)
    if (e.process == curve.stage && e.lane == StreamLane::Compute &&
        (e.kind == TaskKind::Forward || e.kind == TaskKind::Backward))
      passes.push_back(&e);
  std::sort(passes.begin(), passes.end(), [](auto* x, auto* y) { return x->start < y->start; });
  std::vector<int> counts;
  for (const TimelineEvent* e : passes) {
    const SimTime mid = e->start + e->duration / 2;
    double bytes = base;
    for (const MemoryPoint& p : curve.points)
      if (p.time <= mid) bytes = p.bytes;
    counts.push_back(static_cast<int>(std::lround((bytes - base) / ((1 + reserve.fragmentation_fraction) * a.per_in_flight))));
  }
  return counts;
}

TEST(MemoryTimeline, FollowsTheOneFOneBScheduleOfEachStage) {
  const SimResult r = simulate_tiny(4, 8, RecomputeGranularity::None);
  const auto curves = memory_timeline(r);
  ASSERT_EQ(curves.size(), 4u);
  // Stage 0 of PP 4, 8 microbatches: warm-up F0 F1 F2, steady F3 B0 F4 B1 ... F7 B4,
  // cool-down B5 B6 B7. A forward holds its activations from its start, a backward frees
  // them at its end, so during each pass: 1 2 3 | 4 4 4 4 4 4 4 4 4 4 | 3 2 1.
  EXPECT_EQ(held_during_passes(r, curves[0]), (std::vector<int>{1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 2, 1}));
  // Stage 3 (last) has no warm-up: F0 B0 F1 B1 ..., one microbatch at a time.
  EXPECT_EQ(held_during_passes(r, curves[3]), std::vector<int>(16, 1));
}

TEST(MemoryTimeline, PeakIsTheMemoryModelsStageTotal) {
  for (auto recompute : {RecomputeGranularity::None, RecomputeGranularity::Full}) {
    const SimResult r = simulate_tiny(4, 16, recompute);
    const auto curves = memory_timeline(r);
    ASSERT_EQ(curves.size(), 4u);
    for (const auto& curve : curves) {
      const double total = r.memory.stages[static_cast<std::size_t>(curve.stage)].bytes.total();
      EXPECT_NEAR(curve.peak_bytes, total, 1e-9 * total) << "stage " << curve.stage;
      EXPECT_GT(curve.peak_time, 0);
      EXPECT_LE(curve.points.back().time, to_sim_time(r.iteration_time_s));
    }
  }
}

TEST(MemoryTimeline, NeedsTheTimeline) {
  SimResult r = simulate_tiny(2, 4, RecomputeGranularity::None);
  r.timeline.clear();
  EXPECT_THROW(memory_timeline(r), SpecError);
}

}  // namespace
}  // namespace cc
