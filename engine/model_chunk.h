// model_chunk.h — one model chunk (a pipeline virtual stage) for one microbatch: the
// embedding when it is the first virtual stage, its transformer layers, and the final
// norm, tied output layer and vocab-parallel loss when it is the last. Forward keeps what
// the recompute mode allows; backward recomputes the rest:
//   none       every layer keeps everything;
//   selective  every layer keeps everything but the attention core's S×S tensors;
//   full       uniform: groups of N layers keep only the group's input and rerun the group;
//              block: the first N layers of the chunk keep only their input, the rest all.
#pragma once

#include <functional>
#include <vector>

#include "engine/ops/cross_entropy.h"
#include "engine/ops/embedding.h"
#include "engine/transformer_layer.h"
#include "sim/parallel_config.h"

namespace cc::engine {

template <typename T>
struct ChunkSaved {
  std::vector<LayerSaved<T>> layers;
  std::vector<int> tokens, targets;  // full rows, sequence-first
  Mask embedding_mask;
  Mat<T> final_in, final_out;        // final norm input and output (region rows)
  LayerNormSaved<T> final_norm;
  Mat<T> softmax;                    // vocab slice, full rows

  std::size_t bytes() const {
    std::size_t n = static_cast<std::size_t>(embedding_mask.size()) +
                    sizeof(T) * static_cast<std::size_t>(final_in.size() + final_out.size() + softmax.size() +
                                                         final_norm.mean.size() + final_norm.rstd.size());
    for (const auto& l : layers) n += l.bytes();
    return n;
  }
  std::size_t scores_bytes() const {
    std::size_t n = 0;
    for (const auto& l : layers) n += l.scores_bytes();
    return n;
  }
  std::size_t layer_input_bytes() const {
    std::size_t n = 0;
    for (const auto& l : layers) n += static_cast<std::size_t>(l.x.size()) * sizeof(T);
    return n;
  }
};

template <typename T>
class ModelChunk {
 public:
  ModelChunk(const RankModel& model, const ParallelConfig& config) : m_(model), c_(config) {}

  // First virtual stage: `tokens` in, `x_in` ignored. Last: `targets` give the loss, whose
  // sum over rows is added to *loss_sum, and `out` is untouched.
  void forward(const ModelWeights<T>& w, const PassEnv& env, int chunk, const Mat<T>& x_in,
               const std::vector<int>& tokens, const std::vector<int>& targets, Mat<T>& out, double* loss_sum,
               ChunkSaved<T>& saved) const;
  // Last virtual stage: `dout` ignored, the loss gradient is `loss_scale` per row. First:
  // `dx` untouched (the embedding absorbs it).
  // `recomputed` runs after each full-recompute group has rerun its forward, while the
  // group's activations are all held again: the moment that group adds to the peak.
  void backward(const ModelWeights<T>& w, ModelWeights<T>& g, const PassEnv& env, int chunk, ChunkSaved<T>& saved,
                const Mat<T>& dout, double loss_scale, Mat<T>& dx,
                const std::function<void()>& recomputed = {}) const;

  bool first_virtual_stage(int chunk) const { return chunk == 0 && m_.stage == 0; }
  bool last_virtual_stage(int chunk) const { return chunk == m_.virtual_stages - 1 && m_.stage == m_.pp - 1; }

 private:
  // Whether layer i of a chunk keeps everything (else only, maybe, its input).
  bool keeps_all(int i) const {
    if (c_.recompute != RecomputeGranularity::Full) return true;
    return c_.recompute_method == RecomputeMethod::Block && i >= c_.recompute_num_layers;
  }
  // Recompute groups: [first, last) ranges of a chunk's layers rerun together in backward.
  int group_size(int i) const {
    if (keeps_all(i)) return 1;
    return c_.recompute_method == RecomputeMethod::Uniform ? c_.recompute_num_layers : 1;
  }

  const RankModel& m_;
  const ParallelConfig& c_;
};

}  // namespace cc::engine

#include "engine/model_chunk_impl.h"
