#include "sim/layout_rules.h"

#include <limits>

#include <fmt/format.h>

#include "sim/error.h"

namespace cc {

std::optional<int> data_parallel_size(std::int64_t gpus, int tp, int cp, int pp) {
  if (gpus < 1 || tp < 1 || cp < 1 || pp < 1) return std::nullopt;
  const std::int64_t model_parallel = std::int64_t{tp} * cp * pp;  // can pass 2^31
  if (gpus % model_parallel != 0) return std::nullopt;
  return static_cast<int>(gpus / model_parallel);
}

std::string model_parallel_text(int tp, int cp, int pp) {
  return cp == 1 ? fmt::format("TP {} x PP {}", tp, pp) : fmt::format("TP {} x CP {} x PP {}", tp, cp, pp);
}

int default_global_batch(int micro_batch, int dp) {
  const std::int64_t batch = std::int64_t{micro_batch} * dp;
  if (batch > std::numeric_limits<int>::max())
    fail_at("--global-batch-size",
            "the default global batch, micro batch {} x DP {} = {}, exceeds {}; give --global-batch-size", micro_batch,
            dp, batch, std::numeric_limits<int>::max());
  return static_cast<int>(batch);
}

int virtual_stages_from_layers_per_stage(int per_stage, int num_layers, int pp, const std::string& where) {
  if (per_stage < 1 || pp < 1 || num_layers % (std::int64_t{pp} * per_stage) != 0)
    fail_at("--num-layers-per-virtual-pipeline-stage",
            "{}--num-layers-per-virtual-pipeline-stage {} does not divide num_layers {} / PP {}", where, per_stage,
            num_layers, pp);
  return static_cast<int>(num_layers / (std::int64_t{pp} * per_stage));
}

}  // namespace cc
