// library_workspaces.h — the GEMM libraries' workspaces a training process keeps allocated from
// its first GEMM to its end. They are tensors of PyTorch's caching allocator, so
// torch.cuda.memory_allocated() (Megatron-LM's mem-allocated-bytes) counts them beside the
// weights, gradients and optimizer state.
#pragma once

#include "sim/cluster_spec.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

// Bytes of GEMM workspaces one GPU holds under the config's software stack:
// - PyTorch keeps one cuBLAS workspace per (cuBLAS handle, stream) that ran a GEMM, and hands
//   each thread its own handle: the forward runs on the main thread and the backward on
//   autograd's device thread, both on the compute stream, so two. Each is
//   CUBLAS_WORKSPACE_CONFIG's size where the stack sets it, else PyTorch's default: 4096 KiB x 8
//   from compute capability 9.0 on, 4096 KiB x 2 + 16 KiB x 8 before (ATen CublasHandlePool.cpp).
// - Transformer Engine keeps one workspace for its GEMMs, 32 MiB from compute capability 9.0
//   on and 4 MiB before, and with grouped GEMMs (MoE layers under --moe-grouped-gemm) one more
//   per stream of its multi-stream GEMM, of which there are 4 (transformer_engine/pytorch/
//   module/base.py get_cublas_workspace_size_bytes, get_multi_stream_cublas_workspace).
// A GPU whose compute capability is not stated takes the later, larger sizes.
double library_workspace_bytes(const GpuSpec& gpu, const ModelSpec& model, const ParallelConfig& config);

}  // namespace cc
