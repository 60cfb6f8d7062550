#include "profiler/pooled_profiles.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "profiler/in_step_collectives.h"
#include "sim/error.h"

namespace cc::profiler {

namespace {

using OpKey = std::tuple<std::string, Phase, std::array<std::int64_t, 4>, std::string, int>;

OpKey key_of(const OpRecord& r) { return {r.name, r.phase, r.shape, r.dtype, r.tp}; }

std::string run_summary(const ProfiledRun& r) {
  return fmt::format("TP {} micro batch {} global batch {} recompute {}{}", r.tp, r.micro_batch, r.global_batch,
                     r.recompute, r.sequence_parallel ? " SP" : "");
}

// The median of `values` (the mean of the middle two for an even count).
double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Each time field of `into` becomes the median of that field over `records`.
template <typename Record>
void take_medians(Record& into, const std::vector<const Record*>& records,
                  std::initializer_list<double Record::*> times) {
  for (double Record::*t : times) {
    std::vector<double> values;
    for (const Record* r : records) values.push_back(r->*t);
    into.*t = median_of(std::move(values));
  }
}

}  // namespace

CostDatabase pool_profiles(const std::vector<CostDatabase>& rounds) {
  if (rounds.empty()) throw SpecError("pool_profiles: no profiles to pool");
  CostDatabase pooled = rounds.front();
  pooled.ops.clear();
  pooled.collectives.clear();
  pooled.in_step_collectives.clear();
  if (rounds.size() > 1) pooled.command += fmt::format(" (pooled over {} profiles)", rounds.size());

  std::map<OpKey, std::size_t> index;  // key -> position in pooled.ops (first-seen order)
  std::vector<std::vector<const OpRecord*>> op_rounds;  // per pooled op: its record in each round that has it
  std::vector<std::vector<const ProfiledRun*>> run_rounds(pooled.runs.size());
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    const CostDatabase& db = rounds[k];
    if (db.dtype != pooled.dtype)
      throw SpecError(fmt::format("profile {} measured {}, profile 1 measured {}: they do not pool", k + 1, db.dtype,
                                  pooled.dtype));
    if (db.runs.size() != pooled.runs.size())
      throw SpecError(fmt::format("profile {} ran {} layouts, profile 1 ran {}: they do not pool", k + 1,
                                  db.runs.size(), pooled.runs.size()));
    for (std::size_t i = 0; i < db.runs.size(); ++i) {
      const ProfiledRun& r = db.runs[i];
      const ProfiledRun& p = pooled.runs[i];
      if (run_summary(r) != run_summary(p) || r.model != p.model)
        throw SpecError(fmt::format("profile {} ran '{}' where profile 1 ran '{}': they do not pool", k + 1,
                                    run_summary(r), run_summary(p)));
      run_rounds[i].push_back(&r);
    }
    for (const OpRecord& r : db.ops) {
      const auto [it, fresh] = index.try_emplace(key_of(r), pooled.ops.size());
      if (fresh) {
        pooled.ops.push_back(r);
        op_rounds.emplace_back();
      }
      op_rounds[it->second].push_back(&r);
    }
    if (pooled.collectives.empty()) pooled.collectives = db.collectives;
    add_in_step_collectives(pooled.in_step_collectives, db.in_step_collectives);
  }
  for (std::size_t i = 0; i < pooled.runs.size(); ++i) {
    ProfiledRun& p = pooled.runs[i];
    take_medians(p, run_rounds[i], {&ProfiledRun::iteration_mean_s, &ProfiledRun::iteration_median_s,
                                    &ProfiledRun::iteration_p10_s, &ProfiledRun::iteration_p90_s});
    p.timed_steps = 0;
    for (const ProfiledRun* r : run_rounds[i]) p.timed_steps += r->timed_steps;
  }
  for (std::size_t i = 0; i < pooled.ops.size(); ++i) {
    OpRecord& p = pooled.ops[i];
    take_medians(p, op_rounds[i],
                 {&OpRecord::mean_s, &OpRecord::median_s, &OpRecord::p10_s, &OpRecord::p90_s, &OpRecord::host_mean_s});
    p.samples = 0;
    for (const OpRecord* r : op_rounds[i]) p.samples += r->samples;
  }
  return pooled;
}

CostDatabase join_profiles(const std::vector<CostDatabase>& parts) {
  if (parts.empty()) throw SpecError("join_profiles: no profiles to join");
  CostDatabase joined = parts.front();
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const CostDatabase& db = parts[k];
    if (db.dtype != joined.dtype)
      throw SpecError(fmt::format("profile {} measured {}, profile 1 measured {}: they do not join", k + 1, db.dtype,
                                  joined.dtype));
    joined.command += " && " + db.command;
    joined.runs.insert(joined.runs.end(), db.runs.begin(), db.runs.end());
    joined.ops.insert(joined.ops.end(), db.ops.begin(), db.ops.end());
    if (joined.collectives.empty()) joined.collectives = db.collectives;
    add_in_step_collectives(joined.in_step_collectives, db.in_step_collectives);
  }
  return joined;
}

double weight_of_later_profile(double t_s, double before_s, double after_s) {
  if (after_s <= before_s) return 0;
  return std::clamp((t_s - before_s) / (after_s - before_s), 0.0, 1.0);
}

}  // namespace cc::profiler
