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
//     "--num-layers", "--hidden-size", "--num-attention-heads", ...), never a short
//     form such as "--tp";
//   - the JSON key where the value has no flag (a layout or model file's key, e.g.
//     "virtual_pipeline_model_parallel_size"), spelt as in the file;
//   - empty when no single field is at fault (a corrupt file, an unknown preset read
//     from a path, a check that the caller cannot pin on one input).
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
