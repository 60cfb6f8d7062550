// nvtx_ranges.h — the engine's annotations as NVTX ranges, so Nsight Systems (nsys profile
// clustercast train --backend cuda ...) shows every op and collective under the same name
// the CPU profiler and the simulator use. Installed by the GPU trainer when no profiler
// recorder is (the CUPTI recorder pushes the same ranges itself).
#pragma once

#include <nvtx3/nvToolsExt.h>

#include "engine/annotations.h"

namespace cc::cuda {

class NvtxRanges final : public engine::OpRecorder {
 public:
  void begin(const engine::OpAnnotation& op) override { nvtxRangePushA(op.name); }
  void end(const engine::OpAnnotation&) override { nvtxRangePop(); }
};

// Makes `ranges` the active recorder for a scope unless one is already installed.
class NvtxInstalled {
 public:
  explicit NvtxInstalled(NvtxRanges& ranges) : installed_(engine::active_recorder() == nullptr) {
    if (installed_) engine::active_recorder() = &ranges;
  }
  ~NvtxInstalled() {
    if (installed_) engine::active_recorder() = nullptr;
  }
  NvtxInstalled(const NvtxInstalled&) = delete;
  NvtxInstalled& operator=(const NvtxInstalled&) = delete;

 private:
  bool installed_;
};

}  // namespace cc::cuda
