// The CUDA backend's kernels (engine/cuda/kernels.h) against the CPU engine's ops
// (engine/ops/*.h): the same deterministic inputs go to both, and every element of every
// output is compared. Each family runs with fp32 and bf16 storage, on row lengths that take
// the vector path (256) and the scalar one (257), and the elementwise families also on
// pointers one element off 16-byte alignment. Dropout masks must match bit for bit.
// Skips, saying why, on a machine without a GPU.
//
// Tolerances. Inputs are rounded to the storage type first, so the CPU (float) and the GPU
// see identical values, and each kernel is fed the CPU's own intermediate results (saved
// LayerNorm statistics, softmax probabilities): only the kernel under test differs.
// - fp32 storage: 1e-5 relative — summation order (warp trees vs Eigen's vectorised sums),
//   fused multiply-adds and 1-2 ulp differences of expf/tanhf between libdevice and glibc.
// - bf16 storage: 2^-7 relative, one bf16 ulp — the GPU rounds its fp32 result once
//   (≤ ½ ulp), and an fp32 result a few fp32 ulps from the CPU's can sit on the other side
//   of a rounding boundary, one whole ulp away. fp32 outputs of bf16 runs (LayerNorm
//   statistics and parameter gradients, losses, AdamW state) keep the fp32 tolerance.
// Both add 1e-5·rms(reference) absolute: values small only through cancellation are judged
// against the scale of the data.
#include <gtest/gtest.h>

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/cuda/cuda_check.h"
#include "engine/cuda/device_buffer.h"
#include "engine/cuda/kernels.h"
#include "kernel_test_support.h"
#include "engine/ops/adamw.h"
#include "engine/ops/attention.h"
#include "engine/ops/cross_entropy.h"
#include "engine/ops/dropout.h"
#include "engine/ops/embedding.h"
#include "engine/ops/gelu.h"
#include "engine/ops/layernorm.h"
#include "engine/rng.h"

