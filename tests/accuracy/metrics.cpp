#include "accuracy/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "sim/memory_model.h"
#include "sim/units.h"

namespace cc::accuracy {

double relative_error(double predicted, double measured) { return predicted / measured - 1.0; }

ErrorSummary summarize(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                       const std::function<bool(const CorpusRow&)>& keep) {
  ErrorSummary s;
  double abs_sum = 0, signed_sum = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (keep && !keep(rows[i])) continue;
    const double e = relative_error(predicted[i], rows[i].measured_s);
    ++s.rows;
    abs_sum += std::abs(e);
    signed_sum += e;
    s.worst_abs = std::max(s.worst_abs, std::abs(e));
  }
  if (s.rows > 0) {
    s.mean_abs = abs_sum / static_cast<double>(s.rows);
    s.signed_mean = signed_sum / static_cast<double>(s.rows);
  }
  return s;
}

std::map<std::string, ErrorSummary> summarize_by(const std::vector<CorpusRow>& rows,
                                                 const std::vector<double>& predicted,
                                                 const std::function<std::string(const CorpusRow&)>& key) {
  std::map<std::string, ErrorSummary> out;
  for (const auto& r : rows) out.try_emplace(key(r));
  for (auto& [k, summary] : out) {
    const std::string wanted = k;
    summary = summarize(rows, predicted, [&](const CorpusRow& r) { return key(r) == wanted; });
  }
  return out;
}

ErrorSummary source_weighted(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted) {
  const auto by = summarize_by(rows, predicted, [](const CorpusRow& r) { return r.source; });
  ErrorSummary s;
  for (const auto& [source, x] : by) {
    s.rows += x.rows;
    s.mean_abs += x.mean_abs / static_cast<double>(by.size());
    s.signed_mean += x.signed_mean / static_cast<double>(by.size());
    s.worst_abs = std::max(s.worst_abs, x.worst_abs);
  }
  return s;
}

double within_job_error(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                        std::size_t min_layouts) {
  std::map<std::string, std::vector<std::size_t>> jobs;
  for (std::size_t i = 0; i < rows.size(); ++i) jobs[rows[i].job()].push_back(i);
  std::map<std::string, std::pair<double, double>> per_source;  // sum of |deviation|, count
  for (const auto& [job, idx] : jobs) {
    if (idx.size() < min_layouts) continue;
    double mean = 0;
    for (std::size_t i : idx) mean += std::log(predicted[i] / rows[i].measured_s) / static_cast<double>(idx.size());
    for (std::size_t i : idx) {
      auto& [sum, n] = per_source[rows[i].source];
      sum += std::abs(std::exp(std::log(predicted[i] / rows[i].measured_s) - mean) - 1.0);
      n += 1;
    }
  }
  double total = 0;
  for (const auto& [source, sn] : per_source) total += sn.first / sn.second / static_cast<double>(per_source.size());
  return total;
}

namespace {

// The rows of one regime: at least `min_gpus` GPUs and fewer than `below_gpus` (0 = no bound).
struct Regime {
  std::vector<CorpusRow> rows;
  std::vector<double> predicted;
};
Regime regime_rows(const std::vector<CorpusRow>& all_rows, const std::vector<double>& all_predicted, int min_gpus,
                   int below_gpus) {
  Regime g;
  for (std::size_t i = 0; i < all_rows.size(); ++i)
    if (all_rows[i].config.gpus() >= min_gpus && (below_gpus == 0 || all_rows[i].config.gpus() < below_gpus)) {
      g.rows.push_back(all_rows[i]);
      g.predicted.push_back(all_predicted[i]);
    }
  return g;
}

// Bounds on measured / predicted leaving `tail` of the weight out on each side, each source
// weighted alike, over the rows `use` keeps.
template <typename Use>
std::pair<double, double> ratio_bounds(const Regime& g, double tail, Use use) {
  std::map<std::string, double> per_source;
  for (const auto& r : g.rows)
    if (use(r)) per_source[r.source] += 1;
  std::vector<std::pair<double, double>> points;  // (log measured/predicted, weight)
  for (std::size_t i = 0; i < g.rows.size(); ++i)
    if (use(g.rows[i]))
      points.emplace_back(std::log(g.rows[i].measured_s / g.predicted[i]), 1.0 / per_source[g.rows[i].source]);
  if (points.empty()) return {1.0, 1.0};
  std::sort(points.begin(), points.end());
  const double total = static_cast<double>(per_source.size());
  auto quantile = [&](double q) {
    double seen = 0;
    for (const auto& [x, w] : points) {
      seen += w;
      // Within rounding: ten rows of weight 0.1 sum to just under 1, and must reach it.
      if (seen >= q * total - 1e-9) return x;
    }
    return points.back().first;
  };
  return {std::exp(tail > 0 ? quantile(tail) : points.front().first),
          std::exp(tail > 0 ? quantile(1 - tail) : points.back().first)};
}

IntervalCoverage coverage_of(const Regime& g, double tail) {
  IntervalCoverage c;
  c.tail = tail;
  std::map<std::string, std::pair<double, double>> inside;  // per source: inside, rows
  for (const std::string& source : sources_of(g.rows)) {
    const auto [low, high] = ratio_bounds(g, tail, [&](const CorpusRow& r) { return r.source != source; });
    for (std::size_t i = 0; i < g.rows.size(); ++i) {
      if (g.rows[i].source != source) continue;
      const double ratio = g.rows[i].measured_s / g.predicted[i];
      inside[source].first += ratio >= low && ratio <= high;
      inside[source].second += 1;
    }
  }
  double rows_inside = 0, rows = 0;
  for (const auto& [source, in_n] : inside) {
    c.by_source[source] = in_n.first / in_n.second;
    c.sources_alike += c.by_source[source] / static_cast<double>(inside.size());
    rows_inside += in_n.first;
    rows += in_n.second;
  }
  c.rows = rows > 0 ? rows_inside / rows : 0;
  return c;
}

}  // namespace

