#include "cli/validation_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cc::cli {

namespace {

double mean_abs(const std::vector<LayoutCheck>& ls, double (LayoutCheck::*error)() const) {
  double sum = 0;
  for (const auto& l : ls) sum += std::abs((l.*error)());
  return ls.empty() ? 0 : sum / static_cast<double>(ls.size());
}

double max_abs(const std::vector<LayoutCheck>& ls, double (LayoutCheck::*error)() const) {
  double worst = 0;
  for (const auto& l : ls) worst = std::max(worst, std::abs((l.*error)()));
  return worst;
}

std::string pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }

// Mean |time error| of the layouts at shapes the profile ran against those at new shapes
// (another sequence length or depth, priced by scaling), when both kinds are present.
std::string shape_split(const std::vector<LayoutCheck>& ls) {
  std::vector<LayoutCheck> ran, scaled;
  for (const auto& l : ls) (l.new_shape ? scaled : ran).push_back(l);
  if (ran.empty() || scaled.empty()) return "";
  return fmt::format("At the model shape the profile ran: mean |error| {:.1f}% over {} layouts; at shapes it never ran "
                     "(seq= or layers=, priced by scaling the nearest measured op): {:.1f}% over {}.\n",
                     100 * mean_abs(ran, &LayoutCheck::time_error), ran.size(),
                     100 * mean_abs(scaled, &LayoutCheck::time_error), scaled.size());
}

bool within(const LayoutCheck& l, const ValidationSummary& v) {
  return std::abs(l.time_error()) <= v.tolerance && std::abs(l.memory_error()) <= v.memory_tolerance;
}

std::string held_out_count(const ValidationSummary& v) {
  const auto in = std::count_if(v.layouts.begin(), v.layouts.end(), [](const LayoutCheck& l) { return l.in_sample; });
  return fmt::format("{} held-out, {} in-sample", v.layouts.size() - static_cast<std::size_t>(in), in);
}

std::string split_row(const char* what, const StepSplit& s) {
  return fmt::format("| {} | {:.4f} | {:.4f} | {:.4f} | {:.4f} | {:.4f} | {:.4f} |\n", what, s.compute, s.tp,
                     s.pipeline, s.dp, s.optimizer, s.other);
}

}  // namespace

StepSplit split_of(const TimeBreakdown& t) {
  return {t.compute + t.recompute, t.tp_comm, t.pp_comm + t.bubble, t.dp_comm, t.optimizer, 0.0};
}

StepSplit add(const StepSplit& sum, const StepSplit& s, double weight) {
  return {sum.compute + weight * s.compute, sum.tp + weight * s.tp,
          sum.pipeline + weight * s.pipeline, sum.dp + weight * s.dp,
          sum.optimizer + weight * s.optimizer, sum.other + weight * s.other};
}

std::string LayoutCheck::miss_sits() const {
  if (!measured_split) return "-";
  const StepSplit& p = predicted_split;
  const StepSplit& m = *measured_split;
  const std::pair<const char*, double> parts[] = {{"compute", p.compute - m.compute}, {"TP comm", p.tp - m.tp},
                                                  {"pipeline", p.pipeline - m.pipeline}, {"DP comm", p.dp - m.dp},
                                                  {"optimizer", p.optimizer - m.optimizer},
                                                  {"unannotated", p.other - m.other}};
  const auto worst = std::max_element(std::begin(parts), std::end(parts),
                                      [](const auto& a, const auto& b) { return std::abs(a.second) < std::abs(b.second); });
  return fmt::format("{} {:+.3f} s", worst->first, worst->second);
}

bool ValidationSummary::passed() const {
  return std::all_of(layouts.begin(), layouts.end(), [&](const LayoutCheck& l) { return within(l, *this); });
}

std::string terminal_table(const ValidationSummary& v) {
  std::string t = fmt::format("{:<40} {:>9} {:>9} {:>8} {:>10} {:>10} {:>8}  {}\n", "layout", "pred s", "meas s",
                              "error", "pred act", "meas act", "error", "miss sits in");
  for (const auto& l : v.layouts)
    t += fmt::format("{:<40} {:9.3f} {:9.3f} {:>8} {:8.1f}MB {:8.1f}MB {:>8}  {}{}\n",
                     l.layout + (l.in_sample ? " (in-sample)" : ""), l.predicted_s, l.measured_s, pct(l.time_error()),
                     l.predicted_activation_bytes / 1e6, l.measured_activation_bytes / 1e6, pct(l.memory_error()),
                     l.miss_sits(), within(l, v) ? "" : "   MISS");
  t += fmt::format("iteration time: mean |error| {:.1f}%, worst {:.1f}%; activation memory: mean {:.1f}%, worst {:.1f}% "
                   "({}; tolerance {:.0f}% time, {:.0f}% memory)\n",
                   100 * mean_abs(v.layouts, &LayoutCheck::time_error), 100 * max_abs(v.layouts, &LayoutCheck::time_error),
                   100 * mean_abs(v.layouts, &LayoutCheck::memory_error),
                   100 * max_abs(v.layouts, &LayoutCheck::memory_error), held_out_count(v), 100 * v.tolerance,
                   100 * v.memory_tolerance);
  if (v.machine_drift)
    t += fmt::format("machine drift over the validation: {} (the profiled layout's median step, last profile against "
                     "the first); each run priced by the profiles around it\n",
                     pct(*v.machine_drift));
  t += shape_split(v.layouts);
  const double total = v.profile_s + v.training_s + v.prediction_s;
  t += fmt::format("validation took {:.0f} s: profile {:.0f} s, training {:.0f} s, prediction {:.3f} s ({:.3f}% of it)\n",
                   total, v.profile_s, v.training_s, v.prediction_s, total > 0 ? 100 * v.prediction_s / total : 0.0);
  return t;
}

