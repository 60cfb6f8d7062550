// kernels.cu — the CUDA backend's own kernels (declared, with their contracts, in kernels.h).
// Each kernel reproduces one CPU op of engine/ops/*.h: the same formula with the same
// rounding steps where they matter (divisions stay divisions, the softmax of the loss is
// rebuilt from the same exp, dropout draws the same counter-based random numbers), so the
// reference tests can compare every element against the CPU within fp32 rounding.
//
// Above each kernel, a review note: how it walks memory (which index is contiguous across
// threads, i.e. what coalesces), the vector width, how reductions are done, and the launch
// shape. Shared vocabulary:
// - "pack": V consecutive elements moved with one 16-byte load/store (V = 4 floats or 8 bf16;
//   fp32 companions of a bf16 pack, e.g. LayerNorm's gamma, move as two 16-byte halves). A
//   launcher picks the vector kernel (V = kVec<T>) when every pointer is 16-byte aligned and,
//   for row kernels, the row length is a multiple of V; otherwise the same kernel with V = 1.
// - "warp per row": a warp owns a row; lane l handles packs l, l+32, ... so each warp-wide
//   step reads 32 consecutive packs (512 contiguous bytes). Reductions are xor-shuffle
//   butterflies, which leave the identical result in every lane. 8 rows per 256-thread block.
// - "block per row": for rows long enough (a vocab slice) that one warp would serialise;
//   threads stride by packs across the row, warps reduce by shuffles, then through shared
//   memory across the block's 8 warps.
// - "flat": elementwise over n values, one pack per thread; the n % V values after the last
//   full pack go one per thread to the threads after the last pack-owning one (the scalar tail).
// Arithmetic is fp32; bf16 values are widened on load and rounded to nearest even on store.
#include "engine/cuda/kernels.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "engine/cuda/cuda_check.h"
#include "engine/cuda/kernel_support.cuh"
#include "engine/rng.h"

namespace cc::cuda {
namespace {

using namespace kernel_support;

// ============================================================================================
// LayerNorm
// ============================================================================================

// Review: warp per row (8 rows per 256-thread block, grid = ceil(rows/8)). Three sweeps over
// the row — mean, then the two-pass variance Σ(x-mean)² (the CPU's choice, free of E[x²]-E[x]²
// cancellation), then the output — each a coalesced pack walk; sweeps 2-3 re-read x from
// L1/L2 rather than holding an arbitrarily long row in registers. gamma/beta are read with
// the same pack index (fp32, contiguous). Reductions: xor-shuffle butterflies. Lane 0 stores
// the row's mean and rstd. rstd is 1/sqrtf (IEEE), not rsqrtf, to match the CPU's rounding.
template <typename T, int V>
__global__ void layernorm_forward_kernel(const T* x, const float* gamma, const float* beta, T* y, float* mean_out,
                                         float* rstd_out, int rows, int cols, float eps) {
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x) / kWarp;
  if (row >= rows) return;  // whole warp: the shuffles below see all 32 lanes
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const T* xr = x + static_cast<std::size_t>(row) * cols;
  T* yr = y + static_cast<std::size_t>(row) * cols;

  float sum = 0.0f;
  for (int c = lane * V; c < cols; c += kWarp * V) {
    float v[V];
    load<V>(xr + c, v);
    for (int k = 0; k < V; ++k) sum += v[k];
  }
  const float mean = warp_reduce(sum, Sum{}) / static_cast<float>(cols);

  float squares = 0.0f;
  for (int c = lane * V; c < cols; c += kWarp * V) {
    float v[V];
    load<V>(xr + c, v);
    for (int k = 0; k < V; ++k) squares += (v[k] - mean) * (v[k] - mean);
  }
  const float var = warp_reduce(squares, Sum{}) / static_cast<float>(cols);
  const float rstd = 1.0f / sqrtf(var + eps);

  for (int c = lane * V; c < cols; c += kWarp * V) {
    float v[V], g[V], b[V];
    load<V>(xr + c, v);
    load<V>(gamma + c, g);
    load<V>(beta + c, b);
    for (int k = 0; k < V; ++k) v[k] = (v[k] - mean) * rstd * g[k] + b[k];
    store<V>(yr + c, v);
  }
  if (lane == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
}

// Review: warp per row, as the forward (8 rows per block). Sweep 1 reduces Σg and Σg·x̂
// (g = dy·gamma, x̂ rebuilt from x and the saved mean/rstd) by shuffle butterflies; sweep 2
// re-reads dy, x, gamma (L1/L2) and writes dx. Both sweeps are coalesced pack walks.
template <typename T, int V>
__global__ void layernorm_backward_dx_kernel(const T* dy, const T* x, const float* gamma, const float* mean,
                                             const float* rstd, T* dx, int rows, int cols) {
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x) / kWarp;
  if (row >= rows) return;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const std::size_t offset = static_cast<std::size_t>(row) * cols;
  const float mu = mean[row], rs = rstd[row];

