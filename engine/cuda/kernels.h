// kernels.h — the CUDA backend's own kernels: LayerNorm, GeLU, causal softmax, dropout,
// vocab-parallel cross-entropy, vocab-parallel embedding and AdamW. Each one mirrors an op of
// the CPU engine (engine/ops/*.h) — same formula, same order of the steps that round, same
// special cases — so a GPU run can be checked element by element against a CPU run
// (tests/gpu/test_kernels.cpp). GEMMs are cuBLAS's (gemm.h) and collectives NCCL's.
//
// Conventions, shared by every launcher:
// - Arrays are in device memory, row-major [rows × cols], rows contiguous, no padding.
// - Storage T is float or __nv_bfloat16 (explicitly instantiated for both in kernels.cu);
//   arithmetic is fp32 throughout. LayerNorm weights and their gradients, the saved
//   mean/rstd, cross-entropy row statistics and losses, the embedding gradient table and
//   all AdamW state are fp32 whatever T is: they are reductions or long-lived accumulators,
//   where bf16's 8 significant bits would lose the small terms.
// - Every launcher enqueues on `stream` and returns without synchronising the host; launch
//   errors throw CudaError (CC_CUDA_LAUNCHED). Empty inputs enqueue nothing.
// - Pointers that are 16-byte aligned (what cudaMalloc returns) with row lengths that are a
//   multiple of the 16-byte vector width take the vectorised path; anything else takes the
//   scalar one, with identical results.
// This header is included from g++-compiled code: it uses only cuda_runtime.h/cuda_bf16.h types.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/ops/adamw.h"

