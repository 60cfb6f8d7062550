// pipeline_schedule.h — the 1F1B pipeline schedule as a pure function: for each pipeline
// rank, the ordered list of forward and backward passes it runs in one iteration. The step
// plan (step_plan.h) adds each pass's peers; the training engine executes those lists and
// the simulator replays them. Tested once, used twice.
#pragma once

#include <vector>

namespace cc {

enum class PassKind { Forward, Backward };

struct PipelinePass {
  PassKind kind;
  int microbatch;
  int chunk;  // model chunk (virtual stage) on this rank; 0 without interleaving

  bool operator==(const PipelinePass&) const = default;
};

// Non-interleaved 1F1B (PipeDream-Flush, Narayanan et al. 2021 Fig. 4 top) when
// `virtual_stages` is 1; Megatron-Core's interleaved 1F1B (Fig. 4 bottom) otherwise, which runs
// microbatches in groups of `microbatch_group` per chunk (--microbatch-group-size-per-virtual-
// pipeline-stage; 0: its default, `stages`) and needs the group in [stages, microbatches] and
// microbatches mod group 0 or >= stages (layout_validation checks it). Each rank's list has three
// phases: warm-up forwards, a steady state alternating one forward and one backward, and
// cool-down backwards.
std::vector<std::vector<PipelinePass>> pipeline_schedule(int stages, int microbatches, int virtual_stages,
                                                         int microbatch_group = 0);

// Number of warm-up forward passes rank `stage` runs before its first backward.
int warmup_passes(int stage, int stages, int microbatches, int virtual_stages, int microbatch_group = 0);

// Largest number of (microbatch, chunk) activations a rank holds at once under its list:
// forwards done whose backward has not yet run. Drives the activation-memory model.
int max_in_flight(const std::vector<PipelinePass>& passes);
// The same for rank `stage` of the schedule, without building it: the warm-up forwards
// plus the steady state's one extra (all passes when there is no steady state).
int max_in_flight(int stage, int stages, int microbatches, int virtual_stages, int microbatch_group = 0);

}  // namespace cc
