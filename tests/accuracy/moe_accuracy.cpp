#include "accuracy/moe_accuracy.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "accuracy/fit.h"
#include "accuracy/metrics.h"
#include "accuracy/report.h"
#include "sim/memory_model.h"
#include "sim/units.h"

namespace cc::accuracy {

namespace {

std::string abs_pct(double x) { return fmt::format("{:.1f}%", 100 * x); }

double median(std::vector<double> x) {
  if (x.empty()) return 0;
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

// A memory figure is comparable when the row states one and says what it measures.
bool states_peak(const CorpusRow& r) { return r.measured_peak_gib && !r.assumes("peak_memory_gib"); }

// What a refusal is counted under: a feature or FP8 recipe by its message (one per feature);
// anything else by the flag it names, so rows refused for one rule count together.
std::string refusal_reason(const RefusedRow& r) {
  if (r.field.empty() || r.field == "features" || r.field == "fp8_recipe") return r.reason;
  return r.field;
}

std::string cluster_of(const CorpusRow& r) { return r.cluster.name; }

}  // namespace

MoeRows load_moe_rows(const std::string& corpus_folder) {
  MoeRows m;
  m.rows = load_moe_corpus(corpus_folder + "/moe", &m.refused);
  return m;
}

MemoryComparison compare_peak_memory(const std::vector<CorpusRow>& rows) {
  std::vector<double> errors;
  for (const CorpusRow& r : rows)
    if (states_peak(r)) errors.push_back(std::abs(relative_error(predicted_allocated_gib(r), *r.measured_peak_gib)));
  MemoryComparison c;
  c.rows = errors.size();
  if (errors.empty()) return c;
  for (double e : errors) {
    c.mean_abs += e / static_cast<double>(errors.size());
    c.within_10 += (e <= 0.10) / static_cast<double>(errors.size());
  }
  c.median_abs = median(errors);
  return c;
}

PeakSplit split_peak_memory(const std::vector<CorpusRow>& rows) {
  std::vector<double> resident, transient;
  for (const CorpusRow& r : rows) {
    if (!states_peak(r) || !r.measured_resident_gib || !(*r.measured_peak_gib > *r.measured_resident_gib)) continue;
    const MemoryReport report = memory_model(r.model, r.config, {}, &r.cluster.gpu);
    const MemoryBreakdown& last = report.stages.back().bytes;
    resident.push_back(relative_error(last.resident() / kGiB, *r.measured_resident_gib));
    transient.push_back(relative_error(last.activations / kGiB, *r.measured_peak_gib - *r.measured_resident_gib));
  }
  return {resident.size(), median(resident), median(transient)};
}

TimeComparison compare_time(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted) {
  TimeComparison c;
  c.rows = rows.size();
  if (rows.empty()) return c;
  std::vector<double> errors;
  const double n = static_cast<double>(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double e = std::abs(relative_error(predicted[i], rows[i].measured_s));
    errors.push_back(e);
    c.mean_abs += e / n;
    c.within_10 += (e <= 0.10) / n;
    c.predicted_over_measured += predicted[i] / rows[i].measured_s / n;
  }
  c.median_abs = median(errors);
  return c;
}

std::string moe_report(const MoeRows& moe, const Calibration& fitted, const std::vector<CorpusRow>& dense) {
  const std::vector<double> predicted = predict(moe.rows, fitted);

  // One line per source, then per source and cluster.
  std::map<std::string, std::vector<std::size_t>> groups;
  std::map<std::string, std::size_t> refused_in;
  for (std::size_t i = 0; i < moe.rows.size(); ++i) {
    groups[moe.rows[i].source].push_back(i);
    groups[moe.rows[i].source + " / " + cluster_of(moe.rows[i])].push_back(i);
  }
  for (const RefusedRow& r : moe.refused) {
    ++refused_in[r.source];
    groups[r.source];
  }
  std::string table =
      "| source / cluster | priced | refused | time mean | time median | time within 10% | predicted / measured | "
      "memory rows | memory median | memory within 10% |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& [key, members] : groups) {
    std::vector<CorpusRow> rows;
    std::vector<double> p;
    for (std::size_t i : members) {
      rows.push_back(moe.rows[i]);
      p.push_back(predicted[i]);
    }
    const TimeComparison t = compare_time(rows, p);
    const MemoryComparison m = compare_peak_memory(rows);
    const auto refused = refused_in.find(key);
    const std::string time = t.rows ? fmt::format("{} | {} | {} | {:.2f}", abs_pct(t.mean_abs), abs_pct(t.median_abs),
                                                  abs_pct(t.within_10), t.predicted_over_measured)
                                    : std::string(" | | |");
    const std::string memory = m.rows ? fmt::format("{} | {}", abs_pct(m.median_abs), abs_pct(m.within_10)) : " |";
    table += fmt::format("| {} | {} | {} | {} | {} | {} |\n", key, t.rows,
                         refused == refused_in.end() ? std::string() : std::to_string(refused->second), time, m.rows,
                         memory);
  }

