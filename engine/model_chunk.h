// model_chunk.h — one model chunk (a pipeline virtual stage) for one microbatch: the
// embedding when it is the first virtual stage, its transformer layers, and the final
// norm, tied output layer and vocab-parallel loss when it is the last. Which layers it
// holds and how they recompute come from its ChunkPlan (sim/step_plan.h). Forward keeps
// what the plan's recompute scope allows; backward recomputes the rest:
//   nothing        every layer keeps everything;
//   core attention every layer keeps everything but the attention core's S×S tensors;
//   whole layer    each recompute group keeps only its first layer's input and reruns the
//                  group; layers in no group keep everything.
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
  explicit ModelChunk(const RankModel& model) : m_(model) {}

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

  bool first_virtual_stage(int chunk) const { return m_.chunk(chunk).has_embedding; }
  bool last_virtual_stage(int chunk) const { return m_.chunk(chunk).has_output; }

 private:
  const RankModel& m_;
};

}  // namespace cc::engine

#include "engine/model_chunk_impl.h"
