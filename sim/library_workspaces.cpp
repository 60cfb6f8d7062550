#include "sim/library_workspaces.h"

#include "sim/framework_spec.h"
#include "sim/units.h"

namespace cc {

namespace {

constexpr int kTorchGemmThreads = 2;          // the forward's thread and autograd's backward thread
constexpr int kTransformerEngineGroupedStreams = 4;

bool hopper_or_later(const GpuSpec& gpu) { return gpu.compute_capability == 0 || gpu.compute_capability >= 9.0; }

}  // namespace

double library_workspace_bytes(const GpuSpec& gpu, const ModelSpec& model, const ParallelConfig& config) {
  const FrameworkSpec& stack = load_framework(config.framework);
  double bytes = 0;
  if (stack.pytorch) {
    const double workspace = stack.cublas_workspace_mib > 0 ? stack.cublas_workspace_mib * kMiB
                             : hopper_or_later(gpu)         ? 4096 * kKiB * 8
                                                            : 4096 * kKiB * 2 + 16 * kKiB * 8;
    bytes += kTorchGemmThreads * workspace;
  }
  if (stack.transformer_engine) {
    const double workspace = hopper_or_later(gpu) ? 32 * kMiB : 4 * kMiB;
    const bool grouped = model.moe.enabled() && config.moe.grouped_gemm;
    bytes += workspace * (1 + (grouped ? kTransformerEngineGroupedStreams : 0));
  }
  return bytes;
}

}  // namespace cc
