// project.h — what the user set up (model, cluster, GPU count, cost source, layout,
// token budget, memory reserve), as a versioned JSON project file. No Qt: the setup panel
// edits a Project, the simulation runs on a copy of one.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/cluster_spec.h"
#include "sim/memory_model.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::gui {

inline constexpr int kProjectVersion = 1;

struct Project {
  std::string model_preset;    // the preset the shape started from ("" = custom / imported)
  ModelSpec model;
  std::string cluster_preset;  // likewise
  ClusterSpec cluster;
  int gpus = 8;
  bool auto_dp = true;         // DP = GPUs / (TP x PP)
  std::string costs_file;      // empty: the analytic model of the cluster
  ParallelConfig config;
  double train_tokens = 0;     // 0: no training days
  bool every_rank = false;
  MemoryReserve reserve;

  // The config the simulator gets: DP from the GPU count when auto_dp.
  ParallelConfig resolved_config() const;
  bool operator==(const Project&) const;
};

// A project from presets (throws SpecError on unknown names).
Project project_from_presets(const std::string& model, const std::string& cluster, int gpus);

nlohmann::json project_to_json(const Project& p);
// Throws SpecError naming `where` on a wrong format, a newer version or a bad field.
Project project_from_json(const nlohmann::json& doc, const std::string& where);
void save_project(const std::string& path, const Project& p);  // atomic
Project load_project(const std::string& path);

}  // namespace cc::gui
