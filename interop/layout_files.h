// layout_files.h — the layout files `search` (and the GUI) export and `simulate --config` reads back:
// our JSON (config, model, cluster and the full prediction), a Megatron-LM argument file with
// its launch script, and a NeMo Megatron YAML. The format is recognised from the content, not the
// file name. One file per format: layout_json.cpp, megatron_arguments.cpp, nemo_yaml.cpp.
//
// What a format cannot say (the cluster, the GPU count, the memory reserve) travels in a comment
// line "# clustercast: --cluster NAME --gpus N ...": inside the NeMo YAML, and in the launch
// script beside a Megatron argument file (BEST.args.sh beside BEST.args), so that the argument
// file itself holds nothing but Megatron-LM arguments (`pretrain_gpt.py $(cat BEST.args)`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "interop/megatron_options.h"
#include "interop/megatron_tokenizer.h"
#include "sim/memory_model.h"
#include "sim/parallel_config.h"
#include "sim/simulator.h"

namespace cc {

// The name of a model that a Megatron-LM or NeMo file gives by its shape alone (they name none).
inline constexpr const char* kLayoutFileModelName = "from-layout-file";

struct LayoutFile {
  ParallelConfig config;
  std::optional<ModelSpec> model;
  std::optional<ClusterSpec> cluster;
  std::optional<int> gpus;
  std::optional<MemoryReserve> reserve;
  // Flags or keys read and left aside because they bear on neither time nor memory (learning
  // rate, data paths, logging...), for the one note line a command prints.
  std::vector<std::string> ignored;
  // What the reader assumed where the file is silent, one sentence each, for the command to
  // print as notes.
  std::vector<std::string> notes;
  // Non-empty when the model's vocabulary lives in a tokenizer file clustercast cannot read (a
  // NeMo config's sentencepiece model): the sentence saying so, for the command to refuse the
  // file with unless --vocab-size gives the vocabulary.
  std::string vocabulary_unknown;
  // Switches whose bearing flags beside the file may still change: resolve_run weighs them.
  MegatronSwitches switches;
  // The file's vocabulary before Megatron-LM's padding (a Megatron argument file or a NeMo
  // config): padded again at the run's TP when flags beside the file change it.
  std::optional<MegatronVocabulary> vocabulary;
  // A Megatron argument file's model flags: tokenizer flags beside the file override its own, as
  // later flags do on Megatron-LM's command line (RunFlags::request).
  std::optional<MegatronModelArgs> megatron_model;
  // The file states its global batch; otherwise the run's is micro batch x the run's DP, as
  // Megatron-LM's default is (config.global_batch holds the file's own DP's meanwhile).
  bool global_batch_named = false;
};

// One layout document from its text; `where` names it in messages ("layout file 'x.yaml'").
// Bad input of any kind is a SpecError naming the value.
LayoutFile parse_layout_text(const std::string& text, const std::string& where);
// A regular file read and parsed; for a Megatron argument file, the launch script beside it
// (megatron_script_path) adds the cluster and GPU count when it exists.
LayoutFile read_layout_file(const std::string& path);

// Megatron-LM's --attention-backend: auto, flash and fused never store the s x s scores
// (Flash); unfused does (Unfused). local (Megatron-LM takes it only beside --spec local) and
// anything else is a SpecError naming `where`.
AttentionKernel attention_backend_from(const std::string& name, const std::string& where);

std::string layout_json(const SimResult& result, const MemoryReserve& reserve);
// Megatron-LM arguments only, one per line: what a format cannot express (ALiBi, GeGLU) is a
// SpecError naming it.
std::string megatron_arguments(const SimResult& result, const MemoryReserve& reserve);
// The runnable launch script that goes beside the argument file: the environment Megatron-LM
// needs, torchrun with the node count, `pretrain_gpt.py $(cat ARGS)`, and the clustercast line.
std::string megatron_launch_script(const SimResult& result, const MemoryReserve& reserve,
                                   const std::string& arguments_path);
std::string megatron_script_path(const std::string& arguments_path);
std::string nemo_yaml(const SimResult& result, const MemoryReserve& reserve);

}  // namespace cc
