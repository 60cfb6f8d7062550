// Engine ops: analytic gradients of every input and parameter against central finite
// differences (double precision, scalar loss L = Σ out ⊙ R with random R), plus value tests
// of the properties the model relies on (normalisation, causality, split-independent
// dropout masks, log V for uniform logits, AdamW's first step).
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "engine/ops/adamw.h"
#include "engine/ops/attention.h"
#include "engine/ops/cross_entropy.h"
#include "engine/ops/dropout.h"
#include "engine/ops/embedding.h"
#include "engine/ops/gelu.h"
#include "engine/ops/layernorm.h"
#include "engine/ops/linear.h"

namespace cc::engine {
namespace {

using M = Mat<double>;
using V = Vec<double>;

M random_mat(std::mt19937_64& gen, Eigen::Index rows, Eigen::Index cols, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  M m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(gen);
  return m;
}
V random_vec(std::mt19937_64& gen, Eigen::Index n) { return random_mat(gen, n, 1).col(0); }

double dot(const M& a, const M& b) { return (a.array() * b.array()).sum(); }

// Central differences of loss() in every element of x, compared with `analytic` as
// ||analytic - numeric|| / max(||analytic||, ||numeric||) <= 1e-6.
template <typename Tensor, typename Loss>
void expect_gradient(const char* name, const Tensor& analytic, Tensor& x, Loss loss) {
  ASSERT_EQ(analytic.size(), x.size()) << name;
  Eigen::VectorXd numeric(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    double& xi = x.data()[i];
    const double orig = xi;
    const double h = std::max(1e-5, 1e-6 * std::abs(orig));
    xi = orig + h;
    const double up = loss();
    xi = orig - h;
    const double down = loss();
    xi = orig;
    numeric(i) = (up - down) / (2 * h);
  }
  const Eigen::Map<const Eigen::VectorXd> a(analytic.data(), analytic.size());
  const double scale = std::max(a.norm(), numeric.norm());
  ASSERT_GT(scale, 0.0) << name << ": gradient is identically zero";
  EXPECT_LE((a - numeric).norm() / scale, 1e-6) << name;
}

MaskIndex block_index(Eigen::Index rows, std::int64_t global_cols, std::int64_t col_offset = 0) {
  MaskIndex w;
  for (Eigen::Index r = 0; r < rows; ++r) w.row_ids.push_back(static_cast<std::uint64_t>(r));
  w.col_offset = col_offset;
  w.global_cols = global_cols;
  return w;
}

// ---------------------------------------------------------------- gradient checks

TEST(OpsGradcheck, LayerNorm) {
  std::mt19937_64 gen(1);
  M x = random_mat(gen, 6, 8, 2.0), R = random_mat(gen, 6, 8);
  V gamma = random_vec(gen, 8), beta = random_vec(gen, 8);
  auto loss = [&] {
    M y;
    LayerNormSaved<double> saved;
    layernorm_forward(x, gamma, beta, y, saved);
    return dot(y, R);
  };
  M y, dx;
  LayerNormSaved<double> saved;
  layernorm_forward(x, gamma, beta, y, saved);
  // dgamma, dbeta start non-zero: backward must add to them, not overwrite.
  const V g0 = random_vec(gen, 8), b0 = random_vec(gen, 8);
  V dgamma = g0, dbeta = b0;
  layernorm_backward(R, x, gamma, saved, dx, dgamma, dbeta);
  expect_gradient("dx", dx, x, loss);
  V dg = dgamma - g0, db = dbeta - b0;
  expect_gradient("dgamma", dg, gamma, loss);
  expect_gradient("dbeta", db, beta, loss);
}

void check_linear(bool bias) {
  std::mt19937_64 gen(bias ? 2 : 3);
  M x = random_mat(gen, 5, 4), w = random_mat(gen, 4, 3), R = random_mat(gen, 5, 3);
  V b = bias ? random_vec(gen, 3) : V();
  auto loss = [&] {
    M y;
    linear_forward(x, w, b, y);
    return dot(y, R);
  };
  M dx;
  const M w0 = random_mat(gen, 4, 3);
  const V b0 = bias ? random_vec(gen, 3) : V();
  M dw = w0;
  V db = b0;
  linear_backward(R, x, w, &dx, dw, bias ? &db : nullptr);
  expect_gradient("dx", dx, x, loss);
  M dw_step = dw - w0;
  expect_gradient("dw", dw_step, w, loss);
  if (bias) {
    V db_step = db - b0;
    expect_gradient("db", db_step, b, loss);
  }
}
TEST(OpsGradcheck, LinearWithBias) { check_linear(true); }
TEST(OpsGradcheck, LinearWithoutBias) { check_linear(false); }

TEST(OpsGradcheck, Gelu) {
  std::mt19937_64 gen(4);
  M x = random_mat(gen, 4, 6, 3.0), R = random_mat(gen, 4, 6);
  auto loss = [&] {
    M y;
    gelu_forward(x, y);
    return dot(y, R);
  };
  M dx;
  gelu_backward(R, x, dx);
  expect_gradient("dx", dx, x, loss);
}

TEST(OpsGradcheck, Dropout) {
  std::mt19937_64 gen(5);
  const double p = 0.1;
  M x = random_mat(gen, 6, 7), R = random_mat(gen, 6, 7);
  const MaskIndex where = block_index(6, 7);
  auto loss = [&] {
    M y;
    Mask mask;
    dropout_forward(x, p, 11, 3, where, y, mask);
    return dot(y, R);
  };
  M y, dx;
  Mask mask;
  dropout_forward(x, p, 11, 3, where, y, mask);
  ASSERT_LT(mask.cast<int>().sum(), 42) << "nothing dropped: the check would not test the mask";
  dropout_backward(R, p, mask, dx);
  expect_gradient("dx", dx, x, loss);
}

void check_attention(double p) {
  std::mt19937_64 gen(p == 0 ? 6 : 7);
  const AttentionShape s{2, 5, 2, 3};
  const AttentionIndex where{{0, 1}, 0, 2};
  M q = random_mat(gen, 10, 6), k = random_mat(gen, 10, 6), v = random_mat(gen, 10, 6);
  const M R = random_mat(gen, 10, 6);
  auto loss = [&] {
    M out;
    AttentionSaved<double> saved;
    attention_forward(q, k, v, s, p, 42, 9, where, out, saved);
    return dot(out, R);
  };
  M out, dq, dk, dv;
  AttentionSaved<double> saved;
  attention_forward(q, k, v, s, p, 42, 9, where, out, saved);
  // 4 (b, h) blocks of 5×5: probabilities (8 bytes), masks (1) and dropped (8) when p > 0.
  EXPECT_EQ(saved_bytes(saved), p == 0 ? 4u * 25 * 8 : 4u * 25 * 17);
  if (p > 0) {
    int dropped = 0;
    for (const Mask& m : saved.masks) dropped += 25 - m.cast<int>().sum();
    ASSERT_GT(dropped, 0) << "nothing dropped: the check would not test the mask";
  }
  attention_backward(R, q, k, v, s, p, saved, dq, dk, dv);
  expect_gradient("dq", dq, q, loss);
  expect_gradient("dk", dk, k, loss);
  expect_gradient("dv", dv, v, loss);
}
TEST(OpsGradcheck, AttentionWithoutDropout) { check_attention(0.0); }
TEST(OpsGradcheck, AttentionWithDropout) { check_attention(0.1); }

// Two tensor-parallel ranks on two threads; all_reduce combines their vectors as
// MPI_Allreduce would (same order on both ranks, so both get bitwise equal results).
class TwoRankGroup {
 public:
  void all_reduce(int rank, V& x, bool max) {
    slot_[rank] = x;
    sync_.arrive_and_wait();
    x = max ? V(slot_[0].cwiseMax(slot_[1])) : V(slot_[0] + slot_[1]);
    sync_.arrive_and_wait();  // both have read before either writes its slot again
  }

