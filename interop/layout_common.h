// layout_common.h — what the three layout formats share (internal to interop/): numbers read
// from text with the value named on failure, the "# clustercast: ..." line that carries what
// Megatron-LM and NeMo cannot say (cluster, GPU count, memory reserve), and the GPT-style base
// model that a file's shape keys refine.
#pragma once

#include <string>
#include <vector>

#include "interop/layout_files.h"

namespace cc::interop {

// "where: " or "" — the prefix of messages about a file (`where` empty: the command line).
std::string prefix(const std::string& where);

// Through sim/numbers.h: `what` (the flag or key) is named in the message and is the error's field.
int to_int(const std::string& value, const std::string& what, const std::string& where);
double to_double(const std::string& value, const std::string& what, const std::string& where);

// Reads the "# clustercast: --cluster NAME --gpus N ..." line of `text`, if any, into `out`:
// the cluster, GPU count, software stack (--framework) and memory reserve, and what a NeMo YAML has no key for — the
// vocabulary (--vocab-size, into out.model), uneven first/last stages and DP overlap without the
// distributed optimizer (into out.config).
void apply_clustercast_comment(const std::string& text, LayoutFile& out, const std::string& where);
// That line (with its "# " and newline; `extra` is appended to it), and a comment line with the
// prediction.
std::string clustercast_comment(const SimResult& r, const MemoryReserve& m, const std::string& extra = "");
std::string prediction_comment(const SimResult& r);

// A GPT-style model (vocabulary 51200, sequence 2048, GeLU, LayerNorm, learned positions) that
// the shape keys of a Megatron or NeMo file refine — the same base as the shape flags alone.
ModelSpec gpt_base();

// What Megatron-LM's model flags (and NeMo's keys, the same TransformerConfig fields) cannot say
// about a model, refused by name for `export_flag`: gpt-oss's router bias and sinks, OLMoE's
// whole-width q/k norms, and for a model with experts or MLA the bias combinations that
// Megatron-LM's one --add-bias-linear switch (with --add-qkv-bias) does not make.
void refuse_unwritable_architecture(const ModelSpec& m, const std::string& export_flag);

// DP from the file's GPU count, and the global batch Megatron-LM defaults to (micro x DP).
void finish_layout(LayoutFile& out, const std::string& where);

LayoutFile read_json_layout(const std::string& text, const std::string& where);
// `launch_script`: the text of the script beside the argument file ("" when there is none).
LayoutFile read_megatron(const std::string& text, const std::string& where, const std::string& launch_script = "");
LayoutFile read_nemo(const std::string& text, const std::string& where);

}  // namespace cc::interop
