// cuBLAS GEMMs in the engine's row-major convention against Eigen on the CPU: every
// transpose combination, fp32 and bf16 storage (fp32 accumulation), accumulate with beta,
// and the strided batch the attention heads use. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <cuda_bf16.h>

#include <Eigen/Dense>
#include <random>
#include <vector>

#include "engine/cuda/cuda_check.h"
#include "engine/cuda/device_buffer.h"
#include "engine/cuda/gemm.h"

namespace cc::cuda {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class Gemm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
    handle_ = std::make_unique<CublasHandle>();
  }
  std::unique_ptr<CublasHandle> handle_;
};

RowMat random_matrix(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  RowMat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(gen);
  return m;
}

template <typename T>
std::vector<T> to_storage(const RowMat& m) {
  std::vector<T> v(static_cast<std::size_t>(m.size()));
  for (Eigen::Index i = 0; i < m.size(); ++i) v[static_cast<std::size_t>(i)] = static_cast<T>(m.data()[i]);
  return v;
}

template <typename T>
RowMat from_storage(const std::vector<T>& v, Eigen::Index rows, Eigen::Index cols) {
  RowMat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(v[static_cast<std::size_t>(i)]);
  return m;
}

// Runs C = op(A)·op(B) + beta·C0 on the GPU with storage T; returns C as float.
template <typename T>
RowMat run_gemm(cublasHandle_t handle, const GemmShape& s, const RowMat& a, const RowMat& b, const RowMat& c0,
                float beta) {
  DeviceBuffer<T> da(static_cast<std::size_t>(a.size())), db(static_cast<std::size_t>(b.size())),
      dc(static_cast<std::size_t>(c0.size()));
  da.upload(to_storage<T>(a));
  db.upload(to_storage<T>(b));
  dc.upload(to_storage<T>(c0));
  gemm<T>(handle, s, da.data(), db.data(), dc.data(), 1.0f, beta);
  return from_storage(dc.download(), c0.rows(), c0.cols());
}

TEST_F(Gemm, EveryTransposeMatchesEigen) {
  const Eigen::Index m = 67, n = 129, k = 48;  // not multiples of the tile sizes
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const RowMat a = random_matrix(ta ? k : m, ta ? m : k, 1), b = random_matrix(tb ? n : k, tb ? k : n, 2);
      const RowMat c0 = random_matrix(m, n, 3);
      const RowMat opa = ta ? RowMat(a.transpose()) : a, opb = tb ? RowMat(b.transpose()) : b;
      const RowMat expected = opa * opb + c0;
      const GemmShape s{m, n, k, ta, tb};
      const RowMat fp32 = run_gemm<float>(handle_->get(), s, a, b, c0, 1.0f);
      EXPECT_LT((fp32 - expected).cwiseAbs().maxCoeff(), 1e-4f) << "ta " << ta << " tb " << tb;
      // bf16 inputs carry 8 bits of mantissa: each product is off by ~2^-8 relative, and k
      // of them add up, so the bound scales with sqrt(k) for random signs.
      const RowMat bf16 = run_gemm<__nv_bfloat16>(handle_->get(), s, a, b, c0, 1.0f);
      EXPECT_LT((bf16 - expected).cwiseAbs().maxCoeff(), 0.1f) << "ta " << ta << " tb " << tb;
    }
}

TEST_F(Gemm, StridedBatchMatchesPerBatchProducts) {
  const Eigen::Index m = 32, n = 16, k = 24, batch = 5;
  const RowMat a = random_matrix(batch * m, k, 4), b = random_matrix(batch * k, n, 5);
  DeviceBuffer<float> da(static_cast<std::size_t>(a.size())), db(static_cast<std::size_t>(b.size())),
      dc(static_cast<std::size_t>(batch * m * n));
  da.upload(to_storage<float>(a));
  db.upload(to_storage<float>(b));
  gemm_strided_batched<float>(handle_->get(), {m, n, k}, da.data(), m * k, db.data(), k * n, dc.data(), m * n, batch);
  const RowMat c = from_storage(dc.download(), batch * m, n);
  for (Eigen::Index i = 0; i < batch; ++i) {
    const RowMat expected = a.middleRows(i * m, m) * b.middleRows(i * k, k);
    EXPECT_LT((c.middleRows(i * m, m) - expected).cwiseAbs().maxCoeff(), 1e-4f) << "batch " << i;
  }
}

}  // namespace
}  // namespace cc::cuda
