#include "engine/gpt_weights.h"

#include "sim/error.h"

namespace cc::engine {

std::uint64_t name_hash(const std::string& name) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a: stable across compilers and runs
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::uint64_t TensorInfo::global_index(std::int64_t i, std::int64_t j, int r, int t) const {
  std::int64_t gi = i, gj = j;
  switch (split) {
    case Split::Replicated: break;
    case Split::Columns: gj = r * (global_cols / t) + j; break;
    case Split::Rows: gi = r * (global_rows / t) + i; break;
    case Split::QkvColumns: {
      const std::int64_t width = global_cols / 3 / t;  // this rank's columns of Q (and of K, of V)
      gj = (j / width) * (global_cols / 3) + r * width + j % width;
      break;
    }
  }
  return static_cast<std::uint64_t>(gi * global_cols + gj);
}

RankModel make_rank_model(const ModelSpec& spec, int tp, int tp_rank, int pp, int stage, int virtual_stages) {
  RankModel m;
  m.spec = spec;
  m.tp = tp;
  m.tp_rank = tp_rank;
  m.pp = pp;
  m.stage = stage;
  m.virtual_stages = virtual_stages;
  if (spec.num_layers % (pp * virtual_stages) != 0)
    fail("num_layers {} is not divisible by PP {} x virtual stages {}", spec.num_layers, pp, virtual_stages);
  m.layers_per_chunk = spec.num_layers / (pp * virtual_stages);
  for (int c = 0; c < virtual_stages; ++c) m.chunk_first_layer.push_back((c * pp + stage) * m.layers_per_chunk);
  return m;
}

}  // namespace cc::engine
