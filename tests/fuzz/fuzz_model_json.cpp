// fuzz_model_json — the text of a --model file (interop/model_input.h model_from_text): our model
// JSON, or a HuggingFace config.json when its content says so, as `--model FILE` reads it.
// An accepted model then goes through what the CLI computes from it first: its own checks,
// parameter and FLOP counts and the memory model on one GPU; and it must write back to JSON
// that reads as the same model (the layout export relies on it).
#include <vector>

#include "interop/model_input.h"
#include "sim/flops.h"
#include "sim/memory_model.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cc::fuzz::text_of(data, size);
  cc::fuzz::parse_or_refuse([&] {
    std::vector<std::string> notes;
    const cc::ModelSpec m = cc::model_from_text(text, "model file 'fuzz.json'", std::nullopt, &notes);
    m.validate("fuzz model");
    (void)m.total_parameters();
    (void)cc::model_flops_per_iteration(m, 1);
    (void)cc::memory_model(m, cc::ParallelConfig{});
    cc::fuzz::expect_reads_back(
        cc::model_to_json(m), [](const nlohmann::json& j) { return cc::model_from_json(j, "written model"); },
        [](const cc::ModelSpec& again) { return cc::model_to_json(again); }, "model");
  });
  return 0;
}
