#include "engine/gpt_weights.h"

#include "sim/error.h"
#include "sim/layout_validation.h"

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

int RankModel::local_layers() const {
  int n = 0;
  for (const ChunkPlan& c : chunks) n += c.layers.count;
  return n;
}

int RankModel::local_index(int c, int i) const {
  int before = 0;
  for (int k = 0; k < c; ++k) before += chunk(k).layers.count;
  return before + i;
}

int RankModel::global_layer(int local) const {
  for (const ChunkPlan& c : chunks) {
    if (local < c.layers.count) return c.layers.first + local;
    local -= c.layers.count;
  }
  fail("local layer {} is past this rank's {} layers", local, local_layers());
}

RankModel make_rank_model(const ModelSpec& spec, const ParallelConfig& config, int tp_rank, int stage) {
  validate_layout(config, spec, 0);
  if (tp_rank < 0 || tp_rank >= config.tp) fail("TP rank {} is outside 0..{}", tp_rank, config.tp - 1);
  if (stage < 0 || stage >= config.pp) fail("pipeline stage {} is outside 0..{}", stage, config.pp - 1);
  RankModel m;
  m.spec = spec;
  m.tp = config.tp;
  m.tp_rank = tp_rank;
  m.pp = config.pp;
  m.stage = stage;
  for (int c = 0; c < config.virtual_stages; ++c) m.chunks.push_back(chunk_plan(spec, config, stage, c));
  return m;
}

}  // namespace cc::engine
