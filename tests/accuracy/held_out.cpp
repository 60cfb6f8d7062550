#include "accuracy/held_out.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "accuracy/fit.h"
#include "accuracy/metrics.h"
#include "accuracy/report.h"
#include "sim/simulator.h"

namespace cc::accuracy {

namespace {

std::string pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }
std::string abs_pct(double x) { return fmt::format("{:.1f}%", 100 * x); }

// Llama 3 paper (Grattafiori et al. 2024, arXiv 2407.21783) Table 4: BF16 TFLOP/s per GPU as
// published, by the corpus id of its row (tests/reference/measured/tools/llama3_2024.py).
const std::map<std::string, double> kLlama3PublishedTflops = {
    {"llama3-2024-t4-405b-8192g", 430},
    {"llama3-2024-t4-405b-16384g", 400},
    {"llama3-2024-t4-405b-16384g-cp16-s131072", 380},
};

std::string context_parallel_section(const HeldOutRows& held_out, const Calibration& fitted) {
  std::vector<CorpusRow> rows;
  for (const auto& r : held_out.rows)
    if (r.config.cp > 1) rows.push_back(r);
  std::vector<RefusedRow> refused;
  for (const auto& r : held_out.refused)
    if (r.cp > 1) refused.push_back(r);
  const std::vector<double> predicted = predict(rows, fitted);
  const ErrorSummary all = summarize(rows, predicted);

  std::string md = fmt::format(
      "\n## Context parallelism (held out)\n\nMeasured runs with context parallelism (CP > 1), kept in "
      "`tests/reference/measured/excluded/` and out of the fit, predicted with the constants fitted to the corpus "
      "above (the shipped ones), which never saw a CP run. {} rows are predicted{}. Time: mean error {}, worst {}, "
      "signed {}.\n\n",
      rows.size(),
      refused.empty() ? ", none refused" : fmt::format(", {} are refused by the simulator (listed below)", refused.size()),
      abs_pct(all.mean_abs), abs_pct(all.worst_abs), pct(all.signed_mean));
  md += "| source | rows | mean | worst | signed |\n|---|---|---|---|---|\n";
  for (const auto& [source, s] : summarize_by(rows, predicted, [](const CorpusRow& r) { return r.source; }))
    md += fmt::format("| {} | {} | {} | {} | {} |\n", source, s.rows, abs_pct(s.mean_abs), abs_pct(s.worst_abs),
                      pct(s.signed_mean));

  double memory_abs = 0, memory_worst = 0;
  int memory_rows = 0;
  std::string table;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const CorpusRow& r = rows[i];
    std::string memory = "| | | ";
    // Only a peak whose statistic the source states (Megatron-LM's allocator peak of the last
    // rank) is comparable with the memory model's last stage.
    if (r.measured_peak_gib && !r.assumes("peak_memory_gib")) {
      const double p = predicted_allocated_gib(r), e = relative_error(p, *r.measured_peak_gib);
      memory = fmt::format("| {:.3f} | {:.3f} | {} ", *r.measured_peak_gib, p, pct(e));
      memory_abs += std::abs(e);
      memory_worst = std::max(memory_worst, std::abs(e));
      ++memory_rows;
    }
    table += fmt::format("| {} | {} {} | {} | {:.4g} | {:.4g} | {} {}|\n", r.id, r.model.name, markdown_cell(r.config.summary()),
                         r.config.gpus(), r.measured_s, predicted[i], pct(relative_error(predicted[i], r.measured_s)),
                         memory);
  }
  if (memory_rows > 0)
    md += fmt::format(
        "\nPeak memory: {} rows state Megatron-LM's `mem-max-allocated-bytes` of the last rank, compared with the "
        "memory model's last stage without its reserve (as in \"Peak memory\" above): mean error {}, worst {}.\n",
        memory_rows, abs_pct(memory_abs / memory_rows), abs_pct(memory_worst));
  md += "\n| id | layout | GPUs | measured s | predicted s | error | measured peak GiB | predicted GiB | error |\n"
        "|---|---|---|---|---|---|---|---|---|\n" +
        table;
  if (!refused.empty()) {
    md += "\nRefused (a layout the simulator does not model yet):\n\n| id | source | why |\n|---|---|---|\n";
    for (const auto& r : refused) md += fmt::format("| {} | {} | {} |\n", r.id, r.source, r.reason);
  }
  return md;
}

