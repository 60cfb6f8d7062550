#include "sim/layout_rules.h"

#include <limits>

#include <fmt/format.h>

#include "sim/error.h"
#include "sim/parallel_config.h"
#include "sim/pipeline_layout_string.h"

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

int virtual_stages_from_layers_per_stage(int per_stage, int num_layers, const ParallelConfig& c,
                                         const std::string& where) {
  const char* flag = "--num-layers-per-virtual-pipeline-stage";
  if (c.first_stage_layers > 0 || c.last_stage_layers > 0)
    fail_at(flag,
            "{}{} {} cannot be combined with uneven first/last stages (--decoder-first/last-pipeline-num-layers); "
            "give the chunks per rank with --num-virtual-stages-per-pipeline-rank, as Megatron-LM asks",
            where, flag, per_stage);
  if (!c.pipeline_layout.empty())
    fail_at(flag, "{}{} cannot be combined with --pipeline-model-parallel-layout, which sets the chunks itself",
            where, flag);
  // The embedding and the loss count as layers of the split when the flags say so.
  const std::int64_t counted = std::int64_t{num_layers} + c.account_for_embedding + c.account_for_loss;
  const std::string counted_text = counted == num_layers ? fmt::format("num_layers {}", num_layers)
                                                         : fmt::format("num_layers {} + {} = {}", num_layers,
                                                                       counted - num_layers, counted);
  if (c.pp < 1 || counted % c.pp != 0)
    fail_at(flag, "{}{} {}: {} layers are not divisible by PP {}", where, flag, per_stage, counted_text, c.pp);
  const std::int64_t per_rank = counted / c.pp;
  if (per_stage < 1 || per_rank % per_stage != 0)
    fail_at(flag, "{}{} {} does not divide the {} layers of each pipeline rank ({} / PP {})", where, flag, per_stage,
            per_rank, counted_text, c.pp);
  return static_cast<int>(per_rank / per_stage);
}

int virtual_stages_from_layout(const std::string& layout, int pp, const std::string& where) {
  return layout_virtual_stages(layout, parse_pipeline_layout(layout), pp, where);
}

}  // namespace cc