  float sum_g = 0.0f, sum_gx = 0.0f;
  for (int c = lane * V; c < cols; c += kWarp * V) {
    float d[V], v[V], w[V];
    load<V>(dy + offset + c, d);
    load<V>(x + offset + c, v);
    load<V>(gamma + c, w);
    for (int k = 0; k < V; ++k) {
      const float g = d[k] * w[k];
      sum_g += g;
      sum_gx += g * ((v[k] - mu) * rs);
    }
  }
  // The two means are the gradient flowing back through mean and rstd respectively.
  const float mean_g = warp_reduce(sum_g, Sum{}) / static_cast<float>(cols);
  const float mean_gx = warp_reduce(sum_gx, Sum{}) / static_cast<float>(cols);

  for (int c = lane * V; c < cols; c += kWarp * V) {
    float d[V], v[V], w[V];
    load<V>(dy + offset + c, d);
    load<V>(x + offset + c, v);
    load<V>(gamma + c, w);
    for (int k = 0; k < V; ++k) {
      const float xhat = (v[k] - mu) * rs;
      d[k] = rs * (d[k] * w[k] - mean_g - xhat * mean_gx);
    }
    store<V>(dx + offset + c, d);
  }
}

constexpr int kColTile = 32;    // columns per block of the parameter-gradient kernel
constexpr int kRowSlices = 32;  // rows walked in parallel per column

// Review: column-parallel, block (32 columns × 32 row slices), grid = ceil(cols/32). Thread
// (c, s) sums rows s, s+32, ... of column c, so each warp (fixed s) reads 32 consecutive
// columns of one row: one fully used 128-byte line for fp32 (64 bytes for bf16) — coalesced
// without packs, which would only widen the per-thread stride. mean/rstd of a row are one
// broadcast address per warp. The 32 slice partials meet in shared memory ([slice][column],
// conflict-free) and the first slice adds them up in slice order before adding into dgamma
// and dbeta: a fixed summation order (bitwise reproducible) and no atomics, since one block
// owns each column.
template <typename T>
__global__ void __launch_bounds__(kColTile * kRowSlices) layernorm_param_grad_kernel(const T* dy, const T* x, const float* mean, const float* rstd,
                                            float* dgamma, float* dbeta, int rows, int cols) {
  __shared__ float part_gamma[kRowSlices][kColTile];
  __shared__ float part_beta[kRowSlices][kColTile];
  const int col = static_cast<int>(blockIdx.x) * kColTile + static_cast<int>(threadIdx.x);
  float dg = 0.0f, db = 0.0f;
  if (col < cols) {
    for (int r = static_cast<int>(threadIdx.y); r < rows; r += kRowSlices) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + col;
      const float d = to_float(dy[i]);
      dg += d * ((to_float(x[i]) - mean[r]) * rstd[r]);
      db += d;
    }
  }
  part_gamma[threadIdx.y][threadIdx.x] = dg;
  part_beta[threadIdx.y][threadIdx.x] = db;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float sum_gamma = 0.0f, sum_beta = 0.0f;
    for (int s = 0; s < kRowSlices; ++s) {
      sum_gamma += part_gamma[s][threadIdx.x];
      sum_beta += part_beta[s][threadIdx.x];
    }
    dgamma[col] += sum_gamma;
    dbeta[col] += sum_beta;
  }
}

// ============================================================================================
// GeLU
// ============================================================================================

// engine/ops/gelu.h's constants, as float.
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2/π)
constexpr float kGeluCubic = 0.044715f;

