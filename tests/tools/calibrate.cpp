// Prints predicted vs published times for the reference rows (a development aid).
#include <cmath>
#include <cstdio>

#include "reference_data.h"
#include "sim/analytic_costs.h"
#include "sim/iteration_costs.h"
#include "sim/layer_program.h"
#include "sim/parallel_layout.h"
#include "sim/presets.h"
#include "sim/simulator.h"

int main() {
  using namespace cc;
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");
  const ModelSpec m22 = load_model("gpt-22b");
  const AnalyticCosts costs(cluster, Precision::BF16, AnalyticParams{});  // the hand-derived prior
  for (const auto& l : test::korthikanti_layers()) {
    const LayerTimes t = layer_times(m22, cluster, l.config, costs);
    std::printf("%-22s fwd %6.2f (%5.2f)  bwd %6.2f (%5.2f)\n", l.variant.c_str(), t.forward_s * 1e3, l.forward_ms,
                t.backward_s * 1e3, l.backward_ms);
  }
  for (bool sp : {false, true}) {
    ParallelConfig c;
    c.tp = 8;
    c.micro_batch = 4;
    c.sequence_parallel = sp;
    const LayerShape x = make_layer_shape(m22, c, place_group(ParallelLayout(8, 1, 1).tp_group(0), 8));
    for (const auto& prog : {layer_forward(x, Phase::Forward), layer_backward(x)}) {
      for (const auto& st : prog) {
        if (st.is_collective)
          std::printf("   %-34s comm %7.3f ms (hides %d)\n", st.comm.name, costs.collective(st.comm).seconds * 1e3, st.hides_behind);
        else
          std::printf("   %-34s      %7.3f ms  %6.1f TF/s\n", st.op.name, costs.compute(st.op).seconds * 1e3,
                      st.op.flops / costs.compute(st.op).seconds / 1e12);
      }
      std::printf("   ----\n");
    }
  }
  double sum = 0, worst = 0;
  int n = 0;
  for (const auto& r : test::korthikanti_runs()) {
    const SimResult res = simulate(load_model(r.model_preset), cluster, r.config, costs);
    const double err = (res.iteration_time_s - r.iteration_time_s) / r.iteration_time_s;
    sum += std::fabs(err);
    worst = std::max(worst, std::fabs(err));
    ++n;
    std::printf("%-10s %-40s %7.2f s (paper %6.2f) %+6.1f%%  mfu %.3f hfu %.3f  bubble %.3f mem %.1f\n",
                r.model_preset.c_str(), r.config.summary().c_str(), res.iteration_time_s, r.iteration_time_s,
                100 * err, res.mfu, res.hfu, res.bubble_fraction, res.peak_memory_gib);
  }
  std::printf("mean abs error %.2f%%, worst %.2f%%\n", 100 * sum / n, 100 * worst);
}
// (appended) per-op dump of a 22B layer