IntervalCoverage nested_coverage(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                                 int min_gpus, int below_gpus, double tail) {
  return coverage_of(regime_rows(rows, predicted, min_gpus, below_gpus), tail);
}

namespace {

// From the nominal central 80% outwards, a percentile at a time, to the first interval whose
// nested coverage reaches 80%; the widest (every held-out error) where none does.
double tail_reaching_nominal(const Regime& g) {
  for (int percent = 10; percent > 0; --percent)
    if (coverage_of(g, percent / 100.0).sources_alike >= kNominalCoverage) return percent / 100.0;
  return 0;
}

}  // namespace

double interval_tail(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted, int min_gpus,
                     int below_gpus) {
  return tail_reaching_nominal(regime_rows(rows, predicted, min_gpus, below_gpus));
}

ErrorBand error_band(const std::vector<CorpusRow>& all_rows, const std::vector<double>& all_predicted, int min_gpus,
                     int below_gpus, std::string basis) {
  const Regime g = regime_rows(all_rows, all_predicted, min_gpus, below_gpus);
  ErrorBand b;
  b.min_gpus = min_gpus;
  b.basis = std::move(basis);
  if (g.rows.empty()) return b;
  std::tie(b.low, b.high) = ratio_bounds(g, tail_reaching_nominal(g), [](const CorpusRow&) { return true; });
  b.mean_abs = source_weighted(g.rows, g.predicted).mean_abs;
  b.within_job_mean_abs = rank_jobs(g.rows, g.predicted).empty() ? b.mean_abs : within_job_error(g.rows, g.predicted);
  return b;
}

std::vector<ErrorBand> error_bands(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                                   const std::string& basis) {
  return {error_band(rows, predicted, 1, kLargeRunGpus, fmt::format("{}, runs on < {} GPUs", basis, kLargeRunGpus)),
          error_band(rows, predicted, kLargeRunGpus, 0, fmt::format("{}, runs on >= {} GPUs", basis, kLargeRunGpus))};
}

double predicted_allocated_gib(const CorpusRow& row) {
  const MemoryReport m = memory_model(row.model, row.config, {}, &row.cluster.gpu);
  const MemoryBreakdown& last = m.stages.back().bytes;
  return (last.resident() + last.activations) / kGiB;
}

namespace {

std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < order.size();) {  // ties share their mean rank
    std::size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 1.0;
}

}  // namespace

std::vector<JobRanking> rank_jobs(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                                  std::size_t min_layouts) {
  std::map<std::string, std::vector<std::size_t>> jobs;
  for (std::size_t i = 0; i < rows.size(); ++i) jobs[rows[i].job()].push_back(i);
  std::vector<JobRanking> out;
  for (const auto& [job, idx] : jobs) {
    if (idx.size() < min_layouts) continue;
    std::vector<double> m, p;
    for (std::size_t i : idx) {
      m.push_back(rows[i].measured_s);
      p.push_back(predicted[i]);
    }
    JobRanking j;
    j.job = job;
    j.layouts = idx.size();
    j.spearman = pearson(ranks(m), ranks(p));
    const std::size_t best_predicted = static_cast<std::size_t>(std::min_element(p.begin(), p.end()) - p.begin());
    j.regret = m[best_predicted] / *std::min_element(m.begin(), m.end()) - 1.0;
    out.push_back(j);
  }
  return out;
}

}  // namespace cc::accuracy