// Review: flat; thread t reads/writes pack t, so consecutive threads touch consecutive
// 16-byte packs (fully coalesced); scalar tail for n % V. tanhf is the accurate libdevice one
// (no fast-math), like the CPU's std::tanh. 256 threads, grid = ceil((n/V + n%V)/256).
template <typename T, int V>
__global__ void gelu_forward_kernel(const T* x, T* y, std::int64_t n) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load<W>(x + i, v);
    for (int k = 0; k < W; ++k) {
      const float u = kGeluScale * (v[k] + kGeluCubic * v[k] * v[k] * v[k]);
      v[k] = 0.5f * v[k] * (1.0f + tanhf(u));
    }
    store<W>(y + i, v);
  });
}

// Review: flat, as the forward; reads dy and x packs at the same index, recomputes tanh from x
// (as the CPU does, instead of saving it).
template <typename T, int V>
__global__ void gelu_backward_kernel(const T* dy, const T* x, T* dx, std::int64_t n) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float g[W], v[W];
    load<W>(dy + i, g);
    load<W>(x + i, v);
    for (int k = 0; k < W; ++k) {
      const float u = kGeluScale * (v[k] + kGeluCubic * v[k] * v[k] * v[k]);
      const float t = tanhf(u);
      const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * v[k] * v[k]);
      g[k] *= 0.5f * (1.0f + t) + 0.5f * v[k] * (1.0f - t * t) * du;
    }
    store<W>(dx + i, g);
  });
}

// ============================================================================================
// Causal softmax
// ============================================================================================

// Review: warp per row of the [blocks·seq × seq] scores (8 rows per block). Row r is query
// position i = r % seq and sees keys 0..i. Sweep 1 (max) and sweep 2 (Σ exp(s - max)) read
// only the packs that hold visible keys (the pack straddling i is read whole and its masked
// entries ignored; it never runs past the row since seq % V == 0 on the vector path), so
// a causal row costs ~(i+1)/seq of a full one. Sweep 3 writes the whole row: exp(s - max)/sum
// (a division, as the CPU) for visible keys, 0 above the diagonal, recomputing each exp from
// the same inputs (bitwise the value summed). Shuffle butterflies for max and sum.
template <typename T, int V>
__global__ void causal_softmax_forward_kernel(const T* scores, T* probs, std::int64_t rows, int seq) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  if (row >= rows) return;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int visible = static_cast<int>(row % seq) + 1;
  const T* in = scores + static_cast<std::size_t>(row) * seq;
  T* out = probs + static_cast<std::size_t>(row) * seq;

  float row_max = -INFINITY;
  for (int c = lane * V; c < visible; c += kWarp * V) {
    float s[V];
    load<V>(in + c, s);
    for (int k = 0; k < V; ++k)
      if (c + k < visible) row_max = fmaxf(row_max, s[k]);
  }
  row_max = warp_reduce(row_max, Max{});

  float sum = 0.0f;
  for (int c = lane * V; c < visible; c += kWarp * V) {
    float s[V];
    load<V>(in + c, s);
    for (int k = 0; k < V; ++k)
      if (c + k < visible) sum += expf(s[k] - row_max);
  }
  sum = warp_reduce(sum, Sum{});

  for (int c = lane * V; c < seq; c += kWarp * V) {
    float p[V];
    if (c < visible) {
      load<V>(in + c, p);
      for (int k = 0; k < V; ++k) p[k] = c + k < visible ? expf(p[k] - row_max) / sum : 0.0f;
    } else {
      for (int k = 0; k < V; ++k) p[k] = 0.0f;
    }
    store<V>(out + c, p);
  }
}

// Review: warp per row, as the forward. Sweep 1 reduces Σ P·dP over the visible keys
// (shuffle butterfly); sweep 2 writes P·(dP - Σ)·scale there and 0 above the diagonal,
// reading P and dP packs at the same index (coalesced).
template <typename T, int V>
__global__ void causal_softmax_backward_kernel(const T* probs, const T* dprobs, T* dscores, std::int64_t rows,
                                               int seq, float scale) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  if (row >= rows) return;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int visible = static_cast<int>(row % seq) + 1;
  const std::size_t offset = static_cast<std::size_t>(row) * seq;

  float dot = 0.0f;
  for (int c = lane * V; c < visible; c += kWarp * V) {
    float p[V], d[V];
    load<V>(probs + offset + c, p);
    load<V>(dprobs + offset + c, d);
    for (int k = 0; k < V; ++k)
      if (c + k < visible) dot += p[k] * d[k];
  }
  dot = warp_reduce(dot, Sum{});

  for (int c = lane * V; c < seq; c += kWarp * V) {
    float p[V], d[V];
    if (c < visible) {
      load<V>(probs + offset + c, p);
      load<V>(dprobs + offset + c, d);
      for (int k = 0; k < V; ++k) d[k] = c + k < visible ? p[k] * (d[k] - dot) * scale : 0.0f;
    } else {
      for (int k = 0; k < V; ++k) d[k] = 0.0f;
    }
    store<V>(dscores + offset + c, d);
  }
}

