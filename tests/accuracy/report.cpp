#include "accuracy/report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "accuracy/metrics.h"
#include "accuracy/moe_accuracy.h"
#include "sim/simulator.h"

namespace cc::accuracy {

namespace {

std::string pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }
std::string abs_pct(double x) { return fmt::format("{:.1f}%", 100 * x); }

std::string summary_table(const std::vector<CorpusRow>& rows, const CrossValidation& cv, const char* what,
                          const std::function<std::string(const CorpusRow&)>& key) {
  const auto in = summarize_by(rows, cv.in_sample, key);
  const auto out = summarize_by(rows, cv.held_out, key);
  std::string t = fmt::format(
      "| {} | rows | in-sample mean | in-sample worst | in-sample signed | held-out mean | held-out worst | held-out "
      "signed |\n|---|---|---|---|---|---|---|---|\n",
      what);
  for (const auto& [k, s] : in) {
    const ErrorSummary& h = out.at(k);
    t += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", k, s.rows, abs_pct(s.mean_abs), abs_pct(s.worst_abs),
                     pct(s.signed_mean), abs_pct(h.mean_abs), abs_pct(h.worst_abs), pct(h.signed_mean));
  }
  return t;
}

// Per stack, the held-out error with the stack named and left unnamed (the default stack),
// sources weighted alike, over the rows both predict.
std::string naming_table(const std::vector<CorpusRow>& rows, const CrossValidation& cv) {
  std::map<std::string, std::vector<std::size_t>> by_stack;
  for (std::size_t i = 0; i < rows.size(); ++i) by_stack[rows[i].config.framework].push_back(i);
  std::string t =
      "| stack | sources | rows | held-out mean, stack named | held-out mean, stack unnamed | named − unnamed |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& [stack, index] : by_stack) {
    std::vector<CorpusRow> both;
    std::vector<double> named, unnamed;
    for (std::size_t i : index)
      if (!std::isnan(cv.held_out_default_stack[i])) {
        both.push_back(rows[i]);
        named.push_back(cv.held_out[i]);
        unnamed.push_back(cv.held_out_default_stack[i]);
      }
    if (both.empty()) continue;
    const double with = source_weighted(both, named).mean_abs, without = source_weighted(both, unnamed).mean_abs;
    t += fmt::format("| {} | {} | {} | {} | {} | {:+.1f} points |\n", stack, sources_of(both).size(), both.size(),
                     abs_pct(with), abs_pct(without), 100 * (with - without));
  }
  return t;
}

// Nested coverage per regime: the interval applied to each source built without it.
std::string coverage_section(const std::vector<CorpusRow>& rows, const CrossValidation& cv) {
  std::string t = fmt::format(
      "How often the interval held: for each source, the interval built from every *other* source's held-out "
      "errors (nested), and the share of that source's rows whose measurement fell inside. Where the central 80% "
      "does not contain {:.0f}% of the measurements (sources alike), the stated interval widens a percentile at a "
      "time until it does, or to every held-out error of the other sources.\n\n| regime | nested coverage of the "
      "central 80%, sources alike | rows | interval stated | its nested coverage, sources alike | rows | "
      "sources least covered |\n|---|---|---|---|---|---|---|\n",
      100 * kNominalCoverage);
  for (const auto& [min_gpus, below] : {std::pair{1, kLargeRunGpus}, std::pair{kLargeRunGpus, 0}}) {
    const IntervalCoverage nominal = nested_coverage(rows, cv.held_out, min_gpus, below, 0.10);
    const double tail = interval_tail(rows, cv.held_out, min_gpus, below);
    const IntervalCoverage stated = nested_coverage(rows, cv.held_out, min_gpus, below, tail);
    std::vector<std::pair<double, std::string>> worst;
    for (const auto& [source, share] : stated.by_source) worst.emplace_back(share, source);
    std::sort(worst.begin(), worst.end());
    std::string least;
    for (std::size_t k = 0; k < std::min<std::size_t>(3, worst.size()); ++k)
      least += fmt::format("{}{} {}", k ? ", " : "", worst[k].second, abs_pct(worst[k].first));
    t += fmt::format("| {} GPUs | {} | {} | {} | {} | {} | {} |\n",
                     below ? fmt::format("< {}", below) : fmt::format(">= {}", min_gpus), abs_pct(nominal.sources_alike),
                     abs_pct(nominal.rows),
                     tail > 0 ? fmt::format("central {:.0f}%", 100 * (1 - 2 * tail)) : std::string("every error"),
                     abs_pct(stated.sources_alike), abs_pct(stated.rows), least);
  }
  return t + "\n";
}

