// training_kernels.cu — the training loop's glue kernels (contracts in training_kernels.h).
// Review notes above each kernel use kernels.cu's vocabulary ("pack", "flat").
#include "engine/cuda/training_kernels.h"

#include "engine/cuda/cuda_check.h"
#include "engine/cuda/kernel_support.cuh"

namespace cc::cuda {
namespace {

using namespace kernel_support;

// Review: flat; thread t converts pack t (4 floats in, 4 floats or 4 bf16 out), coalesced.
// The input is fp32 whatever T is, so the vector width is the fp32 one (kVec<float> = 4).
template <typename T, int V>
__global__ void cast_kernel(const float* in, T* out, std::int64_t n) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load<W>(in + i, v);
    for (int k = 0; k < W; ++k) out[i + k] = from_float<T>(v[k]);
  });
}

// Review: flat over y; a pack never crosses a row on the vector path (cols % V == 0), so
// its bias values are the V consecutive floats at column i % cols (read through L1: every
// row reuses the same cols floats).
template <typename T, int V>
__global__ void add_bias_kernel(T* y, const float* bias, std::int64_t n, int cols) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load<W>(y + i, v);
    const int c = static_cast<int>(i % cols);
    for (int k = 0; k < W; ++k) v[k] += bias[c + k];
    store<W>(y + i, v);
  });
}

// Review: flat; a, b and out packs at the same index, fully coalesced.
template <typename T, int V>
__global__ void add_kernel(const T* a, const T* b, T* out, std::int64_t n) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float x[W], y[W];
    load<W>(a + i, x);
    load<W>(b + i, y);
    for (int k = 0; k < W; ++k) x[k] += y[k];
    store<W>(out + i, x);
  });
}

constexpr int kColTile = 32;    // columns per block of the column-sum kernel
constexpr int kRowSlices = 32;  // rows walked in parallel per column

// Review: as kernels.cu's LayerNorm parameter gradient — block (32 columns × 32 row slices),
// grid = ceil(cols/32). Thread (c, s) sums rows s, s+32, ... of column c, so each warp
// (fixed s) reads 32 consecutive columns of one row (coalesced). The 32 slice partials meet
// in shared memory ([slice][column], conflict-free) and slice 0 adds them in slice order: a
// fixed summation order (bitwise reproducible), no atomics (one block owns each column), and
// 32x the parallelism of a thread-per-column walk over the rows.
template <typename T>
__global__ void __launch_bounds__(kColTile * kRowSlices) column_sums_kernel(const T* x, int rows, int cols,
                                                                           float* sums) {
  __shared__ float part[kRowSlices][kColTile];
  const int col = static_cast<int>(blockIdx.x) * kColTile + static_cast<int>(threadIdx.x);
  float s = 0.0f;
  if (col < cols)
    for (int r = static_cast<int>(threadIdx.y); r < rows; r += kRowSlices)
      s += to_float(x[static_cast<std::int64_t>(r) * cols + col]);
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float total = 0.0f;
    for (int k = 0; k < kRowSlices; ++k) total += part[k][threadIdx.x];
    sums[col] += total;
  }
}

// Review: flat over x as add_bias; the table row is the element's position, so a pack reads
// V consecutive table values of one row.
template <typename T, int V>
__global__ void add_positions_kernel(T* x, const T* table, std::int64_t n, int cols, int batch, int row_offset) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    const std::int64_t r = i / cols;
    const int c = static_cast<int>(i % cols);
    const std::int64_t position = (row_offset + r) / batch;
    float v[W], p[W];
    load<W>(x + i, v);
    load<W>(table + position * cols + c, p);
    for (int k = 0; k < W; ++k) v[k] += p[k];
    store<W>(x + i, v);
  });
}

// Review: thread per (position, column), columns contiguous across a warp (coalesced); the
// thread walks the rows of its position (at most `batch`, consecutive rows) in order. One
// writer per dtable element: no atomics.
template <typename T>
__global__ void positions_backward_kernel(const T* dx, int rows, int cols, int batch, int row_offset,
                                          int first_position, float* dtable) {
  const int c = static_cast<int>(blockIdx.x) * blockDim.x + static_cast<int>(threadIdx.x);
  const int position = first_position + static_cast<int>(blockIdx.y);
  if (c >= cols) return;
  const int begin = max(position * batch - row_offset, 0);
  const int end = min((position + 1) * batch - row_offset, rows);
  // The CPU adds row by row into the table (dtable += dx[r], r ascending): the same order.
  float* out = dtable + static_cast<std::int64_t>(position) * cols + c;
  float acc = *out;
  for (int r = begin; r < end; ++r) acc += to_float(dx[static_cast<std::int64_t>(r) * cols + c]);
  *out = acc;
}

// Review: pass 1 is a grid-stride walk (fixed grid of kSumSquaresBlocks × 256) with each
// thread's squares summed in double, then a shared-memory tree per block in a fixed shape;
// pass 2, one block, sums the block partials in index order. Coalesced reads; fixed order,
// so the norm repeats bit for bit.
constexpr int kReduceThreads = 256;

__device__ double block_sum_double(double v) {
  __shared__ double part[kReduceThreads];
  part[threadIdx.x] = v;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  return part[0];
}

template <bool kSquares>
__global__ void sum_partial_kernel(const float* x, std::int64_t n, double* partials) {
  double s = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * kReduceThreads)
    s += kSquares ? static_cast<double>(x[i]) * static_cast<double>(x[i]) : static_cast<double>(x[i]);
  const double block = block_sum_double(s);
  if (threadIdx.x == 0) partials[blockIdx.x] = block;
}

