#include "engine/cuda/cuda_check.h"

namespace cc::cuda {

void throw_failure(const char* library, const std::string& what, const char* call, const char* file, int line) {
  throw CudaError(std::string(library) + " error '" + what + "' in " + call + " at " + file + ":" + std::to_string(line));
}

std::string no_gpu_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) return std::string("no usable CUDA device: ") + cudaGetErrorString(status);
  if (count == 0) return "no CUDA device on this machine";
  return "";
}

}  // namespace cc::cuda
