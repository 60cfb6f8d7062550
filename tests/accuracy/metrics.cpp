#include "accuracy/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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

ErrorBand error_band(const std::vector<CorpusRow>& all_rows, const std::vector<double>& all_predicted, int min_gpus,
                     int below_gpus, std::string basis) {
  std::vector<CorpusRow> rows;
  std::vector<double> predicted;
  for (std::size_t i = 0; i < all_rows.size(); ++i)
    if (all_rows[i].config.gpus() >= min_gpus && (below_gpus == 0 || all_rows[i].config.gpus() < below_gpus)) {
      rows.push_back(all_rows[i]);
      predicted.push_back(all_predicted[i]);
    }
  ErrorBand b;
  b.min_gpus = min_gpus;
  b.basis = std::move(basis);
  if (rows.empty()) return b;
  std::map<std::string, double> per_source;
  for (const auto& r : rows) per_source[r.source] += 1;
  // (log measured/predicted, weight): each source's weights sum to 1.
  std::vector<std::pair<double, double>> points;
  for (std::size_t i = 0; i < rows.size(); ++i)
    points.emplace_back(std::log(rows[i].measured_s / predicted[i]), 1.0 / per_source[rows[i].source]);
  std::sort(points.begin(), points.end());
  const double total = static_cast<double>(per_source.size());
  auto quantile = [&](double q) {
    double seen = 0;
    for (const auto& [x, w] : points) {
      seen += w;
      if (seen >= q * total) return x;
    }
    return points.back().first;
  };
  b.low = std::exp(quantile(0.10));
  b.high = std::exp(quantile(0.90));
  b.mean_abs = source_weighted(rows, predicted).mean_abs;
  b.within_job_mean_abs = rank_jobs(rows, predicted).empty() ? b.mean_abs : within_job_error(rows, predicted);
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
