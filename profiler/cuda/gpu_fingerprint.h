// gpu_fingerprint.h — what a GPU cost database was measured on: the device (name, SM count,
// max SM clock) and the software stack whose versions move GPU timings (driver, CUDA runtime,
// NCCL, cuBLAS), read from the libraries themselves.
//
// Only the GPU fields are filled here: the CPU fields (model, cores, memory, MPI library) come
// from profiler::cpu_fingerprint() in clustercast_profiler, which this library does not link.
// The caller merges the two with with_gpu().
#pragma once

#include <string>

#include "sim/cost_database.h"

namespace cc::profiler {

// backend "cuda" and the GPU fields of `device`; throws cc::cuda::CudaError without a GPU.
MachineFingerprint gpu_fingerprint(int device);

// `cpu` (from cpu_fingerprint()) with the backend and GPU fields of `gpu`.
inline MachineFingerprint with_gpu(MachineFingerprint cpu, const MachineFingerprint& gpu) {
  cpu.backend = gpu.backend;
  cpu.gpu_name = gpu.gpu_name;
  cpu.gpu_sms = gpu.gpu_sms;
  cpu.gpu_clock_mhz = gpu.gpu_clock_mhz;
  cpu.driver_version = gpu.driver_version;
  cpu.cuda_version = gpu.cuda_version;
  cpu.nccl_version = gpu.nccl_version;
  cpu.cublas_version = gpu.cublas_version;
  return cpu;
}

// "major.minor.patch" from the integer codes the libraries report (exposed for tests):
// CUDA (cudaDriverGetVersion / cudaRuntimeGetVersion): 1000*major + 10*minor + patch, e.g. 12040;
// NCCL (ncclGetVersion): 10000*major + 100*minor + patch since 2.9, 1000*major + 100*minor + patch before.
std::string cuda_version_string(int code);
std::string nccl_version_string(int code);

}  // namespace cc::profiler
