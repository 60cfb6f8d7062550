// gathered_events.h — brings every rank's recorded scopes to rank 0, so the profiler can
// take, for each op occurrence, the slowest rank of its tensor-parallel group (the group
// waits for it at the next collective) and draw one timeline of all ranks.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "profiler/host_recorder.h"

namespace cc::profiler {

// Rank-indexed events on rank 0 (empty elsewhere). Op names point into `names`, which
// must outlive the result.
std::vector<std::vector<RecordedOp>> gather_events(const std::vector<RecordedOp>& mine, std::set<std::string>& names);

// For every occurrence of an op on the ranks of one TP group (consecutive ranks, TP
// innermost as in the engine's layout), one event whose self time is the slowest rank's.
// Occurrences match by (name, phase, layer, microbatch, step) and order of appearance.
std::vector<RecordedOp> slowest_in_tp_groups(const std::vector<std::vector<RecordedOp>>& per_rank, int tp);

}  // namespace cc::profiler
