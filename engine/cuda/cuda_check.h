// cuda_check.h — every CUDA runtime, cuBLAS and NCCL call goes through one of these
// macros: a failure throws CudaError naming the call, the file and line, and the library's
// own description, so a fault on a GPU machine is found from its message alone.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace cc::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_failure(const char* library, const std::string& what, const char* call, const char* file,
                                int line);

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_failure("CUDA", cudaGetErrorString(status), call, file, line);
}
inline void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_failure("cuBLAS", cublasGetStatusString(status), call, file, line);
}
inline void check(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess) throw_failure("NCCL", ncclGetErrorString(status), call, file, line);
}

// Why no GPU can be used here, or empty when one can: the reason GPU tests print when they skip.
std::string no_gpu_reason();

}  // namespace cc::cuda

#define CC_CUDA(call) ::cc::cuda::check((call), #call, __FILE__, __LINE__)
#define CC_CUBLAS(call) ::cc::cuda::check((call), #call, __FILE__, __LINE__)
#define CC_NCCL(call) ::cc::cuda::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here, not at a later sync.
#define CC_CUDA_LAUNCHED() ::cc::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
