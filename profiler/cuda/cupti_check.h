// cupti_check.h — every CUPTI call of the GPU profiler goes through CC_CUPTI: a failure throws
// cc::cuda::CudaError naming the call, the file and line, and CUPTI's own description, in the
// same form as CC_CUDA / CC_CUBLAS / CC_NCCL, so a profiling fault on a GPU machine reads like
// any other CUDA fault.
#pragma once

#include <cupti.h>

#include "engine/cuda/cuda_check.h"

namespace cc::cuda {

inline void check(CUptiResult status, const char* call, const char* file, int line) {
  if (status == CUPTI_SUCCESS) return;
  const char* what = nullptr;
  if (cuptiGetResultString(status, &what) != CUPTI_SUCCESS || what == nullptr) what = "unknown CUPTI result";
  throw_failure("CUPTI", what, call, file, line);
}

}  // namespace cc::cuda

#define CC_CUPTI(call) ::cc::cuda::check((call), #call, __FILE__, __LINE__)
