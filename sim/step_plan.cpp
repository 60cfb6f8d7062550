#include "sim/step_plan.h"

#include <algorithm>

#include "sim/pipeline_layout_string.h"

namespace cc {

RecomputeScope recompute_scope(RecomputeGranularity granularity, AttentionKernel attention) {
  switch (granularity) {
    case RecomputeGranularity::Full: return RecomputeScope::WholeLayer;
    case RecomputeGranularity::Selective:
      return attention == AttentionKernel::Unfused ? RecomputeScope::CoreAttention : RecomputeScope::Nothing;
    case RecomputeGranularity::None: return RecomputeScope::Nothing;
  }
  return RecomputeScope::Nothing;
}

RecomputeScope recompute_scope(const ParallelConfig& c) { return recompute_scope(c.recompute, c.attention); }

int ChunkPlan::recomputed_layers() const {
  int n = 0;
  for (const LayerRange& g : recompute_groups) n += g.count;
  return n;
}

bool ChunkPlan::keeps_all(int i) const {
  if (recompute != RecomputeScope::WholeLayer) return true;
  return std::none_of(recompute_groups.begin(), recompute_groups.end(),
                      [&](const LayerRange& g) { return g.first <= i && i < g.end(); });
}

LayerRange ChunkPlan::backward_group(int i) const {
  if (recompute == RecomputeScope::WholeLayer)
    for (const LayerRange& g : recompute_groups)
      if (g.first <= i && i < g.end()) return g;
  return {i, 1};
}

std::vector<int> virtual_stage_layers(const ModelSpec& m, const ParallelConfig& c) {
  const int pp = c.pp, vp = c.virtual_stages;
  std::vector<int> counts(static_cast<std::size_t>(pp) * static_cast<std::size_t>(vp), 0);
  auto at = [&](int stage, int chunk) -> int& { return counts[static_cast<std::size_t>(chunk * pp + stage)]; };
  if (!c.pipeline_layout.empty()) {
    const std::vector<LayoutStage> stages = parse_pipeline_layout(c.pipeline_layout);
    for (std::size_t j = 0; j < counts.size() && j < stages.size(); ++j) counts[j] = stages[j].transformer_layers;
    return counts;
  }
  const int first = c.first_stage_layers, last = c.last_stage_layers;
  if (pp > 1 && (first > 0 || last > 0)) {
    // Megatron-Core's uneven stages: the first (last) stage holds its count, the middle stages
    // share the rest evenly; each stage's layers divide evenly over its chunks.
    const int middle_stages = pp - (first > 0) - (last > 0);
    const int middle = middle_stages > 0 ? (m.num_layers - first - last) / middle_stages : 0;
    for (int s = 0; s < pp; ++s) {
      const int held = s == 0 && first > 0 ? first : s == pp - 1 && last > 0 ? last : middle;
      for (int k = 0; k < vp; ++k) at(s, k) = held / vp;
    }
    return counts;
  }
  if (pp > 1 && load_framework(c.framework).layer_partition == LayerPartition::DeepSpeedUniform) {
    // DeepSpeed's partition_uniform: the first num_layers % PP stages take one layer more.
    const int base = m.num_layers / pp, extra = m.num_layers % pp;
    for (int s = 0; s < pp; ++s) at(s, 0) = base + (s < extra ? 1 : 0);
    return counts;
  }
  // An even split. --account-for-embedding/loss-in-pipeline-split count the embedding (loss)
  // as one more layer in the split, held by the first (last) virtual stage in place of a
  // transformer layer.
  const int per_chunk = (m.num_layers + c.account_for_embedding + c.account_for_loss) / (pp * vp);
  for (int& n : counts) n = per_chunk;
  if (c.account_for_embedding) counts.front() -= 1;
  if (c.account_for_loss) counts.back() -= 1;
  return counts;
}

LayerRange chunk_layers(const ModelSpec& m, const ParallelConfig& c, int stage, int chunk) {
  const std::vector<int> counts = virtual_stage_layers(m, c);
  const int virtual_stage = chunk * c.pp + stage;
  int first = 0;
  for (int j = 0; j < virtual_stage; ++j) first += counts[static_cast<std::size_t>(j)];
  return {first, counts[static_cast<std::size_t>(virtual_stage)]};
}

int stage_layer_count(const ModelSpec& m, const ParallelConfig& c, int stage) {
  int n = 0;
  for (int k = 0; k < c.virtual_stages; ++k) n += chunk_layers(m, c, stage, k).count;
  return n;
}

std::vector<LayerRange> recompute_groups(const ParallelConfig& c, int layers) {
  std::vector<LayerRange> groups;
  switch (recompute_scope(c)) {
    case RecomputeScope::Nothing: break;
    case RecomputeScope::CoreAttention:
      for (int i = 0; i < layers; ++i) groups.push_back({i, 1});
      break;
    case RecomputeScope::WholeLayer: {
      const int n = std::max(1, c.recompute_num_layers);
      if (c.recompute_method == RecomputeMethod::Uniform) {
        // Megatron-LM's uniform method: checkpoint n layers at a time from the chunk's start.
        for (int i = 0; i < layers; i += n) groups.push_back({i, std::min(n, layers - i)});
      } else {
        // Block method: the first n layers recompute one by one; the rest keep everything.
        for (int i = 0; i < std::min(n, layers); ++i) groups.push_back({i, 1});
      }
      break;
    }
  }
  return groups;
}

namespace {

// Where a chunk sits in the chain of virtual stages and who its neighbours are: virtual stage
// j = chunk · PP + stage runs on stage j mod PP as its chunk j / PP.
ChunkPlan place_chunk(const ParallelConfig& c, int stage, int chunk) {
  ChunkPlan p;
  p.stage = stage;
  p.chunk = chunk;
  p.virtual_stage = chunk * c.pp + stage;
  const int virtual_total = c.pp * c.virtual_stages;
  p.has_embedding = p.virtual_stage == 0;
  p.has_output = p.virtual_stage == virtual_total - 1;
  if (!p.has_embedding) {
    p.previous_stage = (p.virtual_stage - 1) % c.pp;
    p.previous_chunk = (p.virtual_stage - 1) / c.pp;
  }
  if (!p.has_output) {
    p.next_stage = (p.virtual_stage + 1) % c.pp;
    p.next_chunk = (p.virtual_stage + 1) / c.pp;
  }
  return p;
}

}  // namespace

ChunkPlan chunk_plan(const ModelSpec& m, const ParallelConfig& c, int stage, int chunk) {
  ChunkPlan p = place_chunk(c, stage, chunk);
  p.layers = chunk_layers(m, c, stage, chunk);
  p.recompute = recompute_scope(c);
  p.recompute_groups = recompute_groups(c, p.layers.count);
  for (int i = 0; i < p.layers.count; ++i) p.moe_layers += m.is_moe_layer(p.layers.first + i) ? 1 : 0;
  for (const LayerRange& g : p.recompute_groups)
    for (int i = g.first; i < g.end(); ++i) p.moe_recomputed_layers += m.is_moe_layer(p.layers.first + i) ? 1 : 0;
  return p;
}

std::vector<std::vector<PlannedPass>> planned_passes(const ParallelConfig& c) {
  const auto schedule = pipeline_schedule(c.pp, c.num_microbatches(), c.virtual_stages, c.microbatch_group_size);
  std::vector<std::vector<PlannedPass>> out(schedule.size());
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    std::vector<ChunkPlan> chunks;
    for (int k = 0; k < c.virtual_stages; ++k) chunks.push_back(place_chunk(c, static_cast<int>(s), k));
    out[s].reserve(schedule[s].size());
    for (const PipelinePass& pass : schedule[s])
      out[s].push_back(plan_pass(pass, chunks[static_cast<std::size_t>(pass.chunk)]));
  }
  return out;
}

