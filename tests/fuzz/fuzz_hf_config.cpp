// fuzz_hf_config — a HuggingFace config.json (interop/hf_config.h model_from_hf_config), read as
// `--model config.json` does, once with the file's own sequence length and once with a
// --seq-length given (Falcon-style files have none). An accepted import must pass the
// model's own checks and count its parameters and FLOPs.
#include "interop/hf_config.h"
#include "sim/flops.h"
#include "sim/json_fields.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

void import(const nlohmann::json& doc, std::optional<int> seq_length) {
  cc::fuzz::parse_or_refuse([&] {
    const cc::HfImport hf = cc::model_from_hf_config(doc, "model file 'config.json'", seq_length);
    hf.model.validate("fuzz HF import");
    (void)hf.model.total_parameters();
    (void)cc::model_flops_per_iteration(hf.model, 1);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::json doc;
  try {
    doc = cc::parse_json(cc::fuzz::text_of(data, size), "model file 'config.json'");
  } catch (const cc::SpecError&) {
    return 0;
  }
  (void)cc::is_hf_config(doc);
  import(doc, std::nullopt);
  import(doc, 2048);
  return 0;
}
