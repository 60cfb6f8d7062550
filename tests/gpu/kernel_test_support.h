// kernel_test_support.h — what the kernel reference tests share: deterministic inputs
// rounded to the storage type, device upload/download (optionally off 16-byte alignment),
// element-wise comparison with the tolerances explained in test_kernels.cpp, and the typed
// fixture that skips without a GPU and runs launches on a non-blocking stream.
#pragma once

#include <gtest/gtest.h>

#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/cuda/cuda_check.h"
#include "engine/cuda/device_buffer.h"
#include "engine/rng.h"
#include "engine/tensor.h"

namespace cc::cuda::kernel_test {

using engine::Mat;
using engine::Vec;
using Bf16 = __nv_bfloat16;

constexpr double kFp32 = 1e-5;
constexpr std::uint64_t kSeed = 20240917;

template <typename T>
constexpr double kStorageTolerance = std::is_same_v<T, float> ? kFp32 : 0x1p-7;

template <typename T>
float round_to(float x) {
  return static_cast<float>(static_cast<T>(x));
}

// Uniform in [lo, hi) from the engine's counter RNG, rounded to storage T.
template <typename T>
Mat<float> random_mat(Eigen::Index rows, Eigen::Index cols, std::uint64_t stream, float lo, float hi) {
  Mat<float> m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    const auto u = static_cast<float>(engine::uniform01(kSeed, stream, static_cast<std::uint64_t>(i)));
    m.data()[i] = round_to<T>(lo + (hi - lo) * u);
  }
  return m;
}

template <typename T>
Vec<float> random_vec(Eigen::Index n, std::uint64_t stream, float lo, float hi) {
  const Mat<float> column = random_mat<T>(n, 1, stream, lo, hi);
  return Eigen::Map<const Vec<float>>(column.data(), n);
}

template <typename M>
std::vector<float> values(const M& m) {
  return std::vector<float>(m.data(), m.data() + m.size());
}

// A device copy as storage T, `offset` elements into the buffer (0 or 1: 1 takes the
// kernels off 16-byte alignment, onto their scalar paths). Pass buf.data() + offset.
template <typename T>
DeviceBuffer<T> to_device(const std::vector<float>& host, std::size_t offset = 0) {
  std::vector<T> stored(host.size() + offset, static_cast<T>(0.0f));
  for (std::size_t i = 0; i < host.size(); ++i) stored[i + offset] = static_cast<T>(host[i]);
  DeviceBuffer<T> buf(stored.size());
  buf.upload(stored);
  return buf;
}
template <typename T, typename M>
DeviceBuffer<T> to_device(const M& m, std::size_t offset = 0) {
  return to_device<T>(values(m), offset);
}
template <typename U>
DeviceBuffer<U> raw_to_device(const std::vector<U>& host) {
  DeviceBuffer<U> buf(host.size());
  buf.upload(host);
  return buf;
}

template <typename T>
std::vector<float> to_host(const DeviceBuffer<T>& buf, std::size_t offset = 0) {
  const std::vector<T> stored = buf.download();
  std::vector<float> out;
  for (std::size_t i = offset; i < stored.size(); ++i) out.push_back(static_cast<float>(stored[i]));
  return out;
}

// Every element: |gpu - cpu| <= rel·|cpu| + abs_rms·rms(cpu).
inline void expect_close(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& cpu, double rel,
                  double abs_rms = kFp32) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  double squares = 0.0;
  for (const float c : cpu) squares += static_cast<double>(c) * c;
  const double rms = cpu.empty() ? 0.0 : std::sqrt(squares / static_cast<double>(cpu.size()));
  std::size_t bad = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const double tolerance = rel * std::fabs(cpu[i]) + abs_rms * rms;
    if (!(std::fabs(static_cast<double>(gpu[i]) - cpu[i]) <= tolerance) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: gpu " << gpu[i] << ", cpu " << cpu[i] << ", tolerance " << tolerance;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << cpu.size() << " elements out of tolerance";
}

// Every element: |gpu - cpu| <= rel·bound, for a bound on the size of the terms a value sums.
inline void expect_within_bound(const std::string& what, const Mat<float>& gpu, const Mat<float>& cpu,
                         const Mat<float>& bound, double rel) {
  std::size_t bad = 0;
  for (Eigen::Index i = 0; i < cpu.size(); ++i) {
    const double tolerance = rel * bound.data()[i];
    if (!(std::fabs(static_cast<double>(gpu.data()[i]) - cpu.data()[i]) <= tolerance) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: gpu " << gpu.data()[i] << ", cpu " << cpu.data()[i] << ", tolerance "
                    << tolerance;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << cpu.size() << " elements out of tolerance";
}

template <typename T>
class GpuKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
    stream_.emplace();
  }

  // Uploads went through the legacy default stream, which does not order with the
  // non-blocking test stream: wait for them, enqueue, then wait for the kernels.
  template <typename Launches>
  void run(Launches&& launches) {
    CC_CUDA(cudaDeviceSynchronize());
    launches(stream_->get());
    stream_->synchronize();
  }

  static constexpr double kRel = kStorageTolerance<T>;

 private:
  std::optional<Stream> stream_;
};

struct StorageNames {
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, float> ? "Float" : "Bf16";
  }
};
using StorageTypes = ::testing::Types<float, Bf16>;

}  // namespace cc::cuda::kernel_test
