// layout_files.h — the layout files `search` (and the GUI) export and `simulate --config` reads back:
// our JSON (config, model, cluster and the full prediction), a Megatron-LM argument file,
// and a NeMo Megatron YAML. The Megatron and NeMo files carry one comment line,
// "# clustercast: --cluster NAME --gpus N ...", with what their own formats cannot say.
// The format is recognised from the content, not the file name.
#pragma once

#include <optional>
#include <string>

#include "sim/memory_model.h"
#include "sim/parallel_config.h"
#include "sim/simulator.h"

namespace cc {

struct LayoutFile {
  ParallelConfig config;
  std::optional<ModelSpec> model;
  std::optional<ClusterSpec> cluster;
  std::optional<int> gpus;
  std::optional<MemoryReserve> reserve;
};

LayoutFile read_layout_file(const std::string& path);

// Megatron-LM's --attention-backend: auto, flash and fused never store the s x s scores
// (Flash); unfused and local do (Unfused). Anything else is a SpecError naming `where`.
AttentionKernel attention_backend_from(const std::string& name, const std::string& where);

std::string layout_json(const SimResult& result, const MemoryReserve& reserve);
std::string megatron_arguments(const SimResult& result, const MemoryReserve& reserve);
std::string nemo_yaml(const SimResult& result, const MemoryReserve& reserve);

}  // namespace cc
