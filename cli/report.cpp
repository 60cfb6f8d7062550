#include "cli/report.h"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "sim/units.h"

namespace cc::cli {

std::string with_commas(double value) {
  const std::string digits = fmt::format("{:.0f}", std::abs(std::round(value)));
  std::string out = value < -0.5 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

namespace {

struct Lines {
  std::string text;
  template <typename... Args>
  void operator()(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(text), format, std::forward<Args>(args)...);
    text += '\n';
  }
};

}  // namespace

std::string format_report(const SimResult& r) {
  Lines line;
  const auto& c = r.config;
  line("{} on {} x {} ({}) — {}", r.model.name, c.gpus(), r.cluster.gpu.name, r.cluster.name, r.cost_source);
  line("layout      {}  ({} microbatches per pipeline)", c.summary(), c.num_microbatches());
  line("stack       {}", c.framework);
  line("parameters  {} total, {} active per token", with_commas(static_cast<double>(r.model.total_parameters())),
       with_commas(static_cast<double>(r.model.active_parameters())));
  line("{}", "");
  if (r.interval)
    line("iteration   {:.3f} s ({:.3f}–{:.3f})   {} tokens/s", r.iteration_time_s, r.iteration_time_low_s(),
         r.iteration_time_high_s(), with_commas(r.tokens_per_s));
  else
    line("iteration   {:.3f} s   {} tokens/s", r.iteration_time_s, with_commas(r.tokens_per_s));
  if (r.tflops_per_gpu >= 1)
    line("throughput  {:.1f} TFLOP/s per GPU (model FLOPs), {:.1f} with recompute", r.tflops_per_gpu,
         r.hardware_tflops_per_gpu);
  else  // a small model, or costs measured on a CPU
    line("throughput  {:.1f} GFLOP/s per GPU (model FLOPs), {:.1f} with recompute", 1e3 * r.tflops_per_gpu,
         1e3 * r.hardware_tflops_per_gpu);
  line("            MFU {:.1f}%   HFU {:.1f}%   pipeline bubble {:.1f}%", 100 * r.mfu, 100 * r.hfu,
       100 * r.bubble_fraction);
  if (r.train_tokens > 0) {
    const double iterations = r.train_tokens / (static_cast<double>(c.global_batch) * r.model.seq_length);
    if (r.interval)
      line("training    {:.4g} tokens = {} iterations = {:.1f} days ({:.1f}–{:.1f})", r.train_tokens,
           with_commas(iterations), r.training_days, r.training_days_low(), r.training_days_high());
    else
      line("training    {:.4g} tokens = {} iterations = {:.1f} days", r.train_tokens, with_commas(iterations),
           r.training_days);
  }
  if (r.interval) line("            interval: {}", r.interval->basis);
  line("{}", "");
  const TimeBreakdown& b = r.breakdown;
  line("time per iteration (stage {})       seconds   share", r.reported_stage);
  auto row = [&](const char* name, double s) {
    line("  {:<32} {:8.3f}  {:5.1f}%", name, s, r.iteration_time_s > 0 ? 100 * s / r.iteration_time_s : 0);
  };
  row("compute", b.compute);
  row("recompute", b.recompute);
  row("tensor-parallel comm (exposed)", b.tp_comm);
  if (c.cp > 1) row("context-parallel comm (exposed)", b.cp_comm);
  if (c.ep > 1 || c.expert_tp() > 1) row("expert-parallel comm (exposed)", b.ep_comm);
  row("pipeline comm (exposed)", b.pp_comm);
  row("data-parallel comm (exposed)", b.dp_comm);
  row("optimizer step", b.optimizer);
  row("host-bound wait", b.host);
  row("pipeline bubble", b.bubble);
  line("{}", "");
  const MemoryBreakdown& m = r.memory.peak();
  line("memory per GPU (peak on stage {})    GiB", r.memory.peak_stage);
  auto mem = [&](const char* name, double bytes) { line("  {:<32} {:8.2f}", name, bytes / kGiB); };
  mem("weights", m.weights);
  mem("gradients", m.gradients);
  mem("optimizer state", m.optimizer);
  if (r.model.moe.enabled()) mem("  of the 3 above: routed experts", m.experts);
  mem("activations", m.activations);
  mem("GEMM library workspaces", m.workspaces);
  mem("other (context, buffers, frag.)", m.other);
  line("  {:<32} {:8.2f}  of {:.1f} usable ({:.0f} GiB HBM) — {}", "total", m.total() / kGiB, r.usable_gib, r.hbm_gib,
       r.fits ? "fits" : fmt::format("DOES NOT FIT (short by {:.2f} GiB)", m.total() / kGiB - r.usable_gib));
  if (r.measured_fraction > 0) line("\n{:.1f}% of the priced time came from measurements", 100 * r.measured_fraction);
  if (!r.cost_coverage.empty()) line("costs: {}", r.cost_coverage);
  return line.text;
}

}  // namespace cc::cli
