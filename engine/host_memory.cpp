#include "engine/host_memory.h"

#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "sim/error.h"
#include "sim/memory_model.h"

namespace cc::engine {

namespace {

// Weights twice: train() keeps `initial`, a copy of the starting weights, for the update norm.
double peak_bytes(const MemoryBreakdown& b) { return 2 * b.weights + b.gradients + b.optimizer + b.activations; }

}  // namespace

double rank_peak_bytes(const ModelSpec& model, const ParallelConfig& config) {
  return peak_bytes(memory_model(model, config).peak());
}

void check_host_memory(const ModelSpec& model, const ParallelConfig& config, int ranks_on_host,
                       double available_bytes) {
  const MemoryReport report = memory_model(model, config);
  const double per_rank = peak_bytes(report.peak());
  const double needed = per_rank * ranks_on_host;
  if (needed <= available_bytes) return;
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  fail("model '{}' with {} needs about {:.1f} GiB per rank (fp32 weights and their initial copy, gradients, AdamW "
       "state, {:.1f} GiB of activations), {:.1f} GiB for the {} rank(s) on this machine, but only {:.1f} GiB is "
       "available (MemAvailable); use a smaller model (--num-layers, --hidden-size, --seq-length), a larger TP or "
       "PP, or more machines",
       model.name, config.summary(), per_rank / GiB, report.peak().activations / GiB, needed / GiB, ranks_on_host,
       available_bytes / GiB);
}

double available_host_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    double kib = 0;
    if (fields >> kib) return kib * 1024.0;
  }
  return std::numeric_limits<double>::max();
}

}  // namespace cc::engine
