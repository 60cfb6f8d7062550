// training_kernels.h — the small kernels the GPU training loop needs between the ops of
// kernels.h: keeping the bf16/fp32 compute copy of the fp32 master weights, bias and
// residual adds, bias and position-embedding gradients, and the squared sum behind the
// global gradient norm. Same conventions as kernels.h (device row-major arrays, fp32
// arithmetic, launch on `stream`, no host synchronisation, empty inputs enqueue nothing).
// Every sum runs in a fixed order, so a run repeats bit for bit; the position gradients add
// rows in the CPU engine's order (row 0 first).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace cc::cuda {

// out[i] = T(in[i]) over n values (round to nearest even for bf16; a copy for float).
template <typename T>
void cast_from_f32(const float* in, T* out, std::int64_t n, cudaStream_t stream);

// y[r, c] += bias[c] over y [rows × cols] (the bias of a linear, or of bias-dropout-add).
template <typename T>
void add_bias(T* y, const float* bias, int rows, int cols, cudaStream_t stream);

// out = a + b over n values (the residual adds); out may alias a or b.
template <typename T>
void add(const T* a, const T* b, T* out, std::int64_t n, cudaStream_t stream);

// sums[c] += Σ_r x[r, c] (bias gradients), in a fixed order: 32 strided row slices, then the slices in order.
template <typename T>
void column_sums_add(const T* x, int rows, int cols, float* sums, cudaStream_t stream);

// Learned positions of sequence-first rows: local row r is full row row_offset + r, at
// position (row_offset + r) / batch. Forward: x[r] += table[position]. Backward:
// dtable[position] += dx[r] for every local row, rows of one position in ascending order.
template <typename T>
void add_positions(T* x, const T* table, int rows, int cols, int batch, int row_offset, cudaStream_t stream);
template <typename T>
void positions_backward(const T* dx, int rows, int cols, int batch, int row_offset, float* dtable,
                        cudaStream_t stream);

// *total += Σ x[i]² in double, in a fixed order (a fixed grid's partials, then one block
// summing them in index order). `scratch` holds kSumSquaresBlocks doubles of the caller's.
inline constexpr int kSumSquaresBlocks = 256;
void sum_squares_add(const float* x, std::int64_t n, double* total, double* scratch, cudaStream_t stream);
// *total += Σ x[i] in double, the same way (the loss of a microbatch's rows).
void sum_add(const float* x, std::int64_t n, double* total, double* scratch, cudaStream_t stream);

// x[i] = value over n values (the per-row loss gradient).
void fill(float* x, std::int64_t n, float value, cudaStream_t stream);

// x[i] *= factor (gradient clipping).
void scale(float* x, std::int64_t n, float factor, cudaStream_t stream);

}  // namespace cc::cuda
