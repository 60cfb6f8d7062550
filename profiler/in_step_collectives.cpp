#include "profiler/in_step_collectives.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "profiler/gathered_events.h"
#include "profiler/step_breakdown.h"

namespace cc::profiler {

namespace {

using Key = std::tuple<CollectiveKind, int, double>;  // kind, group size, bytes
Key key_of(const InStepCollective& c) { return {c.kind, c.group_size, c.bytes}; }

}  // namespace

std::vector<InStepCollective> in_step_collectives(const std::vector<std::vector<RecordedOp>>& per_rank,
                                                  const std::vector<std::vector<int>>& tp_groups,
                                                  long first_timed_step, const std::set<long>& left_out) {
  struct Call {
    CollectiveKind kind;
    double bytes;
    int ranks = 0;
    double shortest_s = std::numeric_limits<double>::infinity();
  };
  std::vector<InStepCollective> out;
  for (const std::vector<int>& ranks : tp_groups) {
    const int tp = static_cast<int>(ranks.size());
    if (tp <= 1) continue;
    std::map<OpOccurrence, Call> calls;
    for_each_occurrence(per_rank, ranks, [&](const OpOccurrence& occurrence, const RecordedOp& e) {
      if (!e.op.collective || !is_tp_collective(e.op.name) || e.step < first_timed_step || left_out.count(e.step))
        return;
      Call& c = calls.try_emplace(occurrence, Call{e.op.kind, static_cast<double>(e.op.shape[0])}).first->second;
      ++c.ranks;
      c.shortest_s = std::min(c.shortest_s, e.duration_s);
    });
    std::vector<InStepCollective> group;
    for (const auto& [occurrence, c] : calls)
      if (c.ranks == tp) group.push_back({c.kind, tp, c.bytes, 1, c.shortest_s});
    add_in_step_collectives(out, group);
  }
  return out;
}

void add_in_step_collectives(std::vector<InStepCollective>& into, const std::vector<InStepCollective>& more) {
  std::map<Key, InStepCollective> merged;
  const std::vector<InStepCollective>& before = into;
  for (const std::vector<InStepCollective>* list : {&before, &more})
    for (const InStepCollective& c : *list) {
      const auto [it, fresh] = merged.try_emplace(key_of(c), c);
      if (fresh) continue;
      InStepCollective& m = it->second;
      m.mean_s = (m.mean_s * m.calls + c.mean_s * c.calls) / (m.calls + c.calls);
      m.calls += c.calls;
    }
  into.clear();
  for (const auto& [key, c] : merged) into.push_back(c);
}

}  // namespace cc::profiler
