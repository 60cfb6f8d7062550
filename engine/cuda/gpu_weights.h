// gpu_weights.h — one rank's parameters on its GPU, in the CPU engine's registry order
// (engine/gpt_weights.h, the order pack() flattens them in), as three flat arrays:
//   master   fp32, what AdamW updates (Megatron-LM's fp32 main parameters);
//   compute  T (bf16 or fp32), the GEMM and embedding operands, refreshed after each step;
//   grad     fp32, where every backward op accumulates over microbatches (main_grad).
// LayerNorm parameters and biases are read straight from the fp32 master (the kernels take
// them as fp32). Initial values come from the CPU engine's layout-independent
// initialisation, so a GPU run starts from exactly the CPU run's model.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/cuda/device_buffer.h"
#include "engine/gpt_weights.h"

namespace cc::cuda {

// Offsets of each tensor in the flat arrays.
struct LayerSlots {
  std::size_t ln1_g, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_g, ln2_b, fc1_w, fc1_b, fc2_w, fc2_b;
};
struct WeightSlots {
  std::size_t wte = 0, wpe = 0, lnf_g = 0, lnf_b = 0;
  std::vector<LayerSlots> layers;  // this rank's layers, chunk by chunk
  std::size_t size = 0;            // elements, without padding
};

template <typename T>
class GpuWeights {
 public:
  // `host` gives shapes and initial values; the arrays hold `padded` >= its element count
  // (the distributed optimizer pads to a multiple of DP), the tail zero.
  GpuWeights(engine::ModelWeights<float>& host, const engine::RankModel& m, std::size_t padded, cudaStream_t stream);

  const WeightSlots& slots() const { return slots_; }
  std::size_t padded() const { return padded_; }
  const T* w(std::size_t slot) const { return compute_.data() + slot; }
  const float* f32(std::size_t slot) const { return master_.data() + slot; }
  float* grad(std::size_t slot) { return grad_.data() + slot; }
  float* master() { return master_.data(); }
  float* grads() { return grad_.data(); }

  // After the master changed: the compute copy follows (a copy for fp32, a rounding for bf16).
  void refresh_compute();
  void zero_grads();
  // The master weights into `host` (waits for the device; for reports, not the hot path).
  void download(engine::ModelWeights<float>& host, const engine::RankModel& m) const;

 private:
  WeightSlots slots_;
  std::size_t padded_;
  cudaStream_t stream_;
  DeviceBuffer<float> master_, grad_;
  DeviceBuffer<T> compute_;
};

}  // namespace cc::cuda