__global__ void sum_partials_kernel(const double* partials, int count, double* total) {
  double s = 0;
  for (int i = static_cast<int>(threadIdx.x); i < count; i += kReduceThreads) s += partials[i];
  const double block = block_sum_double(s);
  if (threadIdx.x == 0) *total += block;
}

// Review: flat, one pack of 4 floats per thread.
template <int V>
__global__ void fill_kernel(float* x, std::int64_t n, float value) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    for (int k = 0; k < W; ++k) v[k] = value;
    store<W>(x + i, v);
  });
}

// Review: flat over fp32 values, one pack of 4 per thread.
template <int V>
__global__ void scale_kernel(float* x, std::int64_t n, float factor) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load<W>(x + i, v);
    for (int k = 0; k < W; ++k) v[k] *= factor;
    store<W>(x + i, v);
  });
}

unsigned column_blocks(int cols) { return static_cast<unsigned>((cols + kThreads - 1) / kThreads); }

}  // namespace

template <typename T>
void cast_from_f32(const float* in, T* out, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  // A pack of 4 floats stores 4 T values: 8 bytes for bf16, aligned whenever `out` is.
  with_width<float>(all_aligned(in, out), [&](auto width) {
    constexpr int V = decltype(width)::value;
    cast_kernel<T, V><<<flat_blocks<V>(n), kThreads, 0, stream>>>(in, out, n);
  });
}

template <typename T>
void add_bias(T* y, const float* bias, int rows, int cols, cudaStream_t stream) {
  const std::int64_t n = static_cast<std::int64_t>(rows) * cols;
  if (n == 0) return;
  with_width<T>(cols % kVec<T> == 0 && all_aligned(y), [&](auto width) {
    constexpr int V = decltype(width)::value;
    add_bias_kernel<T, V><<<flat_blocks<V>(n), kThreads, 0, stream>>>(y, bias, n, cols);
  });
}

template <typename T>
void add(const T* a, const T* b, T* out, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  with_width<T>(all_aligned(a, b, out), [&](auto width) {
    constexpr int V = decltype(width)::value;
    add_kernel<T, V><<<flat_blocks<V>(n), kThreads, 0, stream>>>(a, b, out, n);
  });
}

template <typename T>
void column_sums_add(const T* x, int rows, int cols, float* sums, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const unsigned tiles = static_cast<unsigned>((cols + kColTile - 1) / kColTile);
  column_sums_kernel<T><<<tiles, dim3(kColTile, kRowSlices), 0, stream>>>(x, rows, cols, sums);
  CC_CUDA_LAUNCHED();
}

template <typename T>
void add_positions(T* x, const T* table, int rows, int cols, int batch, int row_offset, cudaStream_t stream) {
  const std::int64_t n = static_cast<std::int64_t>(rows) * cols;
  if (n == 0) return;
  with_width<T>(cols % kVec<T> == 0 && all_aligned(x, table), [&](auto width) {
    constexpr int V = decltype(width)::value;
    add_positions_kernel<T, V><<<flat_blocks<V>(n), kThreads, 0, stream>>>(x, table, n, cols, batch, row_offset);
  });
}

template <typename T>
void positions_backward(const T* dx, int rows, int cols, int batch, int row_offset, float* dtable,
                        cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const int first = row_offset / batch, last = (row_offset + rows - 1) / batch;
  const dim3 grid(column_blocks(cols), static_cast<unsigned>(last - first + 1));
  positions_backward_kernel<T><<<grid, kThreads, 0, stream>>>(dx, rows, cols, batch, row_offset, first, dtable);
  CC_CUDA_LAUNCHED();
}

template <bool kSquares>
void sum_into(const float* x, std::int64_t n, double* total, double* scratch, cudaStream_t stream) {
  if (n == 0) return;
  sum_partial_kernel<kSquares><<<kSumSquaresBlocks, kReduceThreads, 0, stream>>>(x, n, scratch);
  CC_CUDA_LAUNCHED();
  sum_partials_kernel<<<1, kReduceThreads, 0, stream>>>(scratch, kSumSquaresBlocks, total);
  CC_CUDA_LAUNCHED();
}

void sum_squares_add(const float* x, std::int64_t n, double* total, double* scratch, cudaStream_t stream) {
  sum_into<true>(x, n, total, scratch, stream);
}

void sum_add(const float* x, std::int64_t n, double* total, double* scratch, cudaStream_t stream) {
  sum_into<false>(x, n, total, scratch, stream);
}

void fill(float* x, std::int64_t n, float value, cudaStream_t stream) {
  if (n == 0) return;
  with_width<float>(all_aligned(x), [&](auto width) {
    constexpr int V = decltype(width)::value;
    fill_kernel<V><<<flat_blocks<V>(n), kThreads, 0, stream>>>(x, n, value);
  });
}

void scale(float* x, std::int64_t n, float factor, cudaStream_t stream) {
  if (n == 0) return;
  with_width<float>(all_aligned(x), [&](auto width) {
    constexpr int V = decltype(width)::value;
    scale_kernel<V><<<flat_blocks<V>(n), kThreads, 0, stream>>>(x, n, factor);
  });
}

#define CC_TRAINING_KERNELS_INSTANTIATE(T)                              \
  template decltype(cast_from_f32<T>) cast_from_f32<T>;                 \
  template decltype(add_bias<T>) add_bias<T>;                           \
  template decltype(add<T>) add<T>;                                     \
  template decltype(column_sums_add<T>) column_sums_add<T>;             \
  template decltype(add_positions<T>) add_positions<T>;                 \
  template decltype(positions_backward<T>) positions_backward<T>;

CC_TRAINING_KERNELS_INSTANTIATE(float)
CC_TRAINING_KERNELS_INSTANTIATE(__nv_bfloat16)

#undef CC_TRAINING_KERNELS_INSTANTIATE

}  // namespace cc::cuda
