#include "engine/cuda/gpu_weights.h"

#include <cuda_bf16.h>

#include <map>

#include "engine/cuda/training_kernels.h"

namespace cc::cuda {

namespace {

WeightSlots find_slots(engine::ModelWeights<float>& host, const engine::RankModel& m) {
  // Each tensor's offset is where pack() puts it; find them by the host tensors' addresses.
  std::map<const float*, std::size_t> at;
  WeightSlots s;
  engine::for_each_tensor(host, m, [&](const engine::TensorInfo&, float* data, std::int64_t rows, std::int64_t cols) {
    at[data] = s.size;
    s.size += static_cast<std::size_t>(rows * cols);
  });
  auto slot = [&](const auto& tensor) { return tensor.size() > 0 ? at.at(tensor.data()) : std::size_t{0}; };
  s.wte = slot(host.wte);
  s.wpe = slot(host.wpe);
  s.lnf_g = slot(host.lnf_g);
  s.lnf_b = slot(host.lnf_b);
  for (const auto& l : host.layers)
    s.layers.push_back({slot(l.ln1_g), slot(l.ln1_b), slot(l.qkv_w), slot(l.qkv_b), slot(l.proj_w), slot(l.proj_b),
                        slot(l.ln2_g), slot(l.ln2_b), slot(l.fc1_w), slot(l.fc1_b), slot(l.fc2_w), slot(l.fc2_b)});
  return s;
}

}  // namespace

template <typename T>
GpuWeights<T>::GpuWeights(engine::ModelWeights<float>& host, const engine::RankModel& m, std::size_t padded,
                          cudaStream_t stream)
    : slots_(find_slots(host, m)), padded_(std::max(padded, slots_.size)), stream_(stream), master_(padded_),
      grad_(padded_), compute_(padded_) {
  std::vector<float> flat;
  engine::pack(host, m, flat);
  flat.resize(padded_, 0.0f);
  master_.upload(flat);
  refresh_compute();
  zero_grads();
}

template <typename T>
void GpuWeights<T>::refresh_compute() {
  cast_from_f32(master_.data(), compute_.data(), static_cast<std::int64_t>(padded_), stream_);
}

template <typename T>
void GpuWeights<T>::zero_grads() {
  CC_CUDA(cudaMemsetAsync(grad_.data(), 0, padded_ * sizeof(float), stream_));
}

template <typename T>
void GpuWeights<T>::download(engine::ModelWeights<float>& host, const engine::RankModel& m) const {
  std::vector<float> flat = master_.download();
  flat.resize(slots_.size);
  engine::unpack(flat, host, m);
}

template class GpuWeights<float>;
template class GpuWeights<__nv_bfloat16>;

}  // namespace cc::cuda