PlannedPass plan_pass(const PipelinePass& pass, const ChunkPlan& chunk) {
  // Forward: from the previous virtual stage, to the next; backward the other way round.
  const bool forward = pass.kind == PassKind::Forward;
  return {pass.kind,
          pass.microbatch,
          pass.chunk,
          chunk.virtual_stage,
          forward ? chunk.previous_stage : chunk.next_stage,
          forward ? chunk.next_stage : chunk.previous_stage,
          forward ? chunk.previous_chunk : chunk.next_chunk,
          forward ? chunk.next_chunk : chunk.previous_chunk};
}

OpProgram recompute_program(const LayerShape& shape, RecomputeScope scope) {
  switch (scope) {
    case RecomputeScope::WholeLayer: return layer_forward(shape, Phase::Recompute);
    case RecomputeScope::CoreAttention: return attention_core_forward(shape, Phase::Recompute);
    case RecomputeScope::Nothing: break;
  }
  return {};
}

LayerOps layer_ops(const LayerShape& shape, RecomputeScope scope) {
  LayerOps ops;
  ops.forward = layer_forward(shape, Phase::Forward);
  ops.backward = layer_backward(shape);
  ops.recompute = recompute_program(shape, scope);
  ops.embedding_forward = embedding_forward(shape);
  ops.embedding_backward = embedding_backward(shape);
  ops.output_forward = output_forward(shape);
  ops.output_backward = output_backward(shape);
  ops.pipeline_receive = pipeline_receive(shape);
  if (shape.moe.experts > 0) {
    const LayerShape moe = moe_layer_shape(shape);
    ops.moe_forward = layer_forward(moe, Phase::Forward);
    ops.moe_backward = layer_backward(moe);
    ops.moe_recompute = recompute_program(moe, scope);
  }
  return ops;
}

StepPlan step_plan(const ModelSpec& m, const ParallelConfig& c) {
  StepPlan plan;
  plan.stages = c.pp;
  plan.virtual_stages = c.virtual_stages;
  plan.microbatches = c.num_microbatches();
  plan.chunks.resize(static_cast<std::size_t>(c.pp));
  for (int s = 0; s < c.pp; ++s)
    for (int k = 0; k < c.virtual_stages; ++k) plan.chunks[static_cast<std::size_t>(s)].push_back(chunk_plan(m, c, s, k));
  plan.passes = planned_passes(c);
  plan.shape = make_layer_shape(m, c, GroupPlacement{c.tp, 1, c.tp});
  plan.ops = layer_ops(plan.shape, recompute_scope(c));
  return plan;
}

}  // namespace cc