// ============================================================================================
// Dropout
// ============================================================================================

// Review: flat over rows·cols, one pack per thread plus the scalar tail: x, y and the byte
// mask (a V-byte pack) are all read/written contiguously across threads. Each element's
// global index is row_ids[r]·global_cols + col_offset + c — r, c found once per pack by one
// division, then stepped (a pack may cross a row end when cols % V != 0); neighbouring
// threads read the same row_ids entry (a broadcast). keep = uniform01(...) >= p is
// engine/rng.h's own function compared in double, so the mask is the CPU's bit for bit.
template <typename T, int V>
__global__ void dropout_forward_kernel(const T* x, T* y, std::uint8_t* mask, std::int64_t n, int cols, float p,
                                       float scale, std::uint64_t seed, std::uint64_t rng_stream,
                                       DeviceMaskIndex where) {
  const double threshold = static_cast<double>(p);
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    Pack<std::uint8_t, W> keep;
    load<W>(x + i, v);
    std::int64_t r = i / cols, c = i % cols;
    for (int k = 0; k < W; ++k) {
      const std::uint64_t index = where.row_ids[r] * static_cast<std::uint64_t>(where.global_cols) +
                                  static_cast<std::uint64_t>(where.col_offset + c);
      const bool kept = engine::uniform01(seed, rng_stream, index) >= threshold;
      keep.v[k] = kept ? 1 : 0;
      v[k] = kept ? v[k] * scale : 0.0f;
      if (++c == cols) {
        c = 0;
        ++r;
      }
    }
    store<W>(y + i, v);
    *reinterpret_cast<Pack<std::uint8_t, W>*>(mask + i) = keep;
  });
}

// Review: flat, one pack of dy and the matching V-byte mask pack per thread, scalar tail;
// dx = (dy·mask)·scale in the CPU's order.
template <typename T, int V>
__global__ void dropout_backward_kernel(const T* dy, const std::uint8_t* mask, T* dx, std::int64_t n, float scale) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float d[W];
    load<W>(dy + i, d);
    const Pack<std::uint8_t, W> keep = *reinterpret_cast<const Pack<std::uint8_t, W>*>(mask + i);
    for (int k = 0; k < W; ++k) d[k] = d[k] * static_cast<float>(keep.v[k]) * scale;
    store<W>(dx + i, d);
  });
}

// ============================================================================================
// Vocab-parallel cross-entropy
// ============================================================================================

// Review (all four): block per row (256 threads, grid = rows): a vocab slice is tens of
// thousands of logits, too long for one warp. Threads stride by packs along the row, so
// each block-wide step reads 256 consecutive packs (coalesced). Reductions: shuffle
// butterflies within warps, then the 8 warp partials through shared memory (block_reduce).
// Per-row scalars (max, sums, target, dloss) are one broadcast load per block.

// Local max of each row, before the MAX all-reduce.
template <typename T, int V>
__global__ void cross_entropy_local_max_kernel(const T* logits, int cols, float* row_max) {
  const T* z = logits + static_cast<std::size_t>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (int c = static_cast<int>(threadIdx.x) * V; c < cols; c += kThreads * V) {
    float v[V];
    load<V>(z + c, v);
    for (int k = 0; k < V; ++k) m = fmaxf(m, v[k]);
  }
  m = block_reduce(m, Max{}, -INFINITY);
  if (threadIdx.x == 0) row_max[blockIdx.x] = m;
}

// Σ exp(z - m) over the slice with the reduced max, and z_t - m from the owning rank; thread 0
// fetches the single target logit (the owner test uses 64-bit arithmetic, as the CPU's).
template <typename T, int V>
__global__ void cross_entropy_local_sums_kernel(const T* logits, const int* targets, int vocab_start,
                                                const float* row_max, int cols, float* sum_exp,
                                                float* target_logit) {
  const int row = static_cast<int>(blockIdx.x);
  const T* z = logits + static_cast<std::size_t>(row) * cols;
  const float m = row_max[row];
  float sum = 0.0f;
  for (int c = static_cast<int>(threadIdx.x) * V; c < cols; c += kThreads * V) {
    float v[V];
    load<V>(z + c, v);
    for (int k = 0; k < V; ++k) sum += expf(v[k] - m);
  }
  sum = block_reduce(sum, Sum{}, 0.0f);
  if (threadIdx.x == 0) {
    const std::int64_t local = static_cast<std::int64_t>(targets[row]) - vocab_start;
    sum_exp[row] = sum;
    target_logit[row] = local >= 0 && local < cols ? to_float(z[local]) - m : 0.0f;
  }
}

