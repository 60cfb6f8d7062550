// kernel_support.cuh — what every kernel file of the CUDA backend shares: the 16-byte
// "pack" loads and stores (fp32 arithmetic over float or bf16 storage), warp and block
// reductions, the flat element walk, and the host-side launch helpers that pick the vector
// width. kernels.cu states the access-pattern vocabulary these implement.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "engine/cuda/cuda_check.h"

namespace cc::cuda::kernel_support {
constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kThreads = 256;                     // every 1-D launch
constexpr int kRowsPerBlock = kThreads / kWarp;   // warp-per-row kernels
constexpr int kEmbeddingThreads = 128;            // block per token row: a GPT hidden of 768+ floats is ≥ 192 packs

template <typename T>
constexpr int kVec = static_cast<int>(16 / sizeof(T));

// V consecutive values, aligned so that one access moves them (at most 16 bytes per access).
template <typename T, int V>
struct alignas(sizeof(T) * V < 16 ? sizeof(T) * V : 16) Pack {
  T v[V];
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x) {
  if constexpr (std::is_same_v<T, float>)
    return x;
  else
    return __float2bfloat16_rn(x);
}

template <int V, typename T>
__device__ __forceinline__ void load(const T* p, float (&out)[V]) {
  const Pack<T, V> pack = *reinterpret_cast<const Pack<T, V>*>(p);
#pragma unroll
  for (int k = 0; k < V; ++k) out[k] = to_float(pack.v[k]);
}

template <int V, typename T>
__device__ __forceinline__ void store(T* p, const float (&in)[V]) {
  Pack<T, V> pack;
#pragma unroll
  for (int k = 0; k < V; ++k) pack.v[k] = from_float<T>(in[k]);
  *reinterpret_cast<Pack<T, V>*>(p) = pack;
}

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <typename Op>
__device__ __forceinline__ float warp_reduce(float x, Op op) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) x = op(x, __shfl_xor_sync(kFullMask, x, offset));
  return x;
}

// Every thread of the block gets the reduction of every thread's x.
template <typename Op>
__device__ float block_reduce(float x, Op op, float identity) {
  __shared__ float partial[kWarp];
  const int lane = static_cast<int>(threadIdx.x) % kWarp, warp = static_cast<int>(threadIdx.x) / kWarp;
  x = warp_reduce(x, op);
  __syncthreads();  // a previous call's readers are done with `partial`
  if (lane == 0) partial[warp] = x;
  __syncthreads();
  x = lane < static_cast<int>(blockDim.x) / kWarp ? partial[lane] : identity;
  return warp_reduce(x, op);  // every warp reduces the same partials: no broadcast step needed
}

// The flat walk: thread t gets pack t (f(first index, V)), then the scalar tail
// (f(index, 1)). Width arrives as a std::integral_constant so `f` can size arrays with it.
template <int V, typename F>
__device__ __forceinline__ void for_my_elements(std::int64_t n, F&& f) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t packs = n / V;
  if (t < packs)
    f(t * V, std::integral_constant<int, V>{});
  else if (t < packs + n % V)
    f(packs * V + (t - packs), std::integral_constant<int, 1>{});
}

// ---- host-side launch helpers ----

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <typename... P>
bool all_aligned(const P*... pointers) {
  return (aligned16(pointers) && ...);
}

// Runs launch(integral_constant<int, V>) with V = kVec<T> when `vector`, else V = 1, then
// checks the launch.
template <typename T, typename Launch>
void with_width(bool vector, Launch&& launch) {
  if (vector)
    launch(std::integral_constant<int, kVec<T>>{});
  else
    launch(std::integral_constant<int, 1>{});
  CC_CUDA_LAUNCHED();
}

template <int V>
unsigned flat_blocks(std::int64_t n) {
  const std::int64_t units = n / V + n % V;  // pack owners + tail owners
  return static_cast<unsigned>((units + kThreads - 1) / kThreads);
}

inline unsigned row_blocks(std::int64_t rows) {
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

}  // namespace cc::cuda::kernel_support
