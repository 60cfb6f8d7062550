// gemm.h — the engine's GEMMs on cuBLAS, in the engine's row-major convention:
//   C[m×n] = alpha · op(A)·op(B) + beta · C,   op(X) = X or Xᵀ,
// storage T = float or bf16, accumulation always fp32 (CUBLAS_COMPUTE_32F; Tensor Cores for
// bf16, and for fp32 only when the caller allows TF32). beta = 1 accumulates, which the
// weight-gradient GEMMs use to add into the gradient across microbatches.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cstdint>

namespace cc::cuda {

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false;  // A is stored k×m and used transposed
  bool transpose_b = false;  // B is stored n×k and used transposed
};

// Row-major A, B, C on the device; runs on the handle's stream.
template <typename T>
void gemm(cublasHandle_t handle, const GemmShape& shape, const T* a, const T* b, T* c, float alpha = 1.0f,
          float beta = 0.0f);

// `batch` independent products with constant strides between them (attention per head).
template <typename T>
void gemm_strided_batched(cublasHandle_t handle, const GemmShape& shape, const T* a, std::int64_t stride_a,
                          const T* b, std::int64_t stride_b, T* c, std::int64_t stride_c, std::int64_t batch,
                          float alpha = 1.0f, float beta = 0.0f);

}  // namespace cc::cuda
