#include "interop/search_csv.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/parallel_grid.h"

namespace cc {

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The dimensions a launch line sizes (expert data parallelism is derived, so not a column).
bool has_column(const GridDimensionInfo& d) { return !d.flag.empty(); }

}  // namespace

std::string search_csv(const SearchOutcome& outcome) {
  std::string out = "rank,layout";
  for (const GridDimensionInfo& d : kGridDimensions)
    if (has_column(d)) out += fmt::format(",{}", d.name);
  out +=
      ",micro_batch_size,virtual_pipeline_stages,sequence_parallel,recompute_granularity,recompute_method,"
      "recompute_num_layers,use_distributed_optimizer,num_distributed_optimizer_instances,iteration_time_s,tflops_per_gpu,mfu,peak_memory_gib,"
      "headroom_gib,training_days,tied\n";
  int rank = 0;
  for (const RankedLayout& l : outcome.ranked) {
    const SimResult& r = l.result;
    const ParallelConfig& c = r.config;
    out += fmt::format("{},{}", ++rank, csv_field(c.summary()));
    // A dimension belongs to the dense grid or the experts' (PP to both, at one size); the grid
    // without it reports size 1.
    const ParallelGrid dense = c.grid(), experts = c.expert_grid();
    for (const GridDimensionInfo& d : kGridDimensions)
      if (has_column(d)) out += fmt::format(",{}", std::max(dense.size(d.name), experts.size(d.name)));
    // Empty cells (NaN to pandas) where a value does not apply: the method and layer count of
    // anything but full recompute, the optimizer instances without the distributed optimizer, the
    // days without a token budget.
    const bool full = c.recompute == RecomputeGranularity::Full;
    out += fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", c.micro_batch, c.virtual_stages,
                       c.sequence_parallel ? "true" : "false", to_string(c.recompute),
                       full ? to_string(c.recompute_method) : "", full ? std::to_string(c.recompute_num_layers) : "",
                       c.distributed_optimizer ? "true" : "false",
                       c.distributed_optimizer ? std::to_string(c.distributed_optimizer_instances) : "",
                       r.iteration_time_s, r.tflops_per_gpu, r.mfu,
                       r.peak_memory_gib, r.usable_gib - r.peak_memory_gib,
                       r.training_days > 0 ? fmt::format("{}", r.training_days) : "", l.tied ? "true" : "false");
  }
  return out;
}

}  // namespace cc
