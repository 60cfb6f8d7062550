// in_step_collectives.h — what the tensor-parallel group's collectives cost inside the
// profiled training steps, as opposed to the collective sweep's tight loop (the record and
// why: sim/cost_database.h InStepCollective).
#pragma once

#include <set>
#include <vector>

#include "profiler/host_recorder.h"
#include "sim/cost_database.h"

namespace cc::profiler {

// Every TP-group collective call of the timed steps (from `first_timed_step` on, `left_out`
// steps skipped), matched across the ranks of its TP group (`tp_groups`, as the run's
// ParallelGrid lists them) by its OpOccurrence (gathered_events.h), costs its shortest
// duration over the group: the last rank to arrive waited for nobody, so its time is the
// collective's own, while the others' also holds their wait for it (which the op times
// already price: each op is priced at its slowest rank). Calls that some rank of the group
// did not record are left out. One record per (kind, bytes), ascending; none when TP is 1.
std::vector<InStepCollective> in_step_collectives(const std::vector<std::vector<RecordedOp>>& per_rank,
                                                  const std::vector<std::vector<int>>& tp_groups,
                                                  long first_timed_step, const std::set<long>& left_out);

// Folds `more` into `into`: records of the same (kind, group size, bytes) add their calls and
// take the call-weighted mean time; the result stays ascending.
void add_in_step_collectives(std::vector<InStepCollective>& into, const std::vector<InStepCollective>& more);

}  // namespace cc::profiler
