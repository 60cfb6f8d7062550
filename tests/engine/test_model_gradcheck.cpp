// The whole model (embedding, layers, final norm, tied output layer, vocab-parallel loss)
// against central finite differences in double precision, once per recompute mode: the
// hand-written backward of every op composes into the true gradient, and recomputation
// changes nothing.
#include <gtest/gtest.h>

#include <mpi.h>

#include <cmath>
#include <cstdlib>

#include "engine/model_chunk.h"
#include "ensure_mpi.h"
#include "micro_model.h"

namespace cc::engine {
namespace {

class WholeModel : public ::testing::TestWithParam<RecomputeGranularity> {
 protected:
  void SetUp() override {
    ensure_mpi();
    tp_ = Group(MPI_COMM_SELF, "tp");
    config_.recompute = GetParam();
    config_.recompute_num_layers = 3;  // full: one group of all three layers
    model_ = make_rank_model(spec_, config_, 0, 0);
    env_.tp = &tp_;
    env_.batch = 2;
    env_.seq = spec_.seq_length;
    env_.hidden = spec_.hidden_size;
    env_.heads = env_.global_heads = spec_.num_attention_heads;
    env_.head_dim = spec_.head_dim();
    env_.seed = 7;
    env_.dropout = 0.2;  // masks are a pure function of position: fixed across evaluations
    env_.sample_ids = {11, 12};
    for (int r = 0; r < env_.batch * env_.seq; ++r) {
      tokens_.push_back((r * 5 + 3) % spec_.vocab_size);
      targets_.push_back((r * 7 + 1) % spec_.vocab_size);
    }
  }

  double loss(const ModelWeights<double>& w) const {
    ModelChunk<double> chunk(model_);
    ChunkSaved<double> saved;
    Mat<double> out;
    double sum = 0;
    chunk.forward(w, env_, 0, Mat<double>(), tokens_, targets_, out, &sum, saved);
    return sum;
  }

  ModelSpec spec_ = micro_model();
  ParallelConfig config_;
  RankModel model_;
  Group tp_;
  PassEnv env_;
  std::vector<int> tokens_, targets_;
};

TEST_P(WholeModel, GradientsMatchCentralDifferences) {
  ModelWeights<double> w = allocate_weights<double>(model_);
  initialise_weights(w, model_, 3);
  // Perturb norms and biases too, so their gradients are not trivially symmetric.
  for_each_tensor(w, model_, [](const TensorInfo& info, double* data, std::int64_t rows, std::int64_t cols) {
    for (std::int64_t i = 0; i < rows * cols; ++i)
      data[i] += 0.05 * normal01(99, name_hash(info.name), static_cast<std::uint64_t>(i));
  });
  ModelWeights<double> g = allocate_weights<double>(model_);
  {
    ModelChunk<double> chunk(model_);
    ChunkSaved<double> saved;
    Mat<double> out, dx;
    double sum = 0;
    chunk.forward(w, env_, 0, Mat<double>(), tokens_, targets_, out, &sum, saved);
    chunk.backward(w, g, env_, 0, saved, Mat<double>(), 1.0, dx);
  }
  std::vector<double> analytic, numeric;
  std::vector<double> flat;
  pack(w, model_, flat);
  std::vector<double> grad;
  pack(g, model_, grad);
  // Every tensor, several elements each (all of the small ones).
  std::size_t at = 0;
  std::vector<std::size_t> probe;
  for_each_tensor(w, model_, [&](const TensorInfo&, double*, std::int64_t rows, std::int64_t cols) {
    const auto n = static_cast<std::size_t>(rows * cols);
    for (std::size_t k = 0; k < n; k += std::max<std::size_t>(1, n / 6)) probe.push_back(at + k);
    at += n;
  });
  for (std::size_t i : probe) {
    const double h = 1e-5;
    std::vector<double> plus = flat, minus = flat;
    plus[i] += h;
    minus[i] -= h;
    ModelWeights<double> wp = w, wm = w;
    unpack(plus, wp, model_);
    unpack(minus, wm, model_);
    numeric.push_back((loss(wp) - loss(wm)) / (2 * h));
    analytic.push_back(grad[i]);
  }
  double diff = 0, a = 0, n = 0;
  for (std::size_t k = 0; k < probe.size(); ++k) {
    diff += (analytic[k] - numeric[k]) * (analytic[k] - numeric[k]);
    a += analytic[k] * analytic[k];
    n += numeric[k] * numeric[k];
  }
  EXPECT_GT(probe.size(), 60u);
  EXPECT_GT(std::sqrt(a), 1e-3);
  EXPECT_LE(std::sqrt(diff) / std::max(std::sqrt(a), std::sqrt(n)), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(RecomputeModes, WholeModel,
                         ::testing::Values(RecomputeGranularity::None, RecomputeGranularity::Selective,
                                           RecomputeGranularity::Full));

}  // namespace
}  // namespace cc::engine