std::string markdown_report(const ValidationSummary& v) {
  const MachineFingerprint& m = v.machine;
  std::string r = "# Validation: predicted vs measured on layouts the profile did not run\n\n";
  r += fmt::format("Written by `clustercast validate`; do not edit by hand. Command:\n\n    {}\n\n", v.command);
  r += fmt::format("- machine: {} ({} cores, {:.1f} GiB), backend {}, {} ranks\n", m.cpu_model, m.cpu_cores,
                   m.memory_gib, v.backend, v.ranks);
  r += fmt::format("- model: {}\n", v.model);
  r += fmt::format("- predictions from the cost database `{}` alone (measured {} on {}, {} runs; command `{}`), "
                   "replaying the `{}` stack\n",
                   v.costs_path, v.costs.created, v.costs.machine.cpu_model, v.costs.runs.size(), v.costs.command,
                   v.costs.framework);
  if (v.machine_drift)
    r += fmt::format("- each training run priced by the profiles before and after its round, weighted by when it "
                     "ran (the database above is those profiles pooled: it prices memory and says how ops were "
                     "priced); the machine drifted {} over the validation (the profiled layout's median step, last "
                     "profile against the first)\n",
                     pct(*v.machine_drift));
  r += fmt::format("- measured: each layout trained for real under mpirun{}; the median of the timed steps (warm-up "
                   "steps left out) on the slowest rank{}, min–max of every timed step beside it; activation memory is the engine's own "
                   "accounting of what it keeps for backward, per stage\n",
                   v.rounds > 1 ? fmt::format(" {} times, every layout once per round in turn (a slow spell of the "
                                              "machine then falls on all layouts alike)", v.rounds)
                                : std::string(),
                   v.rounds > 1 ? ", each round's, and the median over the rounds as for the predictions (one round caught in a "
                                       "slow spell moves neither)" : "");
  r += fmt::format("- held-out means the profile never ran that layout; {}\n\n", held_out_count(v));
  r += "| layout | held-out | predicted s | measured s (min–max) | error | predicted activations | measured | error | "
       "miss sits in | ops scaled / analytic |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& l : v.layouts)
    r += fmt::format("| `{}` ({}) | {} | {:.4f} | {:.4f} ({:.4f}–{:.4f}, {} steps) | {} | {:.2f} MB (stage {}) | "
                     "{:.2f} MB | {} | {} | {} / {} |\n",
                     l.layout, l.summary, l.in_sample ? "no (in-sample)" : "yes", l.predicted_s, l.measured_s,
                     l.measured_min_s, l.measured_max_s, l.timed_steps, pct(l.time_error()),
                     l.predicted_activation_bytes / 1e6, l.activation_stage, l.measured_activation_bytes / 1e6,
                     pct(l.memory_error()), l.miss_sits(), l.ops_scaled, l.ops_analytic);
  r += fmt::format("\nIteration time: mean |error| **{:.1f}%**, worst **{:.1f}%**. Activation memory: mean |error| "
                   "**{:.1f}%**, worst **{:.1f}%**. Tolerance {:.0f}% (time) and {:.0f}% (memory): **{}**.\n\n",
                   100 * mean_abs(v.layouts, &LayoutCheck::time_error), 100 * max_abs(v.layouts, &LayoutCheck::time_error),
                   100 * mean_abs(v.layouts, &LayoutCheck::memory_error),
                   100 * max_abs(v.layouts, &LayoutCheck::memory_error), 100 * v.tolerance, 100 * v.memory_tolerance,
                   v.passed() ? "every layout within it" : "some layouts miss it");
  r += shape_split(v.layouts);
  if (!shape_split(v.layouts).empty()) r += "\n";
  if (v.rounds > 1) {
    r += "## Round by round (predicted / measured seconds)\n\n| layout |";
    for (int k = 1; k <= v.rounds; ++k) r += fmt::format(" round {} |", k);
    r += "\n|---|";
    for (int k = 1; k <= v.rounds; ++k) r += "---|";
    r += "\n";
    for (const auto& l : v.layouts) {
      r += fmt::format("| `{}` |", l.layout);
      for (const auto& round : l.rounds)
        r += fmt::format(" {:.4f} / {:.4f} ({}) |", round.predicted_s, round.measured_s,
                         pct(round.predicted_s / round.measured_s - 1));
      r += "\n";
    }
    r += "\n";
  }
  r += "## Where the time went (seconds per iteration, stage 0 / rank 0)\n\n"
       "Pipeline = transfers and bubble together (the engine's blocking receive holds both); unannotated = host "
       "time outside every engine scope.\n\n"
       "| layout | side | compute | TP comm | pipeline | DP comm | optimizer | unannotated |\n"
       "|---|---|---|---|---|---|---|---|\n";
  for (const auto& l : v.layouts) {
    r += split_row(fmt::format("`{}` | predicted", l.layout).c_str(), l.predicted_split);
    if (l.measured_split) r += split_row(fmt::format("`{}` | measured", l.layout).c_str(), *l.measured_split);
  }
  const double total = v.profile_s + v.training_s + v.prediction_s;
  r += fmt::format("\n## Cost of the validation\n\nWall time {:.0f} s: profile {:.0f} s, training {:.0f} s, "
                   "prediction {:.3f} s ({:.3f}% of the total).\n",
                   total, v.profile_s, v.training_s, v.prediction_s, total > 0 ? 100 * v.prediction_s / total : 0.0);
  return r;
}

}  // namespace cc::cli
