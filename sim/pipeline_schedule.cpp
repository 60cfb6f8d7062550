#include "sim/pipeline_schedule.h"

#include <algorithm>

namespace cc {

namespace {

// The group size the interleaved schedule runs: Megatron-Core's default is the stage count.
int group_size(int stages, int microbatch_group) { return microbatch_group > 0 ? microbatch_group : stages; }

}  // namespace

int warmup_passes(int stage, int stages, int microbatches, int virtual_stages, int microbatch_group) {
  const int total = microbatches * virtual_stages;
  if (virtual_stages == 1) return std::min(stages - stage - 1, total);
  // Megatron-Core: every rank first fills all its chunks but the last for one group of
  // microbatches, plus two passes per downstream rank to keep the pipe full.
  return std::min((stages - stage - 1) * 2 + (virtual_stages - 1) * group_size(stages, microbatch_group), total);
}

namespace {

// The k-th forward (or backward) pass of a rank in the interleaved order, Megatron-Core's
// schedule table (schedules.py get_schedule_table): microbatches go in groups of `group`, each
// group visiting chunk 0, 1, ... (backwards: the last chunk first); the last group, from the
// first group start g with g + group >= microbatches, takes what is left.
PipelinePass interleaved_pass(PassKind kind, int k, int microbatches, int virtual_stages, int group) {
  const int last_group_start = (microbatches - 1) / group * group;
  int start = k / (group * virtual_stages) * group, size = group;
  if (start >= last_group_start) {
    start = last_group_start;
    size = microbatches - last_group_start;
  }
  const int in_group = k - start * virtual_stages;
  int chunk = in_group / size;
  if (kind == PassKind::Backward) chunk = virtual_stages - 1 - chunk;
  return {kind, start + in_group % size, chunk};
}

}  // namespace

std::vector<std::vector<PipelinePass>> pipeline_schedule(int stages, int microbatches, int virtual_stages,
                                                         int microbatch_group) {
  std::vector<std::vector<PipelinePass>> lists(static_cast<std::size_t>(stages));
  const int total = microbatches * virtual_stages;
  const int group = group_size(stages, microbatch_group);
  for (int s = 0; s < stages; ++s) {
    auto& list = lists[static_cast<std::size_t>(s)];
    list.reserve(static_cast<std::size_t>(2 * total));
    auto pass = [&](PassKind kind, int k) {
      return virtual_stages == 1 ? PipelinePass{kind, k, 0}
                                 : interleaved_pass(kind, k, microbatches, virtual_stages, group);
    };
    const int warmup = warmup_passes(s, stages, microbatches, virtual_stages, microbatch_group);
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

int max_in_flight(int stage, int stages, int microbatches, int virtual_stages, int microbatch_group) {
  const int total = microbatches * virtual_stages;
  return std::min(warmup_passes(stage, stages, microbatches, virtual_stages, microbatch_group) + 1, total);
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
