#include "engine/cuda/gemm.h"

#include <algorithm>
#include <climits>
#include <type_traits>

#include "engine/cuda/cuda_check.h"

namespace cc::cuda {

namespace {

template <typename T>
cudaDataType_t data_type() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16BF;
}

int as_int(std::int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX) throw CudaError(std::string("gemm: ") + what + " does not fit cuBLAS's int");
  return static_cast<int>(v);
}

// cuBLAS is column-major. A row-major X[r×c] is the column-major Xᵀ, so the row-major
// C = op(A)·op(B) is computed as the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the operands and
// the roles of m and n; leading dimensions are the row-major row lengths.
struct ColumnMajor {
  cublasOperation_t op_first, op_second;
  int rows, cols, inner, ld_first, ld_second, ld_c;
};

ColumnMajor column_major(const GemmShape& s) {
  ColumnMajor g;
  g.op_first = s.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;   // B's role
  g.op_second = s.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;  // A's role
  g.rows = as_int(s.n, "n");
  g.cols = as_int(s.m, "m");
  g.inner = as_int(s.k, "k");
  // k = 0 (C = beta·C) still needs leading dimensions of at least 1.
  g.ld_first = std::max(1, as_int(s.ldb ? s.ldb : (s.transpose_b ? s.k : s.n), "ldb"));
  g.ld_second = std::max(1, as_int(s.lda ? s.lda : (s.transpose_a ? s.m : s.k), "lda"));
  g.ld_c = as_int(s.ldc ? s.ldc : s.n, "ldc");
  return g;
}

template <typename T, typename TC>
void gemm_any(cublasHandle_t handle, const GemmShape& shape, const T* a, const T* b, TC* c, float alpha, float beta) {
  if (shape.m == 0 || shape.n == 0) return;  // an empty shard: cuBLAS would reject ld = 0
  const ColumnMajor g = column_major(shape);
  CC_CUBLAS(cublasGemmEx(handle, g.op_first, g.op_second, g.rows, g.cols, g.inner, &alpha, b, data_type<T>(),
                         g.ld_first, a, data_type<T>(), g.ld_second, &beta, c, data_type<TC>(), g.ld_c,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

template <typename T>
void gemm(cublasHandle_t handle, const GemmShape& shape, const T* a, const T* b, T* c, float alpha, float beta) {
  gemm_any(handle, shape, a, b, c, alpha, beta);
}

template <typename T>
void gemm_f32_out(cublasHandle_t handle, const GemmShape& shape, const T* a, const T* b, float* c, float alpha,
                  float beta) {
  gemm_any(handle, shape, a, b, c, alpha, beta);
}

template <typename T>
void gemm_strided_batched(cublasHandle_t handle, const GemmShape& shape, const T* a, std::int64_t stride_a,
                          const T* b, std::int64_t stride_b, T* c, std::int64_t stride_c, std::int64_t batch,
                          float alpha, float beta) {
  if (shape.m == 0 || shape.n == 0 || batch == 0) return;
  const ColumnMajor g = column_major(shape);
  CC_CUBLAS(cublasGemmStridedBatchedEx(handle, g.op_first, g.op_second, g.rows, g.cols, g.inner, &alpha, b,
                                       data_type<T>(), g.ld_first, stride_b, a, data_type<T>(), g.ld_second, stride_a,
                                       &beta, c, data_type<T>(), g.ld_c, stride_c, as_int(batch, "batch"),
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template void gemm<float>(cublasHandle_t, const GemmShape&, const float*, const float*, float*, float, float);
template void gemm<__nv_bfloat16>(cublasHandle_t, const GemmShape&, const __nv_bfloat16*, const __nv_bfloat16*,
                                  __nv_bfloat16*, float, float);
template void gemm_f32_out<float>(cublasHandle_t, const GemmShape&, const float*, const float*, float*, float,
                                  float);
template void gemm_f32_out<__nv_bfloat16>(cublasHandle_t, const GemmShape&, const __nv_bfloat16*,
                                          const __nv_bfloat16*, float*, float, float);
template void gemm_strided_batched<float>(cublasHandle_t, const GemmShape&, const float*, std::int64_t, const float*,
                                          std::int64_t, float*, std::int64_t, std::int64_t, float, float);
template void gemm_strided_batched<__nv_bfloat16>(cublasHandle_t, const GemmShape&, const __nv_bfloat16*, std::int64_t,
                                                  const __nv_bfloat16*, std::int64_t, __nv_bfloat16*, std::int64_t,
                                                  std::int64_t, float, float);

}  // namespace cc::cuda
