// device_buffer.h — small owning types for GPU resources: device memory, streams, events
// and the cuBLAS handle. Each frees what it owns exactly once (move-only), so an exception
// thrown mid-step leaks nothing.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "engine/cuda/cuda_check.h"

namespace cc::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) CC_CUDA(cudaMalloc(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);  // a destructor does not throw; a failed free is a lost cause
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }

  // Setup and checking helpers, not for the hot path: both wait for the whole device, so
  // they are ordered with work on any stream (the backend's streams are non-blocking and
  // do not wait for the legacy default stream a plain cudaMemcpy uses).
  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw CudaError("DeviceBuffer::upload: size mismatch");
    CC_CUDA(cudaDeviceSynchronize());
    CC_CUDA(cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
    CC_CUDA(cudaDeviceSynchronize());
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    CC_CUDA(cudaDeviceSynchronize());
    CC_CUDA(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

class Stream {
 public:
  Stream() { CC_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { CC_CUDA(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// Orders work across streams without the host: record on one, wait on another.
class Event {
 public:
  Event() { CC_CUDA(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t on) { CC_CUDA(cudaEventRecord(event_, on)); }
  void make_wait(cudaStream_t stream) const { CC_CUDA(cudaStreamWaitEvent(stream, event_, 0)); }
  // Whether the work before the record has finished (never waits).
  bool done() const {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    CC_CUDA(status);
    return true;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

class CublasHandle {
 public:
  CublasHandle() { CC_CUBLAS(cublasCreate(&handle_)); }
  ~CublasHandle() { cublasDestroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace cc::cuda
