// fuzz_cluster_json — a cluster JSON (sim/cluster_spec.h cluster_from_json), as
// `--cluster FILE` reads it. An accepted cluster then prices what the cost model asks of it
// (peak FLOP/s per precision, node injection bandwidth for every GPU count of a node) and
// must write back to JSON that reads as the same cluster (the layout export embeds it).
#include <algorithm>

#include "sim/cluster_spec.h"
#include "sim/json_fields.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cc::fuzz::text_of(data, size);
  cc::fuzz::parse_or_refuse([&] {
    const cc::ClusterSpec c = cc::cluster_from_json(cc::parse_json(text, "cluster file 'fuzz.json'"), "cluster file 'fuzz.json'");
    for (const cc::Precision p : {cc::Precision::BF16, cc::Precision::FP16, cc::Precision::FP8, cc::Precision::FP32})
      (void)c.gpu.peak_flops(p);
    for (int g = 1; g <= std::min(c.gpus_per_node, 64); ++g) (void)c.network_injection_gbs(g);
    cc::fuzz::expect_reads_back(
        cc::cluster_to_json(c), [](const nlohmann::json& j) { return cc::cluster_from_json(j, "written cluster"); },
        [](const cc::ClusterSpec& again) { return cc::cluster_to_json(again); }, "cluster");
  });
  return 0;
}
