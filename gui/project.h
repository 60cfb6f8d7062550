// project.h — what the user set up (model, cluster, GPU count, cost source, layout,
// token budget, memory reserve), as a versioned JSON project file. No Qt: the setup panel
// edits a Project, the simulation runs on a copy of one.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "interop/resolver.h"
#include "sim/cluster_spec.h"
#include "sim/memory_model.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::gui {

// Version 2 added "framework": the stack the user named (null: the cost database's stack, else
// Megatron-Core, as `clustercast simulate` without --framework). Version 3 added context
// parallelism to the layout (its size, communication type and a2a+p2p group size); an older
// build would drop them and simulate another layout, so it refuses the file by its version.
// Version 4 added mixture of experts: the model's experts, MLA and MTP fields and the layout's
// EP, ETP and MoE switches, which an older build would drop. Version 1 to 3 files still open,
// as CP 1 with p2p (before 3) and EP 1. Version 5 added the Megatron-LM switches a launch line or
// file set that are no field of the layout (MegatronSwitches: unfused softmax, deterministic mode,
// unfused gradient accumulation, the TP-PP-DP rank order, the interleaved schedule's warm-up and flush
// overlap), which the resolver weighs on every change.
inline constexpr int kProjectVersion = 5;

struct Project {
  std::string model_preset;    // the preset the shape started from ("" = custom / imported)
  ModelSpec model;
  std::string cluster_preset;  // likewise
  ClusterSpec cluster;
  int gpus = 8;
  bool auto_dp = true;         // DP = GPUs / (TP x CP x PP)
  std::string costs_file;      // empty: the analytic model of the cluster
  std::optional<std::string> framework;  // the stack named; none: the database's, else Megatron-Core
  ParallelConfig config;       // its framework is the resolver's to set (from `framework`)
  double train_tokens = 0;     // 0: no training days
  bool every_rank = false;
  MemoryReserve reserve;
  // Megatron-LM switches from the launch line or file the project came from: no setup field shows
  // them, so they stand as given, and the resolver checks them against every layout the user sets.
  MegatronSwitches switches;

  // What the user set, as the resolver takes it (interop/resolver.h): every field of the setup
  // is named, except DP when auto_dp and the stack when `framework` is none; the optimizer's
  // instances apply with the distributed optimizer only.
  RunRequest request() const;
  // The config the simulator gets (the resolver's, so DP from the GPU count when auto_dp and
  // the stack of the cost database). Throws SpecError on what the CLI would refuse.
  ParallelConfig resolved_config() const;
  bool operator==(const Project&) const;
};

// A project from presets (throws SpecError on unknown names).
Project project_from_presets(const std::string& model, const std::string& cluster, int gpus);

// The attention kernel a setup of `model` starts with on `p`'s stack (the one it names, else its
// cost database's, else Megatron-Core's: resolved_stack): the stack's default, but unfused for a model that caps its attention scores
// (Gemma-2's attn_logit_softcapping), which flash attention cannot and the simulator refuses.
AttentionKernel default_attention(const Project& p, const ModelSpec& model);
// Puts `model` in `p` as a newly imported or chosen model. The attention follows the new model
// only where it was the old model's default: a kernel the user chose stays as they left it.
void replace_model(Project& p, ModelSpec model);

nlohmann::json project_to_json(const Project& p);
// Throws SpecError naming `where` on a wrong format, a newer version or a bad field.
Project project_from_json(const nlohmann::json& doc, const std::string& where);
void save_project(const std::string& path, const Project& p);  // atomic
Project load_project(const std::string& path);

}  // namespace cc::gui