// softmax = exp(z - m) / Z (recomputing the exp bitwise as summed), loss = log Z - (z_t - m).
// No reduction; each element is read and written by the same thread (in place is safe).
template <typename T, int V>
__global__ void cross_entropy_loss_softmax_kernel(const T* logits, const float* row_max, const float* sum_exp,
                                                  const float* target_logit, int cols, float* losses,
                                                  T* softmax) {
  const int row = static_cast<int>(blockIdx.x);
  const std::size_t offset = static_cast<std::size_t>(row) * cols;
  const float m = row_max[row], z_sum = sum_exp[row];
  for (int c = static_cast<int>(threadIdx.x) * V; c < cols; c += kThreads * V) {
    float v[V];
    load<V>(logits + offset + c, v);
    for (int k = 0; k < V; ++k) v[k] = expf(v[k] - m) / z_sum;
    store<V>(softmax + offset + c, v);
  }
  if (threadIdx.x == 0) losses[row] = logf(z_sum) - target_logit[row];
}

// dz = softmax·dloss, minus dloss at the target. __fmul_rn keeps the product rounded on its
// own (no fused multiply-subtract), as the CPU computes it before subtracting.
template <typename T, int V>
__global__ void cross_entropy_backward_kernel(const T* softmax, const int* targets, int vocab_start,
                                              const float* dlosses, int cols, T* dlogits) {
  const int row = static_cast<int>(blockIdx.x);
  const std::size_t offset = static_cast<std::size_t>(row) * cols;
  const float dl = dlosses[row];
  const std::int64_t local = static_cast<std::int64_t>(targets[row]) - vocab_start;
  for (int c = static_cast<int>(threadIdx.x) * V; c < cols; c += kThreads * V) {
    float v[V];
    load<V>(softmax + offset + c, v);
    for (int k = 0; k < V; ++k) {
      v[k] = __fmul_rn(v[k], dl);
      if (c + k == local) v[k] -= dl;
    }
    store<V>(dlogits + offset + c, v);
  }
}

// ============================================================================================
// Vocab-parallel embedding
// ============================================================================================

// Review: block per token row (128 threads, grid = n_tokens); the token id is one broadcast
// load. Threads stride by packs along the hidden dimension, so the table row read and the
// output row written are both contiguous across threads. Tokens owned elsewhere write zeros.
template <typename T, int V>
__global__ void embedding_forward_kernel(const int* tokens, const T* table, int vocab_start, int local_vocab,
                                         int hidden, T* out) {
  const std::int64_t local = static_cast<std::int64_t>(tokens[blockIdx.x]) - vocab_start;
  const bool owned = local >= 0 && local < local_vocab;
  const T* src = table + static_cast<std::size_t>(owned ? local : 0) * hidden;
  T* dst = out + static_cast<std::size_t>(blockIdx.x) * hidden;
  for (int c = static_cast<int>(threadIdx.x) * V; c < hidden; c += kEmbeddingThreads * V) {
    float v[V];
    if (owned) {
      load<V>(src + c, v);
    } else {
      for (int k = 0; k < V; ++k) v[k] = 0.0f;
    }
    store<V>(dst + c, v);
  }
}

// Review: block per token row (128 threads, grid = n_tokens); blocks of tokens owned
// elsewhere leave at once. dout is read in packs (contiguous across threads); each value goes
// into the fp32 table with its own atomicAdd (no return value: compiled to RED), the
// addresses of a warp contiguous, so the L2 combines them. Atomics, because repeated tokens
// in the batch hit the same table row from different blocks.
template <typename T, int V>
__global__ void embedding_backward_kernel(const T* dout, const int* tokens, int vocab_start, int local_vocab,
                                          int hidden, float* dtable) {
  const std::int64_t local = static_cast<std::int64_t>(tokens[blockIdx.x]) - vocab_start;
  if (local < 0 || local >= local_vocab) return;
  const T* src = dout + static_cast<std::size_t>(blockIdx.x) * hidden;
  float* dst = dtable + static_cast<std::size_t>(local) * hidden;
  for (int c = static_cast<int>(threadIdx.x) * V; c < hidden; c += kEmbeddingThreads * V) {
    float g[V];
    load<V>(src + c, g);
    for (int k = 0; k < V; ++k) atomicAdd(dst + c + k, g[k]);
  }
}