std::string llama3_table4_section(const HeldOutRows& held_out, const Calibration& fitted) {
  std::string table;
  int rows = 0, bracketed = 0;
  for (const auto& r : held_out.rows) {
    const auto published = kLlama3PublishedTflops.find(r.id);
    if (published == kLlama3PublishedTflops.end()) continue;
    const SimResult s = simulate_row(r, fitted);
    // Meta states no recompute policy; the row assumes the lightest that fits. The same layout
    // without recompute bounds the prediction from the other side.
    ParallelConfig bare = r.config;
    bare.recompute = RecomputeGranularity::None;
    const SimResult without = simulate_row(r, fitted, bare);
    // The row's time is the published TFLOP/s at a stated FLOP count per token; the same count
    // over the predicted time is the TFLOP/s the prediction implies.
    const auto implied = [&](const SimResult& p) { return published->second * r.measured_s / p.iteration_time_s; };
    table += fmt::format("| {} | {} | {} | {:.4g} | {:.4g} | {:.0f} | {:.0f} | {} | {:.0f} | {:.0f} ({}, {:.0f} GiB) |\n",
                         r.id, markdown_cell(r.config.summary()), r.config.gpus(), r.measured_s, s.iteration_time_s, published->second,
                         implied(s), pct(implied(s) / published->second - 1), s.tflops_per_gpu, implied(without),
                         without.fits ? "fits" : "does not fit", without.peak_memory_gib);
    ++rows;
    const double low = std::min(implied(s), implied(without)), high = std::max(implied(s), implied(without));
    if (low <= published->second && published->second <= high) ++bracketed;
  }
  for (const auto& r : held_out.refused)
    if (kLlama3PublishedTflops.count(r.id)) table += fmt::format("| {} | refused: {} | | | | | | | | |\n", r.id, r.reason);
  if (table.empty()) return "";
  return "\n## Llama 3 Table 4 (held out)\n\nMeta's Llama 3.1 405B pre-training layouts on H100 as Table 4 of the "
         "Llama 3 paper publishes them (TP 8, PP 16; CP 1 at seq 8,192 on 8,192 and 16,384 GPUs, CP 16 at seq "
         "131,072 on 16,384 GPUs, 16M tokens per batch), predicted with the shipped constants. Meta's own stack on "
         "the nearest presets (`dgx-h100`, `megatron-core`). The pipeline split follows Meta's text (Sec. 3.3.2): "
         "one layer fewer on the first and last stages leaves the first model chunk with only the embedding and "
         "the last with only the output layer and loss, so every chunk holds one layer: 128 chunks over PP 16, "
         "8 per rank, Megatron-Core's layout `E|(t|)*126L`. Assumed where Meta does not say: micro batch 1, "
         "sequence parallel, flash attention, and full recompute, the only recompute Megatron-Core offers on "
         "one-layer chunks and what `clustercast search` picks at this layout: without it no layout fits in "
         "80 GB (last column). CP by all-gather of K and V (Sec. 3.3.2). The measured time is the published "
         "TFLOP/s at the Megatron FLOP count (full s x s attention; tools/llama3_2024.py); the implied TFLOP/s "
         "is that count over the predicted time; the simulator's own model TFLOP/s is beside it. " +
         fmt::format("{} of the {} published figures lie between the predictions with and without recompute.\n\n",
                     bracketed, rows) +
         "| id | layout | GPUs | measured s | predicted s | published TFLOP/s/GPU | predicted TFLOP/s/GPU | error | "
         "simulator's model TFLOP/s/GPU | implied TFLOP/s/GPU without recompute (memory) |\n"
         "|---|---|---|---|---|---|---|---|---|---|\n" +
         table;
}

}  // namespace

HeldOutRows load_held_out(const std::string& corpus_folder) {
  HeldOutRows h;
  h.rows = load_corpus(corpus_folder + "/excluded", &h.refused);
  h.moe = load_moe_rows(corpus_folder);
  return h;
}

std::string held_out_report(const HeldOutRows& held_out, const Calibration& fitted) {
  return context_parallel_section(held_out, fitted) + llama3_table4_section(held_out, fitted);
}

}  // namespace cc::accuracy