 private:
  std::barrier<> sync_{2};
  V slot_[2];
};

// Cross-entropy over two vocab slices [0, split) and [split, V); returns rank 0's losses.
V cross_entropy_tp2(const M& logits, const std::vector<int>& targets, Eigen::Index split,
                    M softmax[2]) {
  TwoRankGroup group;
  V losses[2];
  auto rank = [&](int r) {
    const M slice = r == 0 ? M(logits.leftCols(split)) : M(logits.rightCols(logits.cols() - split));
    vocab_parallel_cross_entropy_forward(
        slice, targets, r == 0 ? 0 : static_cast<int>(split),
        [&](V& x) { group.all_reduce(r, x, true); }, [&](V& x) { group.all_reduce(r, x, false); },
        losses[r], softmax[r]);
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  EXPECT_EQ(losses[0], losses[1]);
  return losses[0];
}

auto identity = [](V&) {};

TEST(OpsGradcheck, CrossEntropySingleSlice) {
  std::mt19937_64 gen(8);
  M logits = random_mat(gen, 4, 7, 3.0);
  const V R = random_vec(gen, 4);
  const std::vector<int> targets{3, 0, 6, 3};
  auto loss = [&] {
    V losses;
    M sm;
    vocab_parallel_cross_entropy_forward(logits, targets, 0, identity, identity, losses, sm);
    return losses.dot(R);
  };
  V losses;
  M sm, dlogits;
  vocab_parallel_cross_entropy_forward(logits, targets, 0, identity, identity, losses, sm);
  for (Eigen::Index r = 0; r < 4; ++r) {  // -log softmax, computed directly
    const double lse = std::log(logits.row(r).array().exp().sum());
    EXPECT_NEAR(losses(r), lse - logits(r, targets[static_cast<std::size_t>(r)]), 1e-12);
  }
  vocab_parallel_cross_entropy_backward(sm, targets, 0, R, dlogits);
  expect_gradient("dlogits", dlogits, logits, loss);
}

TEST(OpsGradcheck, CrossEntropyTwoVocabSlices) {
  std::mt19937_64 gen(9);
  M logits = random_mat(gen, 4, 7, 3.0);
  const V R = random_vec(gen, 4);
  const std::vector<int> targets{3, 0, 6, 4};  // owned by both slices
  const Eigen::Index split = 4;
  auto loss = [&] {
    M sm[2];
    return cross_entropy_tp2(logits, targets, split, sm).dot(R);
  };
  M sm[2], d0, d1;
  const V losses = cross_entropy_tp2(logits, targets, split, sm);
  V whole;
  M sm_whole;
  vocab_parallel_cross_entropy_forward(logits, targets, 0, identity, identity, whole, sm_whole);
  EXPECT_LE((losses - whole).norm(), 1e-12);
  vocab_parallel_cross_entropy_backward(sm[0], targets, 0, R, d0);
  vocab_parallel_cross_entropy_backward(sm[1], targets, static_cast<int>(split), R, d1);
  M dlogits(4, 7);
  dlogits << d0, d1;
  expect_gradient("dlogits", dlogits, logits, loss);
}

TEST(OpsGradcheck, EmbeddingTwoVocabSlices) {
  std::mt19937_64 gen(10);
  M t0 = random_mat(gen, 3, 4), t1 = random_mat(gen, 3, 4);  // vocab ids [0, 3) and [3, 6)
  const std::vector<int> tokens{0, 3, 5, 3, 1, 4, 3, 2};     // repeats must accumulate
  const M R = random_mat(gen, 8, 4);
  auto lookup = [&] {  // the TP all-reduce of the two partial outputs
    M o0, o1;
    embedding_forward(tokens, t0, 0, o0);
    embedding_forward(tokens, t1, 3, o1);
    return M(o0 + o1);
  };
  auto loss = [&] { return dot(lookup(), R); };
  M full(6, 4);
  full << t0, t1;
  const M out = lookup();
  for (std::size_t r = 0; r < tokens.size(); ++r)
    EXPECT_EQ(out.row(static_cast<Eigen::Index>(r)), full.row(tokens[r]));
  M d0 = M::Zero(3, 4), d1 = M::Zero(3, 4);
  embedding_backward(R, tokens, 0, d0);
  embedding_backward(R, tokens, 3, d1);
  expect_gradient("dtable slice 0", d0, t0, loss);
  expect_gradient("dtable slice 1", d1, t1, loss);
}

// ---------------------------------------------------------------- value tests

TEST(OpsValues, LayerNormRowsHaveZeroMeanUnitVariance) {
  std::mt19937_64 gen(11);
  const M x = (random_mat(gen, 8, 64, 5.0).array() + 3.0).matrix();
  const V gamma = V::Ones(64), beta = V::Zero(64);
  M y;
  LayerNormSaved<double> saved;
  layernorm_forward(x, gamma, beta, y, saved);
  for (Eigen::Index r = 0; r < y.rows(); ++r) {
    EXPECT_NEAR(y.row(r).mean(), 0.0, 1e-12);
    EXPECT_NEAR(y.row(r).array().square().mean(), 1.0, 1e-5);  // eps shrinks it by ~1e-6
    EXPECT_NEAR(saved.mean(r), x.row(r).mean(), 1e-12);
  }
}

TEST(OpsValues, AttentionOverOneTokenReturnsV) {
  std::mt19937_64 gen(12);
  const AttentionShape s{3, 1, 2, 4};
  const M q = random_mat(gen, 3, 8), k = random_mat(gen, 3, 8), v = random_mat(gen, 3, 8);
  M out;
  AttentionSaved<double> saved;
  attention_forward(q, k, v, s, 0.0, 1, 1, AttentionIndex{}, out, saved);
  EXPECT_LE((out - v).norm(), 1e-14);
  EXPECT_TRUE(saved.masks.empty() && saved.dropped.empty());
}

TEST(OpsValues, AttentionIsCausal) {
  std::mt19937_64 gen(13);
  const AttentionShape s{2, 6, 2, 3};
  const AttentionIndex where{{4, 7}, 0, 2};
  const M q = random_mat(gen, 12, 6), k = random_mat(gen, 12, 6), v = random_mat(gen, 12, 6);
  for (double p : {0.0, 0.2}) {
    M before, after;
    AttentionSaved<double> saved;
    attention_forward(q, k, v, s, p, 5, 2, where, before, saved);
    M k2 = k, v2 = v;
    const Eigen::Index pos = 3;
    k2.middleRows(pos * 2, 2).array() += 10.0;  // key and value of position 3, both samples
    v2.middleRows(pos * 2, 2).array() -= 10.0;
    attention_forward(q, k2, v2, s, p, 5, 2, where, after, saved);
    EXPECT_EQ(before.topRows(pos * 2), after.topRows(pos * 2)) << "p = " << p;
    EXPECT_GT((before.bottomRows(12 - pos * 2) - after.bottomRows(12 - pos * 2)).norm(), 1e-3);
  }
}

TEST(OpsValues, AttentionDropoutIndependentOfHeadSplit) {
  std::mt19937_64 gen(14);
  const AttentionShape whole{2, 4, 2, 3}, half{2, 4, 1, 3};
  const M q = random_mat(gen, 8, 6), k = random_mat(gen, 8, 6), v = random_mat(gen, 8, 6);
  M out;
  AttentionSaved<double> saved;
  attention_forward(q, k, v, whole, 0.3, 8, 1, AttentionIndex{{0, 1}, 0, 2}, out, saved);
  for (int rank = 0; rank < 2; ++rank) {  // TP = 2: one head per rank
    const auto cols = [&](const M& m) { return M(m.middleCols(rank * 3, 3)); };
    M part;
    AttentionSaved<double> sp;
    attention_forward(cols(q), cols(k), cols(v), half, 0.3, 8, 1, AttentionIndex{{0, 1}, rank, 2},
                      part, sp);
    EXPECT_EQ(part, cols(out)) << "rank " << rank;
    for (int b = 0; b < 2; ++b)
      EXPECT_EQ(sp.masks[static_cast<std::size_t>(b)],
                saved.masks[static_cast<std::size_t>(b * 2 + rank)]);
  }
}

TEST(OpsValues, DropoutKeepsAboutOneMinusP) {
  std::mt19937_64 gen(15);
  const M x = random_mat(gen, 250, 400);  // 100k elements
  M y;
  Mask mask;
  dropout_forward(x, 0.1, 123, 4, block_index(250, 400), y, mask);
  const double kept = mask.cast<double>().sum() / 1e5;
  EXPECT_NEAR(kept, 0.9, 0.005);  // 5 standard deviations of a binomial fraction
  for (Eigen::Index i = 0; i < x.size(); ++i)
    ASSERT_DOUBLE_EQ(y.data()[i], mask.data()[i] ? x.data()[i] / 0.9 : 0.0);
  dropout_forward(x, 0.0, 123, 4, MaskIndex{}, y, mask);  // p = 0: identity, all kept
  EXPECT_EQ(y, x);
  EXPECT_EQ(mask.cast<int>().sum(), 100000);
}

TEST(OpsValues, DropoutMaskIndependentOfColumnSplit) {
  std::mt19937_64 gen(16);
  const M x = random_mat(gen, 16, 20);
  M y, yl, yr;
  Mask full, left, right, other;
  dropout_forward(x, 0.5, 77, 2, block_index(16, 20), y, full);
  dropout_forward(M(x.leftCols(10)), 0.5, 77, 2, block_index(16, 20, 0), yl, left);
  dropout_forward(M(x.rightCols(10)), 0.5, 77, 2, block_index(16, 20, 10), yr, right);
  EXPECT_EQ(left, full.leftCols(10));
  EXPECT_EQ(right, full.rightCols(10));
  EXPECT_EQ(yr, y.rightCols(10));
  MaskIndex odd_rows;  // a row split too: rows 1, 3, 5 of the global matrix
  odd_rows.row_ids = {1, 3, 5};
  odd_rows.global_cols = 20;
  dropout_forward(M(x(Eigen::seq(1, 5, 2), Eigen::all)), 0.5, 77, 2, odd_rows, yl, left);
  EXPECT_EQ(left, full(Eigen::seq(1, 5, 2), Eigen::all));
  dropout_forward(x, 0.5, 77, 3, block_index(16, 20), y, other);  // another stream differs
  EXPECT_NE(other, full);
}

TEST(OpsValues, CrossEntropyOfUniformLogitsIsLogV) {
  const M logits = M::Constant(3, 50, 2.5);
  const std::vector<int> targets{0, 17, 49};
  V losses;
  M sm[2];
  vocab_parallel_cross_entropy_forward(logits, targets, 0, identity, identity, losses, sm[0]);
  for (Eigen::Index r = 0; r < 3; ++r) EXPECT_NEAR(losses(r), std::log(50.0), 1e-12);
  losses = cross_entropy_tp2(logits, targets, 20, sm);
  for (Eigen::Index r = 0; r < 3; ++r) EXPECT_NEAR(losses(r), std::log(50.0), 1e-12);
  EXPECT_NEAR(sm[1](0, 0), 1.0 / 50, 1e-15);
}

TEST(OpsValues, AdamWFirstStepMovesByLrAgainstGradient) {
  std::mt19937_64 gen(17);
  const std::size_t n = 64;
  const V p0 = random_vec(gen, 64);
  V g = random_vec(gen, 64);
  for (double& gi : g) gi += gi > 0 ? 1e-3 : -1e-3;  // keep |g| >> eps
  const AdamWConfig c{.lr = 1e-2};
  for (bool decay : {false, true}) {
    V p = p0, m = V::Zero(64), v = V::Zero(64);
    adamw_update(p.data(), g.data(), m.data(), v.data(), n, c, 1, decay);
    for (Eigen::Index i = 0; i < 64; ++i) {
      // m̂ = g and v̂ = g² after bias correction, so the Adam step is lr · sign(g).
      const double decayed = decay ? p0(i) * (1 - c.lr * c.weight_decay) : p0(i);
      EXPECT_NEAR(p(i) - decayed, -c.lr * (g(i) > 0 ? 1 : -1), 1e-7) << i;
      EXPECT_NEAR(m(i), 0.1 * g(i), 1e-15);
      EXPECT_NEAR(v(i), 0.05 * g(i) * g(i), 1e-15);
    }
  }
}

}  // namespace
}  // namespace cc::engine
