#include "sim/pipeline_schedule.h"

#include <algorithm>

namespace cc {

int warmup_passes(int stage, int stages, int microbatches, int virtual_stages) {
  const int total = microbatches * virtual_stages;
  if (virtual_stages == 1) return std::min(stages - stage - 1, total);
  // Megatron-LM: every rank first fills all its chunks for one round of `stages`
  // microbatches, plus two passes per downstream rank to keep the pipe full.
  return std::min((stages - stage - 1) * 2 + (virtual_stages - 1) * stages, total);
}

namespace {

// The k-th forward (or backward) pass of a rank in the interleaved order: microbatches go
// in groups of `stages`, each group visiting chunk 0, 1, ... (backwards: the last chunk first).
PipelinePass interleaved_pass(PassKind kind, int k, int stages, int virtual_stages) {
  const int group = k / (stages * virtual_stages);
  const int in_group = k % (stages * virtual_stages);
  int chunk = in_group / stages;
  if (kind == PassKind::Backward) chunk = virtual_stages - 1 - chunk;
  return {kind, group * stages + in_group % stages, chunk};
}

}  // namespace

std::vector<std::vector<PipelinePass>> pipeline_schedule(int stages, int microbatches, int virtual_stages) {
  std::vector<std::vector<PipelinePass>> lists(static_cast<std::size_t>(stages));
  const int total = microbatches * virtual_stages;
  for (int s = 0; s < stages; ++s) {
    auto& list = lists[static_cast<std::size_t>(s)];
    list.reserve(static_cast<std::size_t>(2 * total));
    auto pass = [&](PassKind kind, int k) {
      return virtual_stages == 1 ? PipelinePass{kind, k, 0} : interleaved_pass(kind, k, stages, virtual_stages);
    };
    const int warmup = warmup_passes(s, stages, microbatches, virtual_stages);
    int next_forward = 0, next_backward = 0;
    // Phase 1 — warm-up: forwards only, filling the pipeline.
    while (next_forward < warmup) list.push_back(pass(PassKind::Forward, next_forward++));
    // Phase 2 — steady state: one forward, one backward.
    while (next_forward < total) {
      list.push_back(pass(PassKind::Forward, next_forward++));
      list.push_back(pass(PassKind::Backward, next_backward++));
    }
    // Phase 3 — cool-down: drain the remaining backwards.
    while (next_backward < total) list.push_back(pass(PassKind::Backward, next_backward++));
  }
  return lists;
}

int max_in_flight(int stage, int stages, int microbatches, int virtual_stages) {
  const int total = microbatches * virtual_stages;
  return std::min(warmup_passes(stage, stages, microbatches, virtual_stages) + 1, total);
}

int max_in_flight(const std::vector<PipelinePass>& passes) {
  int live = 0, most = 0;
  for (const auto& p : passes) {
    live += p.kind == PassKind::Forward ? 1 : -1;
    most = std::max(most, live);
  }
  return most;
}

}  // namespace cc
