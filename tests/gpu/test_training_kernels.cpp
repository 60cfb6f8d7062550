// The training loop's glue kernels (engine/cuda/training_kernels.h) against plain CPU
// loops written the way the CPU engine computes the same thing (model_chunk_impl.h for the
// position embeddings, transformer_layer.h for the bias gradients, optimizer_impl.h for the
// gradient norm and clipping). Tolerances as in test_kernels.cpp; sums are judged against
// the sum of magnitudes they add. Skips, saying why, on a machine without a GPU.
#include <gtest/gtest.h>

#include <cuda_bf16.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/cuda/training_kernels.h"
#include "kernel_test_support.h"

namespace cc::cuda {
namespace {

using namespace kernel_test;

template <typename T>
class GpuTrainingKernels : public GpuKernels<T> {};
TYPED_TEST_SUITE(GpuTrainingKernels, StorageTypes, StorageNames);

TYPED_TEST(GpuTrainingKernels, CastAddBiasAndResidual) {
  using T = TypeParam;
  for (const int cols : {256, 257})
    for (const std::size_t offset : {0, 1}) {
      SCOPED_TRACE("cols = " + std::to_string(cols) + ", offset = " + std::to_string(offset));
      const int rows = 3;
      // Unrounded fp32 master values: the cast must round them exactly as static_cast<T>.
      Mat<float> master(rows, cols);
      for (Eigen::Index i = 0; i < master.size(); ++i)
        master.data()[i] = static_cast<float>(engine::uniform01(kSeed, 11, static_cast<std::uint64_t>(i))) - 0.5f;
      const Mat<float> y = random_mat<T>(rows, cols, 12, -2.0f, 2.0f), r = random_mat<T>(rows, cols, 13, -2.0f, 2.0f);
      const Vec<float> bias = random_vec<float>(cols, 14, -1.0f, 1.0f);
      Mat<float> cast(rows, cols), biased = y, summed(rows, cols);
      for (Eigen::Index i = 0; i < master.size(); ++i) cast.data()[i] = round_to<T>(master.data()[i]);
      biased.rowwise() += bias.transpose();
      for (Eigen::Index i = 0; i < biased.size(); ++i) summed.data()[i] = biased.data()[i] + r.data()[i];

      auto d_master = to_device<float>(master, offset), d_bias = to_device<float>(bias);
      auto d_y = to_device<T>(y, offset), d_r = to_device<T>(r, offset);
      DeviceBuffer<T> d_cast(d_y.size()), d_sum(d_y.size());
      const auto n = static_cast<std::int64_t>(y.size());
      this->run([&](cudaStream_t s) {
        cast_from_f32(d_master.data() + offset, d_cast.data() + offset, n, s);
        add_bias(d_y.data() + offset, d_bias.data(), rows, cols, s);
        add(d_y.data() + offset, d_r.data() + offset, d_sum.data() + offset, n, s);
      });
      EXPECT_EQ(to_host(d_cast, offset), values(cast));  // one correctly rounded conversion: exact
      expect_close("bias", to_host(d_y, offset), values(biased), this->kRel);
      // The residual adds the GPU's (already rounded) biased values: compare with those.
      std::vector<float> expected = to_host(d_y, offset), residual = values(r);
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = round_to<T>(expected[i] + residual[i]);
      expect_close("residual", to_host(d_sum, offset), expected, this->kRel);
    }
}

TYPED_TEST(GpuTrainingKernels, BiasGradientAddsColumnSums) {
  using T = TypeParam;
  for (const int cols : {256, 257}) {
    SCOPED_TRACE("cols = " + std::to_string(cols));
    const int rows = 37;
    const Mat<float> dy = random_mat<T>(rows, cols, 21, -1.0f, 1.0f);
    const Vec<float> before = random_vec<float>(cols, 22, -1.0f, 1.0f);
    Vec<float> expected = before, bound = before.cwiseAbs();
    for (int c = 0; c < cols; ++c)
      for (int r = 0; r < rows; ++r) {
        expected(c) += dy(r, c);
        bound(c) += std::fabs(dy(r, c));
      }
    auto d_dy = to_device<T>(dy);
    auto d_sums = to_device<float>(before);
    this->run([&](cudaStream_t s) { column_sums_add(d_dy.data(), rows, cols, d_sums.data(), s); });
    expect_within_bound("db", Eigen::Map<const Mat<float>>(to_host(d_sums).data(), cols, 1), expected, bound, kFp32);
  }
}

// Sequence-first rows (row = position · batch + sample); an SP shard starts mid-position.
TYPED_TEST(GpuTrainingKernels, PositionEmbeddingsForwardAndBackward) {
  using T = TypeParam;
  const int batch = 3, seq = 8, cols = 256;
  for (const int row_offset : {0, 7}) {
    SCOPED_TRACE("row_offset = " + std::to_string(row_offset));
    const int rows = batch * seq - row_offset - 2;
    const Mat<float> x = random_mat<T>(rows, cols, 31, -1.0f, 1.0f), table = random_mat<T>(seq, cols, 32, -1.0f, 1.0f);
    const Mat<float> dx = random_mat<T>(rows, cols, 33, -1.0f, 1.0f);
    const Mat<float> dtable_before = random_mat<float>(seq, cols, 34, -1.0f, 1.0f);
    Mat<float> y = x, dtable = dtable_before;
    for (int r = 0; r < rows; ++r) {  // model_chunk_impl.h, forward and backward
      y.row(r) += table.row((row_offset + r) / batch);
      dtable.row((row_offset + r) / batch) += dx.row(r);
    }
    auto d_x = to_device<T>(x), d_table = to_device<T>(table), d_dx = to_device<T>(dx);
    auto d_dtable = to_device<float>(dtable_before);
    this->run([&](cudaStream_t s) {
      add_positions(d_x.data(), d_table.data(), rows, cols, batch, row_offset, s);
      positions_backward(d_dx.data(), rows, cols, batch, row_offset, d_dtable.data(), s);
    });
    expect_close("x + positions", to_host(d_x), values(y), this->kRel);
    // Same additions in the same order as the CPU loop: equal to fp32 rounding.
    expect_close("dtable", to_host(d_dtable), values(dtable), kFp32);
  }
}

TEST(GpuTrainingKernelsFp32, SumsFillAndScale) {
  if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::int64_t n = 100003;  // more than one pass of the fixed grid, not a multiple of it
  const Mat<float> x = random_mat<float>(n, 1, 41, -1.0f, 1.0f);
  double squares = 1.5, sum = -2.0;  // the kernels add into what is there
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    squares += static_cast<double>(x.data()[i]) * x.data()[i];
    sum += x.data()[i];
  }
  auto d_x = to_device<float>(x);
  DeviceBuffer<double> totals(2), scratch(kSumSquaresBlocks);
  totals.upload({1.5, -2.0});
  DeviceBuffer<float> filled(1001);
  Stream stream;
  CC_CUDA(cudaDeviceSynchronize());
  sum_squares_add(d_x.data(), n, totals.data(), scratch.data(), stream.get());
  sum_add(d_x.data(), n, totals.data() + 1, scratch.data(), stream.get());
  fill(filled.data(), 1001, 0.25f, stream.get());
  scale(d_x.data(), n, -3.0f, stream.get());
  stream.synchronize();
  const std::vector<double> got = totals.download();
  EXPECT_NEAR(got[0], squares, 1e-12 * squares);  // double accumulation: only the order differs
  EXPECT_NEAR(got[1], sum, 1e-9);
  for (const float v : filled.download()) ASSERT_EQ(v, 0.25f);
  const std::vector<float> scaled = to_host(d_x);
  for (std::size_t i = 0; i < scaled.size(); ++i) ASSERT_EQ(scaled[i], x.data()[i] * -3.0f) << i;
}

}  // namespace
}  // namespace cc::cuda
