// fuzz_layout_file — a layout file as `simulate --config FILE` reads it (interop/layout_files.h):
// our layout JSON, a Megatron-LM argument file or a NeMo YAML, the format recognised from the
// content, so one target reaches all three readers. An accepted layout then goes through the
// CLI's next steps: the parallel config checked against the file's model (or the tiny preset
// when it has none), cluster and GPU count, and the memory model of a layout that passes.
//
// read_layout_file takes a path only, so each input is written to one file per process in
// /dev/shm (memory, not disk; $TMPDIR or /tmp where it is missing) and read back from there.
// When interop offers a text entry point (parse_layout_text), call it instead.
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "interop/layout_files.h"
#include "sim/memory_model.h"
#include "sim/presets.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

const std::string& scratch_path() {
  static const std::string path = [] {
    std::filesystem::path folder = "/dev/shm";
    if (!std::filesystem::is_directory(folder)) {
      const char* tmp = std::getenv("TMPDIR");
      folder = tmp && *tmp ? tmp : "/tmp";
    }
    return (folder / ("clustercast-fuzz-layout-" + std::to_string(::getpid()))).string();
  }();
  return path;
}

struct RemoveScratch {
  ~RemoveScratch() { std::remove(scratch_path().c_str()); }
} remove_scratch;  // at exit; a crash leaves one small file, which the next run of this pid overwrites

cc::LayoutFile read_layout_text(const std::string& text) {
  std::FILE* f = std::fopen(scratch_path().c_str(), "wb");
  if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0)
    cc::fuzz::finding("cannot write the scratch file " + scratch_path());
  return cc::read_layout_file(scratch_path());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cc::fuzz::text_of(data, size);
  cc::fuzz::parse_or_refuse([&] {
    const cc::LayoutFile layout = read_layout_text(text);
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
