// gathered_events.h — brings every rank's recorded scopes to rank 0, so the profiler can
// take, for each op occurrence, the slowest rank of its tensor-parallel group (the group
// waits for it at the next collective) and draw one timeline of all ranks.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/host_recorder.h"

namespace cc::profiler {

// Rank-indexed events on rank 0 (empty elsewhere). Op names point into `names`, which
// must outlive the result.
std::vector<std::vector<RecordedOp>> gather_events(const std::vector<RecordedOp>& mine, std::set<std::string>& names);

// One op call as every rank of its TP group knows it: (name, phase, layer, microbatch, step)
// and how many calls with that key came before it on the rank. The ranks of a TP group run
// the same program, so equal occurrences on two ranks are the same call.
using OpOccurrence = std::tuple<std::string, int, int, int, long, int>;

// Calls `visit(occurrence, op)` for every op recorded on `ranks`, rank by rank.
void for_each_occurrence(const std::vector<std::vector<RecordedOp>>& per_rank, const std::vector<int>& ranks,
                         const std::function<void(const OpOccurrence&, const RecordedOp&)>& visit);

// For every occurrence of an op on the ranks of one group (the run's TP groups, as its
// ParallelGrid lists them), one event whose self time is the slowest rank's; groups in the
// order given, ops in rank order.
std::vector<RecordedOp> slowest_in_groups(const std::vector<std::vector<RecordedOp>>& per_rank,
                                          const std::vector<std::vector<int>>& groups);

}  // namespace cc::profiler
