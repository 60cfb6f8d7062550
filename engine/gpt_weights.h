// gpt_weights.h — the GPT parameters one rank holds, and the registry that walks them.
// A rank holds the layers of its pipeline chunks and, under tensor parallelism, its slice
// of each split tensor (Megatron-LM's scheme): QKV and FC1 split by columns (heads / FFN
// units), projection and FC2 by rows, the token embedding by vocabulary rows; norms, the
// row-parallel biases and position embeddings replicated. Every value is initialised from
// its position in the *global* tensor, so any layout starts from the same model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/rng.h"
#include "engine/tensor.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"
#include "sim/step_plan.h"

namespace cc::engine {

template <typename T>
struct LayerWeights {
  Vec<T> ln1_g, ln1_b;
  Mat<T> qkv_w;  // [h × 3h/t]: this rank's Q, K and V columns, in that order
  Vec<T> qkv_b;
  Mat<T> proj_w;  // [h/t × h]
  Vec<T> proj_b;
  Vec<T> ln2_g, ln2_b;
  Mat<T> fc1_w;  // [h × f/t]
  Vec<T> fc1_b;
  Mat<T> fc2_w;  // [f/t × h]
  Vec<T> fc2_b;
};

template <typename T>
struct ModelWeights {
  Mat<T> wte;  // [V/t × h] vocabulary slice; on the first stage, and on the last for the tied output layer
  Mat<T> wpe;  // [S × h], first stage
  Vec<T> lnf_g, lnf_b;  // last stage
  std::vector<LayerWeights<T>> layers;  // this rank's layers, chunk by chunk
};

// Which layers and end pieces a rank holds: its pipeline stage's chunks as the step plan
// lays them out (sim/step_plan.h), each with its global layers (uneven first and last
// stages included) and recompute groups. ModelWeights::layers holds them chunk after chunk.
struct RankModel {
  ModelSpec spec;
  int tp = 1, tp_rank = 0;
  int pp = 1, stage = 0;
  std::vector<ChunkPlan> chunks;  // this stage's, in chunk order

  const ChunkPlan& chunk(int c) const { return chunks[static_cast<std::size_t>(c)]; }
  bool has_embedding() const { return chunks.front().has_embedding; }
  bool has_output() const { return chunks.back().has_output; }
  int local_layers() const;
  // Position in ModelWeights::layers of chunk-local layer `i` of chunk `c`.
  int local_index(int c, int i) const;
  // Global index of ModelWeights::layers[local].
  int global_layer(int local) const;
};

// The rank at tensor-parallel rank `tp_rank` of pipeline stage `stage` under `config`.
RankModel make_rank_model(const ModelSpec& spec, const ParallelConfig& config, int tp_rank, int stage);

// How a global tensor is cut over TP ranks.
enum class Split { Replicated, Columns, Rows, QkvColumns };

struct TensorInfo {
  std::string name;  // global name, e.g. "layer3.fc1_w" — the same on every layout
  std::int64_t global_rows = 1, global_cols = 1;
  Split split = Split::Replicated;
  enum class Init { Normal, Zeros, Ones } init = Init::Zeros;
  double init_std = 0;
  bool decay = false;          // AdamW weight decay (matrices and embeddings)
  bool sp_partial = false;     // replicated tensor whose gradient is partial per rank under SP
  bool counted = true;         // counted once in norms and fingerprints (false for replicas)
  bool tied_copy = false;      // the last stage's copy of the token embedding

  // Global flat index of local element (i, j) on TP rank r of t.
  std::uint64_t global_index(std::int64_t i, std::int64_t j, int r, int t) const;
};

// Calls f(info, data, rows, cols) for every tensor of `w` in a fixed order.
template <typename T, typename F>
void for_each_tensor(ModelWeights<T>& w, const RankModel& m, F&& f);

template <typename T>
ModelWeights<T> allocate_weights(const RankModel& m);  // zeros, correctly shaped
template <typename T>
void initialise_weights(ModelWeights<T>& w, const RankModel& m, std::uint64_t seed);
template <typename T>
void set_zero(ModelWeights<T>& w, const RankModel& m);
template <typename T>
std::size_t parameter_count(ModelWeights<T>& w, const RankModel& m);

// Flat copies of every tensor in registry order (for communication and the optimizer).
template <typename T>
void pack(ModelWeights<T>& w, const RankModel& m, std::vector<T>& flat);
template <typename T>
void unpack(const std::vector<T>& flat, ModelWeights<T>& w, const RankModel& m);

std::uint64_t name_hash(const std::string& name);

}  // namespace cc::engine

#include "engine/gpt_weights_impl.h"