// ============================================================================================
// AdamW
// ============================================================================================

// The per-step constants, computed on the host as engine/ops/adamw.h does.
struct AdamWScalars {
  float lr, beta1, beta2, one_minus_beta1, one_minus_beta2, eps, shrink, bias1, bias2;
};

// Review: flat; thread t owns pack t of the gradient (16 bytes of T) and the matching packs
// of param, m and v (V floats: one 16-byte access, or two for a bf16 gradient's 8), all
// contiguous across threads; scalar tail. Each element is read and written once: the step
// is purely bandwidth-bound. Divisions and sqrtf are the IEEE ones, as the CPU's.
template <typename T, int V>
__global__ void adamw_kernel(float* param, const T* grad, float* m, float* v, std::int64_t n, AdamWScalars s,
                             bool decay) {
  for_my_elements<V>(n, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float p[W], g[W], mo[W], ve[W];
    load<W>(param + i, p);
    load<W>(grad + i, g);
    load<W>(m + i, mo);
    load<W>(v + i, ve);
    for (int k = 0; k < W; ++k) {
      if (decay) p[k] *= s.shrink;
      mo[k] = s.beta1 * mo[k] + s.one_minus_beta1 * g[k];
      ve[k] = s.beta2 * ve[k] + s.one_minus_beta2 * g[k] * g[k];
      const float m_hat = mo[k] / s.bias1;
      const float v_hat = ve[k] / s.bias2;
      p[k] -= s.lr * m_hat / (sqrtf(v_hat) + s.eps);
    }
    store<W>(param + i, p);
    store<W>(m + i, mo);
    store<W>(v + i, ve);
  });
}

}  // namespace

// ============================================================================================
// Launchers
// ============================================================================================

template <typename T>
void layernorm_forward(const T* x, const float* gamma, const float* beta, T* y, float* mean, float* rstd, int rows,
                       int cols, float eps, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const bool vector = cols % kVec<T> == 0 && all_aligned(x, y, gamma, beta);
  with_width<T>(vector, [&](auto width) {
    layernorm_forward_kernel<T, decltype(width)::value>
        <<<row_blocks(rows), kThreads, 0, stream>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  });
}

template <typename T>
void layernorm_backward(const T* dy, const T* x, const float* gamma, const float* mean, const float* rstd, T* dx,
                        float* dgamma, float* dbeta, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const bool vector = cols % kVec<T> == 0 && all_aligned(dy, x, gamma, dx);
  with_width<T>(vector, [&](auto width) {
    layernorm_backward_dx_kernel<T, decltype(width)::value>
        <<<row_blocks(rows), kThreads, 0, stream>>>(dy, x, gamma, mean, rstd, dx, rows, cols);
  });
  const unsigned tiles = static_cast<unsigned>((cols + kColTile - 1) / kColTile);
  layernorm_param_grad_kernel<T>
      <<<tiles, dim3(kColTile, kRowSlices), 0, stream>>>(dy, x, mean, rstd, dgamma, dbeta, rows, cols);
  CC_CUDA_LAUNCHED();
}

template <typename T>
void gelu_forward(const T* x, T* y, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  with_width<T>(all_aligned(x, y), [&](auto width) {
    constexpr int V = decltype(width)::value;
    gelu_forward_kernel<T, V><<<flat_blocks<V>(n), kThreads, 0, stream>>>(x, y, n);
  });
}

template <typename T>
void gelu_backward(const T* dy, const T* x, T* dx, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  with_width<T>(all_aligned(dy, x, dx), [&](auto width) {
    constexpr int V = decltype(width)::value;
    gelu_backward_kernel<T, V><<<flat_blocks<V>(n), kThreads, 0, stream>>>(dy, x, dx, n);
  });
}

