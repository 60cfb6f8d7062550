#include "profiler/step_breakdown.h"

#include <cstring>
#include <string_view>

namespace cc::profiler {

namespace {

bool starts_with(const char* name, std::string_view prefix) { return std::string_view(name).starts_with(prefix); }

// The engine's collective scopes (engine/transformer_layer.h, pipeline_runner_impl.h,
// optimizer_impl.h, model_chunk_impl.h) in the categories the simulator reports them under.
// Every collective of the TP group is tensor-parallel communication, whatever its name:
// the all-reduces and reduce-scatters ("tp_reduce*", "tp.sp_grad_reduce"), sequence
// parallelism's all-gathers ("sp_all_gather*") and the vocab-parallel loss's all-reduces
// ("cross_entropy.all_reduce"). The embedding gradient sync and the gradient-norm
// all-reduce count as data-parallel communication there.
double* collective_bucket(MeasuredBreakdown& b, const char* name) {
  if (is_tp_collective(name)) return &b.time.tp_comm;
  if (starts_with(name, "p2p.")) return &b.time.pp_comm;
  if (starts_with(name, "dp.") || starts_with(name, "embedding_grad_sync") || starts_with(name, "grad_norm"))
    return &b.time.dp_comm;
  return &b.unannotated;
}

}  // namespace

bool is_tp_collective(const char* name) {
  return starts_with(name, "tp") || starts_with(name, "sp_") || starts_with(name, "cross_entropy.");
}

MeasuredBreakdown step_breakdown(const std::vector<RecordedOp>& events, long first_timed_step) {
  MeasuredBreakdown b;
  for (const auto& e : events) {
    if (e.step < first_timed_step) continue;
    double* bucket = nullptr;
    if (std::strcmp(e.op.name, kStepScope) == 0) {
      ++b.steps;
      bucket = &b.unannotated;
    } else if (e.op.collective) {
      bucket = collective_bucket(b, e.op.name);
    } else if (starts_with(e.op.name, "optimizer")) {
      bucket = &b.time.optimizer;
    } else {
      bucket = e.op.phase == Phase::Recompute ? &b.time.recompute : &b.time.compute;
    }
    *bucket += e.self_s;
  }
  if (b.steps > 0) {
    const double n = b.steps;
    for (double* x : {&b.time.compute, &b.time.recompute, &b.time.tp_comm, &b.time.pp_comm, &b.time.dp_comm,
                      &b.time.optimizer, &b.unannotated})
      *x /= n;
  }
  return b;
}

}  // namespace cc::profiler