namespace cc::cuda {

// ---- LayerNorm (engine/ops/layernorm.h) -------------------------------------------------
// y = (x - mean)·rstd·gamma + beta per row of x [rows × cols]; saves mean and rstd [rows].
template <typename T>
void layernorm_forward(const T* x, const float* gamma, const float* beta, T* y, float* mean,
                       float* rstd, int rows, int cols, float eps, cudaStream_t stream);

// dx [rows × cols] from dy, x and the saved mean/rstd; ADDS Σ_rows dy·x̂ into dgamma and
// Σ_rows dy into dbeta (both [cols]), as the CPU op accumulates. The parameter gradients are
// summed in a fixed order, so repeated runs give identical bits.
// dx must not alias dy: the parameter-gradient pass reads dy after dx is written.
template <typename T>
void layernorm_backward(const T* dy, const T* x, const float* gamma, const float* mean,
                        const float* rstd, T* dx, float* dgamma, float* dbeta, int rows, int cols,
                        cudaStream_t stream);

// ---- GeLU, tanh approximation (engine/ops/gelu.h) ----------------------------------------
// Elementwise over n values; y may alias x, dx may alias dy.
template <typename T>
void gelu_forward(const T* x, T* y, std::int64_t n, cudaStream_t stream);
template <typename T>
void gelu_backward(const T* dy, const T* x, T* dx, std::int64_t n, cudaStream_t stream);

// ---- Causal softmax (the "softmax" / "softmax.backward" stages of engine/ops/attention.h) -
// scores and probs are [blocks·seq × seq]: one seq × seq matrix per (sample, head) block,
// row i of a block is query position i. The input scores are ALREADY SCALED by 1/sqrt(d)
// (cuBLAS applies it as the GEMM's alpha, as the CPU's "attention_scores" stage does); row i
// takes the softmax over keys 0..i after subtracting the row max and writes 0 for keys > i.
// probs may alias scores.
template <typename T>
void causal_softmax_forward(const T* scores, T* probs, int blocks, int seq, cudaStream_t stream);

// dscores = P ⊙ (dP - Σ_k P·dP) · scale per row, 0 above the diagonal: the softmax Jacobian
// with the 1/sqrt(d) of the score GEMM applied here, as the CPU's "softmax.backward" stage
// does (so the dgrad GEMMs run with alpha = 1). dscores may alias dprobs.
template <typename T>
void causal_softmax_backward(const T* probs, const T* dprobs, T* dscores, int blocks, int seq,
                             float scale, cudaStream_t stream);

// ---- Dropout (engine/ops/dropout.h) -------------------------------------------------------
// engine::MaskIndex with its row ids in device memory: element (r, c) of the local block has
// global index row_ids[r]·global_cols + col_offset + c, so masks match the CPU's bit for bit.
struct DeviceMaskIndex {
  const std::uint64_t* row_ids = nullptr;  // device array, one global row id per local row
  std::int64_t col_offset = 0;             // global column of local column 0
  std::int64_t global_cols = 0;            // width of the global matrix
};

// y = x·keep/(1-p), mask = keep (bytes, 1 = kept) over x [rows × cols], with
// keep = [uniform01(seed, rng_stream, index) >= p]. p == 0 copies x and sets the mask to ones
// without drawing (where.row_ids may then be null); p >= 1 drops everything. y may alias x.
template <typename T>
void dropout_forward(const T* x, T* y, std::uint8_t* mask, int rows, int cols, float p,
                     std::uint64_t seed, std::uint64_t rng_stream, const DeviceMaskIndex& where,
                     cudaStream_t stream);

// dx = dy·mask/(1-p) over n values; p == 0 copies dy (the mask is not read). dx may alias dy.
template <typename T>
void dropout_backward(const T* dy, const std::uint8_t* mask, T* dx, std::int64_t n, float p,
                      cudaStream_t stream);

// ---- Vocab-parallel cross-entropy (engine/ops/cross_entropy.h) ----------------------------
// logits [rows × cols] is this rank's slice of vocab ids [vocab_start, vocab_start + cols);
// targets [rows] are global vocab ids (int32, all valid). The caller all-reduces across the
// tensor-parallel group between the steps, exactly where the CPU op calls its callbacks:
//   1. cross_entropy_local_max      -> row_max         ; all-reduce MAX
//   2. cross_entropy_local_sums     -> sum_exp, target_logit ; all-reduce SUM (both; put them
//      side by side in one buffer to reduce them with one call)
//   3. cross_entropy_loss_softmax   -> losses [rows], softmax [rows × cols] (may alias logits)
template <typename T>
void cross_entropy_local_max(const T* logits, int rows, int cols, float* row_max,
                             cudaStream_t stream);
// sum_exp = Σ_local exp(z - m) and target_logit = z_t - m on the rank owning t, else 0, with
// m the reduced row_max.
template <typename T>
void cross_entropy_local_sums(const T* logits, const int* targets, int vocab_start,
                              const float* row_max, int rows, int cols, float* sum_exp,
                              float* target_logit, cudaStream_t stream);
// losses = log Z - (z_t - m); softmax = exp(z - m) / Z, from the reduced statistics.
template <typename T>
void cross_entropy_loss_softmax(const T* logits, const float* row_max, const float* sum_exp,
                                const float* target_logit, int rows, int cols, float* losses,
                                T* softmax, cudaStream_t stream);
// dlogits = dloss·(softmax - [v == t]); no communication. dlogits may alias softmax.
template <typename T>
void cross_entropy_backward(const T* softmax, const int* targets, int vocab_start,
                            const float* dlosses, int rows, int cols, T* dlogits,
                            cudaStream_t stream);

// ---- Vocab-parallel embedding (engine/ops/embedding.h) -----------------------------------
// table [local_vocab × hidden] holds vocab ids [vocab_start, vocab_start + local_vocab).
// out [n_tokens × hidden] gets the row of each owned token and 0 for the others.
template <typename T>
void embedding_forward(const int* tokens, int n_tokens, const T* table, int vocab_start,
                       int local_vocab, int hidden, T* out, cudaStream_t stream);
// ADDS dout's row of every owned token into the fp32 dtable (atomicAdd: repeated tokens
// sum in an unspecified order, so the last bits may differ between runs).
template <typename T>
void embedding_backward(const T* dout, const int* tokens, int n_tokens, int vocab_start,
                        int local_vocab, int hidden, float* dtable, cudaStream_t stream);

// ---- AdamW (engine/ops/adamw.h) -----------------------------------------------------------
// One step on n fp32 master parameters with their fp32 moments m, v and a gradient stored as
// T; same formula, bias correction (step is 1-based; throws std::invalid_argument otherwise)
// and decay flag as the CPU op, with the per-step constants computed on the host exactly as
// it does. Elementwise, so a ZeRO shard may be updated on its own.
template <typename T>
void adamw_update(float* param, const T* grad, float* m, float* v, std::size_t n,
                  const engine::AdamWConfig& config, long step, bool decay, cudaStream_t stream);

}  // namespace cc::cuda
