// error.h — SpecError: the one error type for bad user input (unknown preset, malformed
// JSON, a layout that does not divide). Parsers and validators throw it deep inside; the
// executables catch it once, print its message and exit with status 2. A typed exception
// keeps every parser free of error plumbing; nothing else in the library throws on input.
//
// The field an error is about travels with it, so a front end (the GUI) can place the error
// beside its input without matching the message text:
//   - the canonical Megatron-LM flag name with its dashes, as the CLI spells it in full
//     ("--tensor-model-parallel-size", "--pipeline-model-parallel-size",
//     "--data-parallel-size", "--micro-batch-size", "--global-batch-size",
//     "--num-layers-per-virtual-pipeline-stage", "--recompute-num-layers",
//     "--sequence-parallel", "--use-distributed-optimizer", "--tp-comm-overlap",
//     "--num-layers", "--hidden-size", "--num-attention-heads", "--kv-channels", ...), never
//     a short form such as "--tp"; clustercast's own flags the same way ("--gpus",
//     "--precision", "--memory-headroom"). Checks of a value that has a flag name the flag
//     wherever the value came from (validate_layout, ModelSpec::validate, a Megatron-LM
//     argument file);
//   - a file reader that refuses a value as it reads it names the key it read, as its path
//     from the top of the document: a JSON key ("hidden_size" in a model file, "gpu.hbm_gib",
//     "virtual_pipeline_stages") or a NeMo YAML key ("model.micro_batch_size");
//   - empty when no single field is at fault (a corrupt file, an unknown preset, a check the
//     caller cannot pin on one input).
// A check about two values names the one the user should change (a comment beside it says why).
// fail() throws with no field; fail_at() names it.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace cc {

class SpecError : public std::runtime_error {
 public:
  explicit SpecError(const std::string& message, std::string field = {})
      : std::runtime_error(message), field_(std::move(field)) {}

  // The flag or JSON key this error is about (see the header comment); empty when unknown.
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw SpecError(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_at(std::string field, fmt::format_string<Args...> format, Args&&... args) {
  throw SpecError(fmt::format(format, std::forward<Args>(args)...), std::move(field));
}

}  // namespace cc
