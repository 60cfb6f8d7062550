// gemm.h — the engine's GEMMs on cuBLAS, in the engine's row-major convention:
//   C[m×n] = alpha · op(A)·op(B) + beta · C,   op(X) = X or Xᵀ,
// storage T = float or bf16, accumulation always fp32 (CUBLAS_COMPUTE_32F: Tensor Cores for
// bf16; full fp32 math for fp32, never TF32, so an fp32 GPU run matches the CPU engine to
// rounding — fp32 is the checking precision, bf16 the fast one). beta = 1 accumulates, which the
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
  // Row strides (elements between consecutive rows) of A, B and C as stored; 0 means packed
  // (the stored row length). A larger stride views a block of columns of a wider matrix: the
  // attention core reads one head of the sequence-first [s·b × heads·d] Q, K, V this way.
  std::int64_t lda = 0, ldb = 0, ldc = 0;
};

// Row-major A, B, C on the device; runs on the handle's stream.
template <typename T>
void gemm(cublasHandle_t handle, const GemmShape& shape, const T* a, const T* b, T* c, float alpha = 1.0f,
          float beta = 0.0f);

// C is fp32 while A and B are T: the weight-gradient GEMMs of a bf16 run add straight into
// the fp32 gradient (beta = 1), Megatron-LM's "main_grad" accumulation, so the gradient
// summed over microbatches never rounds to bf16.
template <typename T>
void gemm_f32_out(cublasHandle_t handle, const GemmShape& shape, const T* a, const T* b, float* c, float alpha = 1.0f,
                  float beta = 0.0f);

// `batch` independent products with constant strides between them (attention per head).
template <typename T>
void gemm_strided_batched(cublasHandle_t handle, const GemmShape& shape, const T* a, std::int64_t stride_a,
                          const T* b, std::int64_t stride_b, T* c, std::int64_t stride_c, std::int64_t batch,
                          float alpha = 1.0f, float beta = 0.0f);

}  // namespace cc::cuda