std::string ranking_table(const std::vector<CorpusRow>& rows, const CrossValidation& cv) {
  const auto in = rank_jobs(rows, cv.in_sample);
  const auto out = rank_jobs(rows, cv.held_out);
  std::string t =
      "| job (source, model, cluster, GPUs, global batch, sequence) | layouts | Spearman in-sample | Spearman held-out | "
      "best-layout regret in-sample | regret held-out |\n|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < in.size(); ++i)
    t += fmt::format("| {} | {} | {:.2f} | {:.2f} | {} | {} |\n", in[i].job, in[i].layouts, in[i].spearman,
                     out[i].spearman, abs_pct(in[i].regret), abs_pct(out[i].regret));
  return t;
}

}  // namespace

std::string accuracy_report(const std::vector<CorpusRow>& rows, const std::vector<RefusedRow>& refused,
                            const CrossValidation& cv, const HeldOutRows& held_out, const std::string& command) {
  const ErrorSummary in_rows = summarize(rows, cv.in_sample), out_rows = summarize(rows, cv.held_out);
  const ErrorSummary in_src = source_weighted(rows, cv.in_sample), out_src = source_weighted(rows, cv.held_out);
  const std::vector<ErrorBand> bands = error_bands(rows, cv.held_out, "");
  const auto out_jobs = rank_jobs(rows, cv.held_out);
  double min_rho = 1, worst_regret = 0;
  for (const auto& j : out_jobs) {
    min_rho = std::min(min_rho, j.spearman);
    worst_regret = std::max(worst_regret, j.regret);
  }
  std::string md;
  md += "# Accuracy of the analytic model against published runs\n\n";
  md += fmt::format(
      "Generated by `{}` from the corpus in `tests/reference/measured/` ({} rows, {} sources; schema and sources in "
      "its README). Do not edit by hand. `tests/accuracy/test_accuracy.cpp` recomputes these figures from the corpus "
      "and checks them.\n\n",
      command, rows.size(), sources_of(rows).size());
  md += "**In-sample** rows were predicted by the constants fitted to every source, the constants clustercast ships "
        "(`traces/presets/calibration/analytic-params.json`). **Held-out** rows were predicted by constants fitted "
        "to every *other* source (leave-one-source-out): the error to expect on a run like none in the corpus. "
        "Errors are predicted / measured − 1, so a negative error is a prediction that is too fast.\n\n";
  md += "## Headline\n\n| | in-sample | held-out (leave one source out) |\n|---|---|---|\n";
  md += fmt::format("| mean absolute error, every source weighted alike | {} | {} |\n", abs_pct(in_src.mean_abs),
                    abs_pct(out_src.mean_abs));
  md += fmt::format("| mean absolute error over rows | {} | {} |\n", abs_pct(in_rows.mean_abs), abs_pct(out_rows.mean_abs));
  md += fmt::format("| signed mean error, sources alike | {} | {} |\n", pct(in_src.signed_mean), pct(out_src.signed_mean));
  md += fmt::format("| worst row | {} | {} |\n", abs_pct(in_rows.worst_abs), abs_pct(out_rows.worst_abs));
  md += fmt::format("| jobs with ≥ 5 layouts: lowest Spearman, worst best-layout regret (held-out) | | {:.2f}, {} |\n",
                    min_rho, abs_pct(worst_regret));
  md += "\nThe held-out errors set every prediction's interval and the search's tie tolerance, per regime (small "
        "runs are host-bound and miss differently from large ones): the interval is the central 80% of held-out "
        "measured / predicted (sources weighted alike), widened where that held too few measurements (below); the tie tolerance is how far a layout's held-out error strays "
        "from the common error of its job (same model, cluster, GPUs, batch), or the mean error where the regime has "
        "no job of five layouts.\n\n| regime | held-out mean | interval (measured / predicted) | 24.1 days reads as "
        "| tie tolerance |\n|---|---|---|---|---|\n";
  for (const ErrorBand& b : bands)
    md += fmt::format("| {} GPUs | {} | {:.3f}–{:.3f} | {:.1f}–{:.1f} days | {} |\n",
                      b.min_gpus == 1 ? fmt::format("< {}", kLargeRunGpus) : fmt::format(">= {}", b.min_gpus),
                      abs_pct(b.mean_abs), b.low, b.high, 24.1 * b.low, 24.1 * b.high, abs_pct(b.within_job_mean_abs));
  md += "\n" + coverage_section(rows, cv);
  md += "## By source\n\n" + summary_table(rows, cv, "source", [](const CorpusRow& r) { return r.source; });
  md += "\n## By GPU generation\n\n" +
        summary_table(rows, cv, "generation", [](const CorpusRow& r) { return gpu_generation(r.cluster.gpu); });
  md += "\n## By software stack\n\n" +
        summary_table(rows, cv, "framework", [](const CorpusRow& r) { return r.config.framework; });
  md += fmt::format(
      "\n## Naming the stack\n\nEach row held out, predicted with its stack named and left unnamed ({}, what a "
      "user who does not say gets). Named, a row gets its stack's facts (which kernels it fuses, whether its pipeline "
      "sends block, how it spreads layers over stages: `traces/presets/frameworks/`) and the stack's own fitted "
      "constants{}; held out, a stack that only the held-out source measures has none, and runs on the shared "
      "constants with its facts. Rows the default stack refuses (a layer split only the named stack makes) are left "
      "out.\n\n",
      kDefaultFramework,
      kSourcesForStackConstants > 1
          ? fmt::format(" where {} or more sources measure it (else the shared ones)", kSourcesForStackConstants)
          : std::string());
  md += naming_table(rows, cv);
  md += "\n## Fully stated layouts against partly assumed ones\n\n" +
        summary_table(rows, cv, "layout", [](const CorpusRow& r) {
          return r.fully_stated() ? std::string("fully stated") : std::string("partly assumed");
        });
  md += "\n## Ranking within a job\n\nFor every job with at least five measured layouts: Spearman's rank correlation "
        "between predicted and measured times, and how much slower the predicted-best layout measured than the "
        "measured best.\n\n" +
        ranking_table(rows, cv);
  md += "\n## Fitted constants\n\nScale factors on the prior (sim/README.md), per GPU generation and per software "
        "stack, fitted to every source:\n\n| group | parameter | value |\n|---|---|---|\n";
  for (const auto& [g, values] : cv.all.generations)
    for (const auto& [k, v] : values) md += fmt::format("| {} | {} | {:.4g} |\n", g, k, v);
  for (const auto& [g, values] : cv.all.frameworks)
    for (const auto& [k, v] : values) md += fmt::format("| {} | {} | {:.4g} |\n", g, k, v);
  {
    std::string t;
    double abs_sum = 0, worst = 0;
    int n = 0, within = 0, unstated = 0;
    // Rows whose attention kernel is assumed: where Transformer Engine fell back to unfused
    // attention the s x s scores are in the peak, and only that peak tells
    // (tests/reference/measured/README.md).
    int kernel_assumed = 0, kernel_assumed_within = 0;
    for (const auto& r : rows) {
      if (!r.measured_peak_gib) continue;
      // A memory figure whose statistic the source does not give (reserved or allocated? which
      // stage?) cannot be compared with any one prediction.
      if (r.assumes("peak_memory_gib")) {
        ++unstated;
        continue;
      }
      const double predicted = predicted_allocated_gib(r);
      const double e = relative_error(predicted, *r.measured_peak_gib);
      abs_sum += std::abs(e);
      worst = std::max(worst, std::abs(e));
      const bool close = std::abs(e) <= 0.05;
      within += close;
      ++n;
      if (r.assumes("attention")) {
        ++kernel_assumed;
        kernel_assumed_within += close;
      }
      t += fmt::format("| {} | {} | {:.3f} | {:.3f} | {} |\n", r.id, markdown_cell(r.config.summary()), *r.measured_peak_gib, predicted,
                       pct(e));
    }
    if (n > 0)
      md += fmt::format(
          "\n## Peak memory\n\n{} rows state a peak: Megatron-LM's `mem-max-allocated-bytes` of the last rank, which "
          "is the PyTorch allocator's peak (weights, gradients, optimizer state, activations; no CUDA context, NCCL "
          "buffers or fragmentation), compared with the memory model's last stage without its reserve. Mean error "
          "{}, worst {}, {} of {} within 5%: {} of the {} rows that state the attention kernel, {} of the {} whose "
          "kernel is assumed (`attention` in `assumed`: where Megatron-LM let Transformer Engine choose, some containers "
          "fell back to unfused attention, whose s x s scores only the measured peak reveals). {} more rows give a "
          "memory figure without saying what it measures (`peak_memory_gib` in `assumed`) and are left out.\n\n| id "
          "| layout | measured GiB | predicted GiB | error |\n|---|---|---|---|---|\n{}",
          n, abs_pct(abs_sum / n), abs_pct(worst), within, n, within - kernel_assumed_within, n - kernel_assumed,
          kernel_assumed_within, kernel_assumed, unstated, t);
  }
  if (!refused.empty()) {
    md += fmt::format("\n## Runs the simulator refuses ({})\n\nMeasured runs whose layout the simulator does not model yet; "
                      "they are in the corpus but in no figure above.\n\n| id | source | why |\n|---|---|---|\n",
                      refused.size());
    for (const auto& r : refused) md += fmt::format("| {} | {} | {} |\n", r.id, r.source, r.reason);
  }
  md += held_out_report(held_out, cv.all);
  md += moe_report(held_out.moe, cv.all, rows);
  md += "\n## Every row\n\n| id | layout | GPUs | measured s | in-sample s | error | held-out s | error |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    md += fmt::format("| {} | {} {} | {} | {:.4g} | {:.4g} | {} | {:.4g} | {} |\n", r.id, r.model.name,
                      markdown_cell(r.config.summary()), r.config.gpus(), r.measured_s, cv.in_sample[i],
                      pct(relative_error(cv.in_sample[i], r.measured_s)), cv.held_out[i],
                      pct(relative_error(cv.held_out[i], r.measured_s)));
  }
  return md;
}

}  // namespace cc::accuracy

namespace cc::accuracy {

std::string prediction_table(const std::vector<CorpusRow>& rows, const Calibration& c) {
  std::string t =
      "id,source,framework,gpu,gpus,tp,pp,dp,vp,mbs,gbs,recompute,sp,measured_s,predicted_s,compute,recompute_s,"
      "tp_comm,pp_comm,dp_comm,optimizer,host,bubble\n";
  for (const CorpusRow& r : rows) {
    const SimResult s = simulate_row(r, c);
    const TimeBreakdown& b = s.breakdown;
    t += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}\n",
                     r.id, r.source, r.config.framework, gpu_generation(r.cluster.gpu), r.config.gpus(), r.config.tp,
                     r.config.pp, r.config.dp, r.config.virtual_stages, r.config.micro_batch, r.config.global_batch,
                     to_string(r.config.recompute), r.config.sequence_parallel ? 1 : 0, r.measured_s, s.iteration_time_s,
                     b.compute, b.recompute, b.tp_comm, b.pp_comm, b.dp_comm, b.optimizer, b.host, b.bubble);
  }
  return t;
}

std::string markdown_cell(std::string text) {
  for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.insert(at, "\\");
  return text;
}

}  // namespace cc::accuracy
