// fuzz_layout_file — a layout file as `simulate --config FILE` reads it (interop/layout_files.h):
// our layout JSON, a Megatron-LM argument file or a NeMo YAML, the format recognised from the
// content, so one target reaches all three readers. An accepted layout then goes through the
// CLI's next steps: the parallel config checked against the file's model (or the tiny preset
// when it has none), cluster and GPU count, and the memory model of a layout that passes.
//
// It calls parse_layout_text, the text under read_layout_file; what the file version adds
// (a Megatron launch script read from beside the argument file) is left out.
#include "interop/layout_files.h"
#include "sim/layout_validation.h"
#include "sim/memory_model.h"
#include "sim/presets.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cc::fuzz::text_of(data, size);
  cc::fuzz::parse_or_refuse([&] {
    const cc::LayoutFile layout = cc::parse_layout_text(text, "layout file 'fuzz'");
    static const cc::ModelSpec tiny = cc::load_model("tiny");
    static const cc::ClusterSpec default_cluster = cc::load_cluster("dgx-a100-80gb");
    const cc::ModelSpec& model = layout.model ? *layout.model : tiny;
    model.validate("fuzz layout model");
    const cc::ClusterSpec& cluster = layout.cluster ? *layout.cluster : default_cluster;
    cc::validate(layout.config, model, cluster, layout.gpus.value_or(0));
    (void)cc::memory_model(model, layout.config);
  });
  return 0;
}
