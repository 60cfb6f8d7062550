// gpu_tensor.h — the GPU engine's activation tensors: row-major [rows × cols] device arrays
// from CUDA's stream-ordered allocator (cudaMallocAsync / cudaFreeAsync on the compute
// stream). Stream-ordered memory matters here for two reasons: a plain cudaFree waits for
// the whole device, which stalls the pipeline behind NCCL kernels that are waiting for a
// peer (and can deadlock two ranks that both free while their send/receive pair is pending);
// and the pool reuses freed blocks without returning them to the driver, as PyTorch's
// caching allocator does. Everything that touches a tensor on another stream is ordered
// after its allocation and before its free by events (gpu_context.h).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/cuda/cuda_check.h"

namespace cc::cuda {

template <typename T>
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::int64_t rows, std::int64_t cols, cudaStream_t stream) : rows_(rows), cols_(cols), stream_(stream) {
    if (size() > 0) CC_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&data_), bytes(), stream_));
  }
  ~Tensor() { release(); }
  Tensor(Tensor&& o) noexcept { *this = std::move(o); }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      rows_ = std::exchange(o.rows_, 0);
      cols_ = std::exchange(o.cols_, 0);
      stream_ = o.stream_;
    }
    return *this;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t size() const { return rows_ * cols_; }
  std::size_t bytes() const { return static_cast<std::size_t>(size()) * sizeof(T); }
  bool empty() const { return size() == 0; }

  // A copy on the allocation stream (the CPU engine's `Mat a = b`).
  Tensor clone() const {
    Tensor t(rows_, cols_, stream_);
    if (size() > 0) CC_CUDA(cudaMemcpyAsync(t.data_, data_, bytes(), cudaMemcpyDeviceToDevice, stream_));
    return t;
  }
  // Host values in, enqueued on the allocation stream (pageable memory: the call returns
  // once the values are staged, so `host` may go away).
  static Tensor from_host(const std::vector<T>& host, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
    Tensor t(rows, cols, stream);
    if (t.size() != static_cast<std::int64_t>(host.size())) throw CudaError("Tensor::from_host: size mismatch");
    if (t.size() > 0) CC_CUDA(cudaMemcpyAsync(t.data_, host.data(), t.bytes(), cudaMemcpyHostToDevice, stream));
    return t;
  }

 private:
  void release() noexcept {
    if (data_) cudaFreeAsync(data_, stream_);  // a destructor does not throw
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::int64_t rows_ = 0, cols_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace cc::cuda
