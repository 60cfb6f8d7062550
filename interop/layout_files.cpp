// layout_files.cpp — which format a layout file is, from its content: '{' opens our JSON, a first
// line of "--flags" a Megatron-LM argument file, "key:" lines a NeMo YAML.
#include "interop/layout_files.h"

#include <filesystem>
#include <sstream>

#include "interop/layout_common.h"
#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc {

namespace {

enum class Format { Json, Megatron, Nemo, LaunchScript };

Format format_of(const std::string& text, const std::string& where) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) fail("{} is empty", where);
  if (text[first] == '{') return Format::Json;
  if (text.compare(first, 2, "#!") == 0) return Format::LaunchScript;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    if (line.compare(start, 2, "--") == 0) return Format::Megatron;
    if (line.find(':') != std::string::npos) return Format::Nemo;
    break;
  }
  fail("{}: not a clustercast JSON layout, a Megatron-LM argument file or a NeMo YAML", where);
}

}  // namespace

LayoutFile parse_layout_text(const std::string& text, const std::string& where) {
  switch (format_of(text, where)) {
    case Format::Json: return interop::read_json_layout(text, where);
    case Format::Megatron: return interop::read_megatron(text, where);
    case Format::Nemo: return interop::read_nemo(text, where);
    case Format::LaunchScript: break;
  }
  fail("{} is a shell script; give --config the Megatron-LM argument file it passes to pretrain_gpt.py (the "
       "script beside it is read from there)",
       where);
}

LayoutFile read_layout_file(const std::string& path) {
  const std::string text = read_regular_file(path, "layout file");
  const std::string where = "layout file '" + path + "'";
  if (format_of(text, where) != Format::Megatron) return parse_layout_text(text, where);
  // The launch script `search --export-megatron` writes beside the arguments carries the
  // cluster and GPU count; an argument file alone is read without them.
  const std::string script = megatron_script_path(path);
  std::error_code ec;
  const std::string script_text =
      std::filesystem::is_regular_file(script, ec) ? read_regular_file(script, "launch script") : "";
  return interop::read_megatron(text, where, script_text);
}

AttentionKernel attention_backend_from(const std::string& name, const std::string& where) {
  if (name == "auto" || name == "flash" || name == "fused") return AttentionKernel::Flash;
  if (name == "unfused") return AttentionKernel::Unfused;
  // Megatron-LM asserts `args.spec[0] == 'local'` for it (arguments.py): a model spec module
  // clustercast does not read. Megatron-Core's local layers run the same unfused kernels.
  if (name == "local")
    fail_at("--attention-backend", "{}: --attention-backend local runs only beside --spec local (Megatron-LM asserts "
            "it), which clustercast does not read; use --transformer-impl local (Megatron-Core's local layers, the same "
            "unfused attention) or --attention-backend unfused", where);
  fail_at("--attention-backend", "{}: --attention-backend '{}' is not one of Megatron-LM's: auto, flash, fused, "
          "unfused, local", where, name);
}

}  // namespace cc
