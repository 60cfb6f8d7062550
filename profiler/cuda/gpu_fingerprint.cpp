// gpu_fingerprint.cpp — reads the GPU half of the machine fingerprint from the CUDA runtime,
// NCCL and cuBLAS. The SM clock comes from cudaDevAttrClockRate: CUDA 13 removed clockRate
// from cudaDeviceProp.
#include "profiler/cuda/gpu_fingerprint.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "engine/cuda/cuda_check.h"

namespace cc::profiler {

namespace {

std::string dotted(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

std::string cuda_version_string(int code) { return dotted(code / 1000, code % 1000 / 10, code % 10); }

std::string nccl_version_string(int code) {
  if (code >= 10000) return dotted(code / 10000, code % 10000 / 100, code % 100);  // NCCL >= 2.9
  return dotted(code / 1000, code % 1000 / 100, code % 100);
}

MachineFingerprint gpu_fingerprint(int device) {
  MachineFingerprint m;
  m.backend = "cuda";
  cudaDeviceProp prop{};
  CC_CUDA(cudaGetDeviceProperties(&prop, device));
  m.gpu_name = prop.name;
  m.gpu_sms = prop.multiProcessorCount;
  int clock_khz = 0;
  CC_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  m.gpu_clock_mhz = clock_khz / 1000;

  int code = 0;
  CC_CUDA(cudaDriverGetVersion(&code));  // the CUDA version the driver supports
  m.driver_version = cuda_version_string(code);
  CC_CUDA(cudaRuntimeGetVersion(&code));
  m.cuda_version = cuda_version_string(code);
  CC_NCCL(ncclGetVersion(&code));
  m.nccl_version = nccl_version_string(code);
  int major = 0, minor = 0, patch = 0;
  CC_CUBLAS(cublasGetProperty(MAJOR_VERSION, &major));
  CC_CUBLAS(cublasGetProperty(MINOR_VERSION, &minor));
  CC_CUBLAS(cublasGetProperty(PATCH_LEVEL, &patch));
  m.cublas_version = dotted(major, minor, patch);
  return m;
}

}  // namespace cc::profiler
