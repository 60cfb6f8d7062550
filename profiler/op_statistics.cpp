#include "profiler/op_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

namespace cc::profiler {

namespace {

bool is_step(const RecordedOp& e) { return std::strcmp(e.op.name, kStepScope) == 0; }

// The simulator's shape convention: unused dimensions are 1, not 0.
std::array<std::int64_t, 4> normalized(const std::array<std::int64_t, 4>& shape) {
  std::array<std::int64_t, 4> s = shape;
  for (auto& d : s) d = std::max<std::int64_t>(d, 1);
  return s;
}

}  // namespace

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

double percentile(std::vector<double> values, double pct) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(pct / 100.0 * static_cast<double>(values.size()));
  const auto at = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[at];
}

std::set<long> stalled_steps(const std::vector<double>& step_seconds, long first_timed_step) {
  const auto first = static_cast<std::size_t>(std::max(first_timed_step, 1L) - 1);  // index of the first timed step
  std::set<long> stalled;
  if (step_seconds.size() < first + 3) return stalled;  // a median of fewer says nothing about outliers
  const auto timed = step_seconds.begin() + static_cast<std::ptrdiff_t>(first);
  const double median = percentile(std::vector<double>(timed, step_seconds.end()), 50);
  for (std::size_t k = first; k < step_seconds.size(); ++k)
    if (step_seconds[k] > kStallRatio * median) stalled.insert(static_cast<long>(k) + 1);
  return stalled;
}

std::vector<OpRecord> summarize_ops(const std::vector<RecordedOp>& events, long first_timed_step,
                                    const std::string& dtype, int tp) {
  using Key = std::tuple<std::string, int, std::array<std::int64_t, 4>>;
  std::map<Key, std::size_t> index;  // key -> position in `records`
  std::vector<OpRecord> records;
  std::vector<std::vector<double>> samples;
  std::vector<double> host_sum;
  for (const auto& e : events) {
    if (e.op.collective || is_step(e) || e.step < first_timed_step) continue;
    const Key key{e.op.name, static_cast<int>(e.op.phase), normalized(e.op.shape)};
    auto [it, added] = index.try_emplace(key, records.size());
    if (added) {
      OpRecord r;
      r.name = e.op.name;
      r.phase = e.op.phase;
      r.shape = normalized(e.op.shape);
      r.dtype = dtype;
      r.tp = tp;
      records.push_back(r);
      samples.emplace_back();
      host_sum.push_back(0);
    }
    samples[it->second].push_back(e.self_s);
    host_sum[it->second] += e.host_self_s;
  }
  for (std::size_t i = 0; i < records.size(); ++i) {
    records[i].samples = static_cast<int>(samples[i].size());
    records[i].mean_s = mean(samples[i]);
    records[i].median_s = percentile(samples[i], 50);
    records[i].p10_s = percentile(samples[i], 10);
    records[i].p90_s = percentile(samples[i], 90);
    records[i].host_mean_s = host_sum[i] / static_cast<double>(samples[i].size());
  }
  return records;
}

StepCoverage step_coverage(const std::vector<RecordedOp>& events, long first_timed_step) {
  StepCoverage c;
  for (const auto& e : events) {
    if (e.step < first_timed_step) continue;
    if (is_step(e)) {
      ++c.steps;
      c.step_s += e.duration_s;
      c.unannotated_s += e.self_s;
      c.step_durations.push_back(e.duration_s);
    } else if (e.op.collective) {
      c.collective_s += e.self_s;
    } else {
      c.compute_s += e.self_s;
    }
  }
  return c;
}

}  // namespace cc::profiler