template <typename T>
void causal_softmax_forward(const T* scores, T* probs, int blocks, int seq, cudaStream_t stream) {
  const std::int64_t rows = static_cast<std::int64_t>(blocks) * seq;
  if (rows == 0) return;
  const bool vector = seq % kVec<T> == 0 && all_aligned(scores, probs);
  with_width<T>(vector, [&](auto width) {
    causal_softmax_forward_kernel<T, decltype(width)::value>
        <<<row_blocks(rows), kThreads, 0, stream>>>(scores, probs, rows, seq);
  });
}

template <typename T>
void causal_softmax_backward(const T* probs, const T* dprobs, T* dscores, int blocks, int seq, float scale,
                             cudaStream_t stream) {
  const std::int64_t rows = static_cast<std::int64_t>(blocks) * seq;
  if (rows == 0) return;
  const bool vector = seq % kVec<T> == 0 && all_aligned(probs, dprobs, dscores);
  with_width<T>(vector, [&](auto width) {
    causal_softmax_backward_kernel<T, decltype(width)::value>
        <<<row_blocks(rows), kThreads, 0, stream>>>(probs, dprobs, dscores, rows, seq, scale);
  });
}

template <typename T>
void dropout_forward(const T* x, T* y, std::uint8_t* mask, int rows, int cols, float p, std::uint64_t seed,
                     std::uint64_t rng_stream, const DeviceMaskIndex& where, cudaStream_t stream) {
  const std::int64_t n = static_cast<std::int64_t>(rows) * cols;
  if (n == 0) return;
  const auto bytes = static_cast<std::size_t>(n);
  if (p == 0.0f) {  // no draws: dropout disabled costs a copy and changes nothing
    if (y != x) CC_CUDA(cudaMemcpyAsync(y, x, bytes * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    CC_CUDA(cudaMemsetAsync(mask, 1, bytes, stream));
    return;
  }
  const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;  // engine::dropout_scale
  with_width<T>(all_aligned(x, y, mask), [&](auto width) {
    constexpr int V = decltype(width)::value;
    dropout_forward_kernel<T, V>
        <<<flat_blocks<V>(n), kThreads, 0, stream>>>(x, y, mask, n, cols, p, scale, seed, rng_stream, where);
  });
}

template <typename T>
void dropout_backward(const T* dy, const std::uint8_t* mask, T* dx, std::int64_t n, float p, cudaStream_t stream) {
  if (n == 0) return;
  if (p == 0.0f) {  // the mask is all ones (or was never kept): identity
    if (dx != dy)
      CC_CUDA(cudaMemcpyAsync(dx, dy, static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
  with_width<T>(all_aligned(dy, mask, dx), [&](auto width) {
    constexpr int V = decltype(width)::value;
    dropout_backward_kernel<T, V><<<flat_blocks<V>(n), kThreads, 0, stream>>>(dy, mask, dx, n, scale);
  });
}

template <typename T>
void cross_entropy_local_max(const T* logits, int rows, int cols, float* row_max, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  with_width<T>(cols % kVec<T> == 0 && all_aligned(logits), [&](auto width) {
    cross_entropy_local_max_kernel<T, decltype(width)::value><<<rows, kThreads, 0, stream>>>(logits, cols, row_max);
  });
}

template <typename T>
void cross_entropy_local_sums(const T* logits, const int* targets, int vocab_start, const float* row_max, int rows,
                              int cols, float* sum_exp, float* target_logit, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  with_width<T>(cols % kVec<T> == 0 && all_aligned(logits), [&](auto width) {
    cross_entropy_local_sums_kernel<T, decltype(width)::value>
        <<<rows, kThreads, 0, stream>>>(logits, targets, vocab_start, row_max, cols, sum_exp, target_logit);
  });
}

template <typename T>
void cross_entropy_loss_softmax(const T* logits, const float* row_max, const float* sum_exp,
                                const float* target_logit, int rows, int cols, float* losses, T* softmax,
                                cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  with_width<T>(cols % kVec<T> == 0 && all_aligned(logits, softmax), [&](auto width) {
    cross_entropy_loss_softmax_kernel<T, decltype(width)::value>
        <<<rows, kThreads, 0, stream>>>(logits, row_max, sum_exp, target_logit, cols, losses, softmax);
  });
}

template <typename T>
void cross_entropy_backward(const T* softmax, const int* targets, int vocab_start, const float* dlosses, int rows,
                            int cols, T* dlogits, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  with_width<T>(cols % kVec<T> == 0 && all_aligned(softmax, dlogits), [&](auto width) {
    cross_entropy_backward_kernel<T, decltype(width)::value>
        <<<rows, kThreads, 0, stream>>>(softmax, targets, vocab_start, dlosses, cols, dlogits);
  });
}

template <typename T>
void embedding_forward(const int* tokens, int n_tokens, const T* table, int vocab_start, int local_vocab, int hidden,
                       T* out, cudaStream_t stream) {
  if (n_tokens == 0 || hidden == 0) return;
  with_width<T>(hidden % kVec<T> == 0 && all_aligned(table, out), [&](auto width) {
    embedding_forward_kernel<T, decltype(width)::value>
        <<<n_tokens, kEmbeddingThreads, 0, stream>>>(tokens, table, vocab_start, local_vocab, hidden, out);
  });
}

template <typename T>
void embedding_backward(const T* dout, const int* tokens, int n_tokens, int vocab_start, int local_vocab, int hidden,
                        float* dtable, cudaStream_t stream) {
  if (n_tokens == 0 || hidden == 0) return;
  // dtable is written by scalar atomics, so only dout's alignment matters.
  with_width<T>(hidden % kVec<T> == 0 && all_aligned(dout), [&](auto width) {
    embedding_backward_kernel<T, decltype(width)::value>
        <<<n_tokens, kEmbeddingThreads, 0, stream>>>(dout, tokens, vocab_start, local_vocab, hidden, dtable);
  });
}

template <typename T>
void adamw_update(float* param, const T* grad, float* m, float* v, std::size_t n, const engine::AdamWConfig& c,
                  long step, bool decay, cudaStream_t stream) {
  if (step < 1) throw std::invalid_argument("adamw_update: step is 1-based");
  if (n == 0) return;
  // Per-step scalars in double, then cast once — engine/ops/adamw.h line for line.
  const double t = static_cast<double>(step);
  AdamWScalars s{};
  s.bias1 = static_cast<float>(1.0 - std::pow(c.beta1, t));
  s.bias2 = static_cast<float>(1.0 - std::pow(c.beta2, t));
  s.lr = static_cast<float>(c.lr);
  s.beta1 = static_cast<float>(c.beta1);
  s.beta2 = static_cast<float>(c.beta2);
  s.one_minus_beta1 = 1.0f - s.beta1;  // the CPU's T(1) - b1, in float
  s.one_minus_beta2 = 1.0f - s.beta2;
  s.eps = static_cast<float>(c.eps);
  s.shrink = static_cast<float>(1.0 - c.lr * c.weight_decay);
  const auto count = static_cast<std::int64_t>(n);
  with_width<T>(all_aligned(param, grad, m, v), [&](auto width) {
    constexpr int V = decltype(width)::value;
    adamw_kernel<T, V><<<flat_blocks<V>(count), kThreads, 0, stream>>>(param, grad, m, v, count, s, decay);
  });
}

// Explicit instantiations: fp32 and bf16 storage. decltype(f<T>) restates the declared
// signature, so kernels.h stays the only place it is written.
#define CC_KERNELS_INSTANTIATE(T)                                        \
  template decltype(layernorm_forward<T>) layernorm_forward<T>;          \
  template decltype(layernorm_backward<T>) layernorm_backward<T>;        \
  template decltype(gelu_forward<T>) gelu_forward<T>;                    \
  template decltype(gelu_backward<T>) gelu_backward<T>;                  \
  template decltype(causal_softmax_forward<T>) causal_softmax_forward<T>;   \
  template decltype(causal_softmax_backward<T>) causal_softmax_backward<T>; \
  template decltype(dropout_forward<T>) dropout_forward<T>;              \
  template decltype(dropout_backward<T>) dropout_backward<T>;            \
  template decltype(cross_entropy_local_max<T>) cross_entropy_local_max<T>;       \
  template decltype(cross_entropy_local_sums<T>) cross_entropy_local_sums<T>;     \
  template decltype(cross_entropy_loss_softmax<T>) cross_entropy_loss_softmax<T>; \
  template decltype(cross_entropy_backward<T>) cross_entropy_backward<T>;         \
  template decltype(embedding_forward<T>) embedding_forward<T>;          \
  template decltype(embedding_backward<T>) embedding_backward<T>;        \
  template decltype(adamw_update<T>) adamw_update<T>;

CC_KERNELS_INSTANTIATE(float)
CC_KERNELS_INSTANTIATE(__nv_bfloat16)

#undef CC_KERNELS_INSTANTIATE

}  // namespace cc::cuda