namespace cc::cuda {
namespace {

using namespace kernel_test;

TYPED_TEST_SUITE(GpuKernels, StorageTypes, StorageNames);

TYPED_TEST(GpuKernels, LayerNorm) {
  using T = TypeParam;
  const int rows = 37;  // not a multiple of the 8 rows per block
  for (const int cols : {40, 256, 257}) {
    SCOPED_TRACE("cols = " + std::to_string(cols));
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const Mat<float> x = random_mat<T>(rows, cols, 1, -2.0f, 3.0f);
    const Vec<float> gamma = random_vec<float>(cols, 2, 0.5f, 1.5f), beta = random_vec<float>(cols, 3, -0.5f, 0.5f);
    Mat<float> y;
    engine::LayerNormSaved<float> saved;
    engine::layernorm_forward(x, gamma, beta, y, saved);

    auto d_x = to_device<T>(x);
    auto d_gamma = to_device<float>(gamma), d_beta = to_device<float>(beta);
    DeviceBuffer<T> d_y(n);
    DeviceBuffer<float> d_mean(rows), d_rstd(rows);
    this->run([&](cudaStream_t s) {
      layernorm_forward(d_x.data(), d_gamma.data(), d_beta.data(), d_y.data(), d_mean.data(), d_rstd.data(), rows,
                        cols, 1e-5f, s);
    });
    expect_close("y", to_host(d_y), values(y), this->kRel);
    expect_close("mean", to_host(d_mean), values(saved.mean), kFp32);
    expect_close("rstd", to_host(d_rstd), values(saved.rstd), kFp32);

    // Backward from the CPU's saved statistics; dgamma/dbeta start non-zero (both accumulate).
    const Mat<float> dy = random_mat<T>(rows, cols, 4, -1.0f, 1.0f);
    Vec<float> dgamma = random_vec<float>(cols, 5, -1.0f, 1.0f), dbeta = random_vec<float>(cols, 6, -1.0f, 1.0f);
    auto d_dy = to_device<T>(dy), d_saved_mean = to_device<float>(saved.mean),
         d_saved_rstd = to_device<float>(saved.rstd);
    auto d_dgamma = to_device<float>(dgamma), d_dbeta = to_device<float>(dbeta);
    DeviceBuffer<T> d_dx(n);
    Mat<float> dx;
    engine::layernorm_backward(dy, x, gamma, saved, dx, dgamma, dbeta);
    this->run([&](cudaStream_t s) {
      layernorm_backward(d_dy.data(), d_x.data(), d_gamma.data(), d_saved_mean.data(), d_saved_rstd.data(),
                         d_dx.data(), d_dgamma.data(), d_dbeta.data(), rows, cols, s);
    });
    expect_close("dx", to_host(d_dx), values(dx), this->kRel);
    expect_close("dgamma", to_host(d_dgamma), values(dgamma), kFp32);
    expect_close("dbeta", to_host(d_dbeta), values(dbeta), kFp32);
  }
}

// x in [-4, 4]: beyond, tanh is within a few ulps of ±1 and dx's (1 - tanh²) amplifies the
// 1-2 ulp difference between libdevice's tanhf and glibc's past the fp32 tolerance.
TYPED_TEST(GpuKernels, GeLU) {
  using T = TypeParam;
  for (const int cols : {256, 257})
    for (const std::size_t offset : {0, 1}) {
      SCOPED_TRACE("cols = " + std::to_string(cols) + ", offset = " + std::to_string(offset));
      const Mat<float> x = random_mat<T>(3, cols, 7, -4.0f, 4.0f), dy = random_mat<T>(3, cols, 8, -1.0f, 1.0f);
      const auto n = static_cast<std::int64_t>(x.size());
      Mat<float> y, dx;
      engine::gelu_forward(x, y);
      engine::gelu_backward(dy, x, dx);

      auto d_x = to_device<T>(x, offset), d_dy = to_device<T>(dy, offset);
      DeviceBuffer<T> d_y(d_x.size()), d_dx(d_x.size());
      this->run([&](cudaStream_t s) {
        gelu_forward(d_x.data() + offset, d_y.data() + offset, n, s);
        gelu_backward(d_dy.data() + offset, d_x.data() + offset, d_dx.data() + offset, n, s);
      });
      expect_close("y", to_host(d_y, offset), values(y), this->kRel);
      expect_close("dx", to_host(d_dx, offset), values(dx), this->kRel);
    }
}

// Multiples of 1/4 in [-3/4, 3/4]: with head_dim 4, every score q·k/2 is a multiple of 1/32
// of magnitude ≤ 9/8 and every dD = dout·v a multiple of 1/16 ≤ 9/4 — exact in float and
// bf16 alike, so the GPU's inputs are exactly the CPU engine's intermediate values.
Mat<float> quarters(Eigen::Index rows, Eigen::Index cols, std::uint64_t stream) {
  Mat<float> m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i)
    m.data()[i] = (std::floor(7.0f * static_cast<float>(engine::uniform01(kSeed, stream, static_cast<std::uint64_t>(i)))) - 3.0f) / 4.0f;
  return m;
}

// The "softmax" and "softmax.backward" stages of the CPU's attention op: forward compared
// probability by probability; backward through dQ = dS·K and dK = dSᵀ·Q (the softmax
// gradient dS itself stays inside the CPU op), within rel times the size of the terms.
TYPED_TEST(GpuKernels, CausalSoftmax) {
  using T = TypeParam;
  using namespace engine::attention_detail;
  for (const int seq : {40, 256, 257}) {
    SCOPED_TRACE("seq = " + std::to_string(seq));
    const engine::AttentionShape shape{2, seq, 2, 4};
    const int blocks = shape.batch * shape.heads;
    const float scale = 0.5f;  // 1/sqrt(head_dim)
    const Eigen::Index rows = static_cast<Eigen::Index>(shape.seq) * shape.batch, cols = shape.heads * shape.head_dim;
    const Mat<float> q = quarters(rows, cols, 10), k = quarters(rows, cols, 11), v = quarters(rows, cols, 12),
                     dout = quarters(rows, cols, 13);
    Mat<float> out;
    engine::AttentionSaved<float> saved;
    engine::attention_forward(q, k, v, shape, 0.0f, kSeed, 0, engine::AttentionIndex{}, out, saved);

    // Inputs stacked as [blocks·seq × seq]: scaled scores, and dP = dout·Vᵀ.
    const Eigen::Index S = seq;
    Mat<float> scores(blocks * S, S), dprobs(blocks * S, S), probs(blocks * S, S);
    for_each_block(shape, [&](int b, int h, std::size_t blk) {
      const auto at = static_cast<Eigen::Index>(blk) * S;
      scores.middleRows(at, S) = (head(q, shape, b, h) * head(k, shape, b, h).transpose()) * scale;
      dprobs.middleRows(at, S) = head(dout, shape, b, h) * head(v, shape, b, h).transpose();
      probs.middleRows(at, S) = saved.probs[blk];
    });
    auto d_scores = to_device<T>(scores), d_dprobs = to_device<T>(dprobs);
    DeviceBuffer<T> d_probs(d_scores.size());
    this->run([&](cudaStream_t s) { causal_softmax_forward(d_scores.data(), d_probs.data(), blocks, seq, s); });
    expect_close("probs", to_host(d_probs), values(probs), this->kRel);

    // Backward: both sides start from the same P (the CPU's, rounded to storage T).
    for (auto& p : saved.probs) p = p.unaryExpr([](float x) { return round_to<T>(x); });
    probs = probs.unaryExpr([](float x) { return round_to<T>(x); });
    Mat<float> dq, dk, dv;
    engine::attention_backward(dout, q, k, v, shape, 0.0f, saved, dq, dk, dv);
    auto d_probs_in = to_device<T>(probs);
    DeviceBuffer<T> d_dscores(d_scores.size());
    this->run([&](cudaStream_t s) {
      causal_softmax_backward(d_probs_in.data(), d_dprobs.data(), d_dscores.data(), blocks, seq, scale, s);
    });
    const std::vector<float> dscores_values = to_host(d_dscores);
    const Mat<float> dscores = Eigen::Map<const Mat<float>>(dscores_values.data(), blocks * S, S);
    Mat<float> gpu_dq(rows, cols), gpu_dk(rows, cols), bound_dq(rows, cols), bound_dk(rows, cols);
    for_each_block(shape, [&](int b, int h, std::size_t blk) {
      const auto at = static_cast<Eigen::Index>(blk) * S;
      const auto ds = dscores.middleRows(at, S);
      head(gpu_dq, shape, b, h) = ds * head(k, shape, b, h);
      head(gpu_dk, shape, b, h) = ds.transpose() * head(q, shape, b, h);
      // Size of each term of dS before the cancellation in dP - Σ P·dP.
      const Mat<float> p = probs.middleRows(at, S), dp = dprobs.middleRows(at, S);
      const Vec<float> dot = (p.array() * dp.array()).rowwise().sum().abs();
      const Mat<float> terms = (p.array() * (dp.array().abs().colwise() + dot.array())).matrix() * scale;
      head(bound_dq, shape, b, h) = terms * head(k, shape, b, h).cwiseAbs();
      head(bound_dk, shape, b, h) = terms.transpose() * head(q, shape, b, h).cwiseAbs();
    });
    expect_within_bound("dq", gpu_dq, dq, bound_dq, this->kRel);
    expect_within_bound("dk", gpu_dk, dk, bound_dk, this->kRel);
  }
}

TYPED_TEST(GpuKernels, Dropout) {
  using T = TypeParam;
  const int rows = 5;
  for (const int cols : {256, 257})
    for (const float p : {0.0f, 0.3f, 1.0f})
      for (const std::size_t offset : {0, 1}) {
        SCOPED_TRACE("cols = " + std::to_string(cols) + ", p = " + std::to_string(p) +
                     ", offset = " + std::to_string(offset));
        const Mat<float> x = random_mat<T>(rows, cols, 20, -1.0f, 1.0f), dy = random_mat<T>(rows, cols, 21, -1.0f, 1.0f);
        const auto n = static_cast<std::size_t>(x.size());
        // A block of a wider global matrix, with scattered global rows.
        engine::MaskIndex where;
        for (int r = 0; r < rows; ++r) where.row_ids.push_back(1000 + 7 * static_cast<std::uint64_t>(r));
        where.col_offset = 13;
        where.global_cols = 2 * cols + 13;
        const std::uint64_t seed = 42, rng_stream = 3;
        Mat<float> y, dx;
        engine::Mask mask;
        engine::dropout_forward(x, p, seed, rng_stream, where, y, mask);
        engine::dropout_backward(dy, p, mask, dx);

        auto d_row_ids = raw_to_device(where.row_ids);
        // p == 0 must not touch the row ids: pass none.
        const DeviceMaskIndex d_where{p == 0.0f ? nullptr : d_row_ids.data(), where.col_offset, where.global_cols};
        auto d_x = to_device<T>(x, offset), d_dy = to_device<T>(dy, offset);
        DeviceBuffer<T> d_y(d_x.size()), d_dx(d_x.size());
        DeviceBuffer<std::uint8_t> d_mask(n + offset);
        this->run([&](cudaStream_t s) {
          dropout_forward(d_x.data() + offset, d_y.data() + offset, d_mask.data() + offset, rows, cols, p, seed,
                          rng_stream, d_where, s);
          dropout_backward(d_dy.data() + offset, d_mask.data() + offset, d_dx.data() + offset,
                           static_cast<std::int64_t>(n), p, s);
        });
        const std::vector<std::uint8_t> gpu_mask = d_mask.download();
        std::size_t mask_mismatches = 0;
        for (std::size_t i = 0; i < n; ++i) mask_mismatches += gpu_mask[i + offset] != mask.data()[i];
        EXPECT_EQ(mask_mismatches, 0u) << "of " << n << " mask bytes";
        expect_close("y", to_host(d_y, offset), values(y), this->kRel);
        expect_close("dx", to_host(d_dx, offset), values(dx), this->kRel);
      }
}

// A tensor-parallel group of `tp` ranks, simulated in one process: each rank's slice is its
// own buffer, and the host does the all-reduces between the steps. The reference is the CPU
// op over the whole vocabulary (identity reductions), which the group must reproduce.
TYPED_TEST(GpuKernels, CrossEntropy) {
  using T = TypeParam;
  const int rows = 19;
  for (const int slice : {256, 257})
    for (const int tp : {1, 2}) {
      SCOPED_TRACE("slice = " + std::to_string(slice) + ", tp = " + std::to_string(tp));
      const int vocab = slice * tp;
      const Mat<float> logits = random_mat<T>(rows, vocab, 30, -4.0f, 4.0f);
      std::vector<int> targets;
      for (int r = 0; r < rows; ++r)
        targets.push_back(static_cast<int>(engine::uniform01(kSeed, 31, static_cast<std::uint64_t>(r)) * vocab));
      Vec<float> losses;
      Mat<float> softmax;
      const auto identity = [](Vec<float>&) {};
      engine::vocab_parallel_cross_entropy_forward(logits, targets, 0, identity, identity, losses, softmax);

      auto d_targets = raw_to_device(targets);
      std::vector<DeviceBuffer<T>> d_logits, d_softmax;
      std::vector<DeviceBuffer<float>> d_max, d_sum, d_target, d_loss;
      for (int r = 0; r < tp; ++r) {
        d_logits.push_back(to_device<T>(Mat<float>(logits.middleCols(r * slice, slice))));
        d_softmax.emplace_back(static_cast<std::size_t>(rows) * slice);
        d_max.emplace_back(rows);
        d_sum.emplace_back(rows);
        d_target.emplace_back(rows);
        d_loss.emplace_back(rows);
      }
      // The all-reduce of one per-row vector across the group, result on every rank.
      const auto all_reduce = [&](std::vector<DeviceBuffer<float>>& per_rank, bool max) {
        std::vector<float> total = per_rank[0].download();
        for (int r = 1; r < tp; ++r) {
          const std::vector<float> part = per_rank[static_cast<std::size_t>(r)].download();
          for (int i = 0; i < rows; ++i) {
            auto& t = total[static_cast<std::size_t>(i)];
            const float other = part[static_cast<std::size_t>(i)];
            t = max ? std::max(t, other) : t + other;
          }
        }
        for (auto& buf : per_rank) buf.upload(total);
      };
      const auto each_rank = [&](auto&& launch) {
        this->run([&](cudaStream_t s) {
          for (int r = 0; r < tp; ++r) launch(static_cast<std::size_t>(r), r * slice, s);
        });
      };
      each_rank([&](std::size_t r, int, cudaStream_t s) {
        cross_entropy_local_max(d_logits[r].data(), rows, slice, d_max[r].data(), s);
      });
      all_reduce(d_max, true);
      each_rank([&](std::size_t r, int start, cudaStream_t s) {
        cross_entropy_local_sums(d_logits[r].data(), d_targets.data(), start, d_max[r].data(), rows, slice,
                                 d_sum[r].data(), d_target[r].data(), s);
      });
      all_reduce(d_sum, false);
      all_reduce(d_target, false);
      each_rank([&](std::size_t r, int, cudaStream_t s) {
        cross_entropy_loss_softmax(d_logits[r].data(), d_max[r].data(), d_sum[r].data(), d_target[r].data(), rows,
                                   slice, d_loss[r].data(), d_softmax[r].data(), s);
      });
      for (int r = 0; r < tp; ++r) {
        const auto rank = static_cast<std::size_t>(r);
        expect_close("losses of rank " + std::to_string(r), to_host(d_loss[rank]), values(losses), kFp32);
        expect_close("softmax of rank " + std::to_string(r), to_host(d_softmax[rank]),
                     values(Mat<float>(softmax.middleCols(r * slice, slice))), this->kRel);
      }

      // Backward from the CPU's softmax, rounded to storage T, on both sides.
      const Mat<float> softmax_in = softmax.unaryExpr([](float x) { return round_to<T>(x); });
      const Vec<float> dlosses = random_vec<float>(rows, 32, -2.0f, 2.0f);
      Mat<float> dlogits;
      engine::vocab_parallel_cross_entropy_backward(softmax_in, targets, 0, dlosses, dlogits);
      auto d_dlosses = to_device<float>(dlosses);
      std::vector<DeviceBuffer<T>> d_softmax_in, d_dlogits;
      for (int r = 0; r < tp; ++r) {
        d_softmax_in.push_back(to_device<T>(Mat<float>(softmax_in.middleCols(r * slice, slice))));
        d_dlogits.emplace_back(static_cast<std::size_t>(rows) * slice);
      }
      each_rank([&](std::size_t r, int start, cudaStream_t s) {
        cross_entropy_backward(d_softmax_in[r].data(), d_targets.data(), start, d_dlosses.data(), rows, slice,
                               d_dlogits[r].data(), s);
      });
      for (int r = 0; r < tp; ++r)
        expect_close("dlogits of rank " + std::to_string(r), to_host(d_dlogits[static_cast<std::size_t>(r)]),
                     values(Mat<float>(dlogits.middleCols(r * slice, slice))), this->kRel);
    }
}

// Rank 1 of a three-way vocab split: ids 25..49 are local, the rest give zeros / no gradient.
TYPED_TEST(GpuKernels, Embedding) {
  using T = TypeParam;
  const int global_vocab = 75, local_vocab = 25, vocab_start = 25, n_tokens = 37;
  std::vector<int> tokens = {24, 25, 49, 50, 25};  // both edges of the slice, and a repeat
  for (int r = static_cast<int>(tokens.size()); r < n_tokens; ++r)
    tokens.push_back(static_cast<int>(engine::uniform01(kSeed, 40, static_cast<std::uint64_t>(r)) * global_vocab));
  auto d_tokens = raw_to_device(tokens);
  for (const int hidden : {256, 257}) {
    SCOPED_TRACE("hidden = " + std::to_string(hidden));
    const Mat<float> table = random_mat<T>(local_vocab, hidden, 41, -1.0f, 1.0f);
    Mat<float> out;
    engine::embedding_forward(tokens, table, vocab_start, out);
    auto d_table = to_device<T>(table);
    DeviceBuffer<T> d_out(static_cast<std::size_t>(n_tokens) * hidden);
    this->run([&](cudaStream_t s) {
      embedding_forward(d_tokens.data(), n_tokens, d_table.data(), vocab_start, local_vocab, hidden, d_out.data(), s);
    });
    expect_close("out", to_host(d_out), values(out), 0.0, 0.0);  // a copy: exact

    const Mat<float> dout = random_mat<T>(n_tokens, hidden, 42, -1.0f, 1.0f);
    Mat<float> dtable = random_mat<float>(local_vocab, hidden, 43, -1.0f, 1.0f);  // accumulated into
    auto d_dtable = to_device<float>(dtable), d_dout = to_device<T>(dout);
    engine::embedding_backward(dout, tokens, vocab_start, dtable);
    this->run([&](cudaStream_t s) {
      embedding_backward(d_dout.data(), d_tokens.data(), n_tokens, vocab_start, local_vocab, hidden, d_dtable.data(),
                         s);
    });
    expect_close("dtable", to_host(d_dtable), values(dtable), kFp32);
  }
}

TYPED_TEST(GpuKernels, AdamW) {
  using T = TypeParam;
  const std::size_t n = 1027;  // 1027 % 8 == 3: a scalar tail for both pack widths
  engine::AdamWConfig config;
  config.lr = 1e-2;
  for (const bool decay : {false, true})
    for (const std::size_t offset : {0, 1}) {
      SCOPED_TRACE(std::string("decay = ") + (decay ? "true" : "false") + ", offset = " + std::to_string(offset));
      std::vector<float> param = values(random_vec<float>(static_cast<Eigen::Index>(n), 50, -1.0f, 1.0f));
      std::vector<float> m(n, 0.0f), v(n, 0.0f);
      auto d_param = to_device<float>(param, offset), d_m = to_device<float>(m, offset),
           d_v = to_device<float>(v, offset);
      for (long step = 1; step <= 3; ++step) {
        const std::vector<float> grad =
            values(random_vec<T>(static_cast<Eigen::Index>(n), 50 + static_cast<std::uint64_t>(step), -1.0f, 1.0f));
        engine::adamw_update(param.data(), grad.data(), m.data(), v.data(), n, config, step, decay);
        auto d_grad = to_device<T>(grad, offset);
        this->run([&](cudaStream_t s) {
          adamw_update(d_param.data() + offset, d_grad.data() + offset, d_m.data() + offset, d_v.data() + offset, n,
                       config, step, decay, s);
        });
        expect_close("param after step " + std::to_string(step), to_host(d_param, offset), param, kFp32);
        expect_close("m after step " + std::to_string(step), to_host(d_m, offset), m, kFp32);
        expect_close("v after step " + std::to_string(step), to_host(d_v, offset), v, kFp32);
      }
    }
  EXPECT_THROW(adamw_update<T>(nullptr, nullptr, nullptr, nullptr, 0, config, 0, false, nullptr),
               std::invalid_argument);
}

// The contract's "empty inputs enqueue nothing": no launch (a zero-sized grid is a launch
// error), no pointer touched.
TYPED_TEST(GpuKernels, EmptyInputsEnqueueNothing) {
  using T = TypeParam;
  this->run([&](cudaStream_t s) {
    layernorm_forward<T>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 8, 1e-5f, s);
    layernorm_backward<T>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 8, s);
    gelu_forward<T>(nullptr, nullptr, 0, s);
    gelu_backward<T>(nullptr, nullptr, nullptr, 0, s);
    causal_softmax_forward<T>(nullptr, nullptr, 0, 16, s);
    causal_softmax_backward<T>(nullptr, nullptr, nullptr, 0, 16, 1.0f, s);
    dropout_forward<T>(nullptr, nullptr, nullptr, 0, 8, 0.5f, 1, 2, DeviceMaskIndex{}, s);
    dropout_backward<T>(nullptr, nullptr, nullptr, 0, 0.5f, s);
    cross_entropy_local_max<T>(nullptr, 0, 8, nullptr, s);
    cross_entropy_local_sums<T>(nullptr, nullptr, 0, nullptr, 0, 8, nullptr, nullptr, s);
    cross_entropy_loss_softmax<T>(nullptr, nullptr, nullptr, nullptr, 0, 8, nullptr, nullptr, s);
    cross_entropy_backward<T>(nullptr, nullptr, 0, nullptr, 0, 8, nullptr, s);
    embedding_forward<T>(nullptr, 0, nullptr, 0, 4, 8, nullptr, s);
    embedding_backward<T>(nullptr, nullptr, 0, 0, 4, 8, nullptr, s);
    adamw_update<T>(nullptr, nullptr, nullptr, nullptr, 0, engine::AdamWConfig{}, 1, true, s);
  });
}

}  // namespace
}  // namespace cc::cuda
