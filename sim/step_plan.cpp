#include "sim/step_plan.h"

#include <algorithm>

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

LayerRange chunk_layers(const ModelSpec& m, const ParallelConfig& c, int stage, int chunk) {
  const int total = m.num_layers;
  if (c.pp == 1) {
    const int count = total / c.virtual_stages;
    return {chunk * count, count};
  }
  const int first = c.first_stage_layers, last = c.last_stage_layers;
  if (first == 0 && last == 0) {
    if (load_framework(c.framework).layer_partition == LayerPartition::DeepSpeedUniform) {
      // DeepSpeed's partition_uniform: the first num_layers % PP stages take one layer more.
      const int base = total / c.pp, extra = total % c.pp;
      return {stage * base + std::min(stage, extra), base + (stage < extra ? 1 : 0)};
    }
    const int count = total / (c.pp * c.virtual_stages);
    return {(chunk * c.pp + stage) * count, count};
  }
  // Uneven first and last stages exist only without interleaving: one chunk per stage.
  if (stage == 0 && first > 0) return {0, first};
  if (stage == c.pp - 1 && last > 0) return {total - last, last};
  const int middle_stages = c.pp - (first > 0) - (last > 0);
  const int middle = (total - first - last) / middle_stages;
  return {first + (stage - (first > 0 ? 1 : 0)) * middle, middle};
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

ChunkPlan chunk_plan(const ModelSpec& m, const ParallelConfig& c, int stage, int chunk) {
  ChunkPlan p;
  p.stage = stage;
  p.chunk = chunk;
  p.virtual_stage = chunk * c.pp + stage;
  p.layers = chunk_layers(m, c, stage, chunk);
  const int virtual_total = c.pp * c.virtual_stages;
  p.has_embedding = p.virtual_stage == 0;
  p.has_output = p.virtual_stage == virtual_total - 1;
  // Virtual stage j runs on stage j mod PP: the neighbours are the ring's neighbours.
  if (!p.has_embedding) p.previous_stage = (stage + c.pp - 1) % c.pp;
  if (!p.has_output) p.next_stage = (stage + 1) % c.pp;
  p.recompute = recompute_scope(c);
  p.recompute_groups = recompute_groups(c, p.layers.count);
  return p;
}

std::vector<std::vector<PlannedPass>> planned_passes(const ParallelConfig& c) {
  const auto schedule = pipeline_schedule(c.pp, c.num_microbatches(), c.virtual_stages);
  const int virtual_total = c.pp * c.virtual_stages;
  std::vector<std::vector<PlannedPass>> out(schedule.size());
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    const int stage = static_cast<int>(s);
    out[s].reserve(schedule[s].size());
    for (const PipelinePass& pass : schedule[s]) {
      PlannedPass p{pass.kind, pass.microbatch, pass.chunk, pass.chunk * c.pp + stage};
      // Forward: from virtual stage j-1, to j+1; backward the other way round.
      const int from = pass.kind == PassKind::Forward ? p.virtual_stage - 1 : p.virtual_stage + 1;
      const int to = pass.kind == PassKind::Forward ? p.virtual_stage + 1 : p.virtual_stage - 1;
      if (from >= 0 && from < virtual_total) {
        p.receive_from = from % c.pp;
        p.receive_from_chunk = from / c.pp;
      }
      if (to >= 0 && to < virtual_total) {
        p.send_to = to % c.pp;
        p.send_to_chunk = to / c.pp;
      }
      out[s].push_back(p);
    }
  }
  return out;
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
