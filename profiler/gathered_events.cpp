#include "profiler/gathered_events.h"

#include <mpi.h>

#include <algorithm>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

namespace cc::profiler {

namespace {

nlohmann::json to_json(const std::vector<RecordedOp>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : events)
    out.push_back({e.op.name, static_cast<int>(e.op.phase), e.op.layer, e.op.microbatch, e.op.shape, e.op.collective,
                   e.step, e.start_s, e.duration_s, e.self_s, static_cast<int>(e.op.kind)});
  return out;
}

std::vector<RecordedOp> from_json(const nlohmann::json& array, std::set<std::string>& names) {
  std::vector<RecordedOp> events;
  for (const auto& a : array) {
    RecordedOp e;
    e.op.name = names.insert(a[0].get<std::string>()).first->c_str();
    e.op.phase = static_cast<Phase>(a[1].get<int>());
    e.op.layer = a[2].get<int>();
    e.op.microbatch = a[3].get<int>();
    e.op.shape = a[4].get<std::array<std::int64_t, 4>>();
    e.op.collective = a[5].get<bool>();
    e.step = a[6].get<long>();
    e.start_s = a[7].get<double>();
    e.duration_s = a[8].get<double>();
    e.self_s = a[9].get<double>();
    e.op.kind = static_cast<CollectiveKind>(a[10].get<int>());
    events.push_back(e);
  }
  return events;
}

}  // namespace

std::vector<std::vector<RecordedOp>> gather_events(const std::vector<RecordedOp>& mine, std::set<std::string>& names) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const std::string text = to_json(mine).dump();
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(world));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(world), 0);
  for (std::size_t i = 1; i < offsets.size(); ++i) offsets[i] = offsets[i - 1] + lengths[i - 1];
  std::string all(rank == 0 ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0, '\0');
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::vector<RecordedOp>> per_rank;
  if (rank == 0)
    for (std::size_t r = 0; r < offsets.size(); ++r)
      per_rank.push_back(from_json(
          nlohmann::json::parse(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r]))),
          names));
  return per_rank;
}

void for_each_occurrence(const std::vector<std::vector<RecordedOp>>& per_rank, const std::vector<int>& ranks,
                         const std::function<void(const OpOccurrence&, const RecordedOp&)>& visit) {
  for (int r : ranks) {
    std::map<std::tuple<std::string, int, int, int, long>, int> seen;
    for (const RecordedOp& e : per_rank[static_cast<std::size_t>(r)]) {
      const auto base =
          std::make_tuple(std::string(e.op.name), static_cast<int>(e.op.phase), e.op.layer, e.op.microbatch, e.step);
      visit(std::tuple_cat(base, std::make_tuple(seen[base]++)), e);
    }
  }
}

std::vector<RecordedOp> slowest_in_groups(const std::vector<std::vector<RecordedOp>>& per_rank,
                                          const std::vector<std::vector<int>>& groups) {
  std::vector<RecordedOp> out;
  for (const std::vector<int>& group : groups) {
    std::map<OpOccurrence, std::size_t> slot;  // occurrence -> index in `out`
    for_each_occurrence(per_rank, group, [&](const OpOccurrence& occurrence, const RecordedOp& e) {
      const auto [it, added] = slot.try_emplace(occurrence, out.size());
      if (added)
        out.push_back(e);
      else
        out[it->second].self_s = std::max(out[it->second].self_s, e.self_s);
    });
  }
  return out;
}

}  // namespace cc::profiler