  const TimeComparison all = compare_time(moe.rows, predicted);
  const MemoryComparison memory = compare_peak_memory(moe.rows);
  std::vector<CorpusRow> dense_ci;
  for (const CorpusRow& r : dense)
    if (r.source == "megatron-functional-tests") dense_ci.push_back(r);
  const MemoryComparison dense_memory = compare_peak_memory(dense_ci);
  const PeakSplit split = split_peak_memory(moe.rows);

  std::string md = fmt::format(
      "\n## Mixture of experts (held out)\n\nThe measured MoE runs of `tests/reference/measured/moe/` (sources and "
      "schema in its README) are predicted, never fitted: the constants above were fitted without them, so each MoE "
      "source is predicted by a fit that never saw it (leave-one-source-out holds by construction) and the shipped "
      "constants do not depend on them. {} rows are priced, {} refused (by reason below). Iteration time: mean "
      "error {}, median {}, {} within 10%, predicted / measured {:.2f} on average. Peak memory ({} rows; "
      "`mem-max-allocated-bytes` of the last rank against the memory model's last stage without its reserve, as in "
      "\"Peak memory\" above): median error {}, {} within 10%; the dense functional tests, compared the same way: "
      "median {}, {} within 10% ({} rows). Where a row also logs the memory resident between steps "
      "(`mem-allocated-bytes`, {} rows), the miss splits into weights, gradients and optimizer state against it "
      "(median {}) and activations against the rest of the peak (median {}).\n\n",
      moe.rows.size(), moe.refused.size(), abs_pct(all.mean_abs), abs_pct(all.median_abs), abs_pct(all.within_10),
      all.predicted_over_measured, memory.rows, abs_pct(memory.median_abs), abs_pct(memory.within_10),
      abs_pct(dense_memory.median_abs), abs_pct(dense_memory.within_10), dense_memory.rows, split.rows,
      fmt::format("{:+.1f}%", 100 * split.resident_median), fmt::format("{:+.1f}%", 100 * split.transient_median));
  md += table;

  std::map<std::string, std::map<std::string, int>> reasons;  // reason -> source -> rows
  std::map<std::string, std::string> example;
  for (const RefusedRow& r : moe.refused) {
    const std::string reason = refusal_reason(r);
    ++reasons[reason][r.source];
    example.emplace(reason, r.reason);
  }
  if (!reasons.empty()) {
    md += "\nRefused, by reason (the flag or column refused, one message as an example):\n\n"
          "| reason | rows by source | example |\n|---|---|---|\n";
    for (const auto& [reason, by_source] : reasons) {
      std::string counts;
      for (const auto& [source, n] : by_source) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", source, n);
      md += fmt::format("| {} | {} | {} |\n", markdown_cell(reason), counts, markdown_cell(example.at(reason)));
    }
  }

  md += "\n| id | layout | GPUs | measured s | predicted s | error | measured peak GiB | predicted GiB | error |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < moe.rows.size(); ++i) {
    const CorpusRow& r = moe.rows[i];
    std::string memory = "| | | ";
    if (states_peak(r)) {
      const double p = predicted_allocated_gib(r);
      memory = fmt::format("| {:.3f} | {:.3f} | {:+.1f}% ", *r.measured_peak_gib, p,
                           100 * relative_error(p, *r.measured_peak_gib));
    }
    md += fmt::format("| {} | {} {} | {} | {:.4g} | {:.4g} | {:+.1f}% {}|\n", r.id, r.model.name,
                      markdown_cell(r.config.summary()), r.config.gpus(), r.measured_s, predicted[i],
                      100 * relative_error(predicted[i], r.measured_s), memory);
  }
  return md;
}

}  // namespace cc::accuracy
