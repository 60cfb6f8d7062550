// layer_annotations.h — the ops the engine annotates for one transformer layer (forward,
// backward, and what recomputation reruns), recorded from a real chunk pass, next to the
// step plan's op list for a layer (sim/step_plan.h), both as (name, phase, shape) rows.
// Shared by the one-rank test (TP 1) and the MPI test (TP 2, started by mpirun).
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "engine/model_chunk.h"
#include "engine/training_loop.h"
#include "sim/step_plan.h"

namespace cc::engine {

struct AnnotatedOp {
  std::string name;
  Phase phase = Phase::Forward;
  // The simulator's convention (OpProgram, the cost database): GEMM m, n, k, batch;
  // elementwise elements, 1, 1, 1; collective bytes, 1, 1, 1.
  std::array<std::int64_t, 4> shape{};
  bool collective = false;
  CollectiveKind kind = CollectiveKind::AllReduce;  // collectives only
  bool operator==(const AnnotatedOp&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const AnnotatedOp& op) {
  os << op.name << " " << to_string(op.phase) << " " << op.shape[0] << "x" << op.shape[1] << "x" << op.shape[2] << "x"
     << op.shape[3];
  if (op.collective) os << " " << to_string(op.kind);
  return os;
}

struct LayerAnnotations {
  std::vector<AnnotatedOp> forward, backward, recompute;
};

// The engine writes 0 for a shape's unused dimensions; the simulator writes 1 (as the
// profiler maps them, profiler/op_statistics.cpp).
inline AnnotatedOp annotated(const OpAnnotation& a) {
  AnnotatedOp op{a.name, a.phase, a.shape, a.collective, a.collective ? a.kind : CollectiveKind::AllReduce};
  for (auto& d : op.shape) d = std::max<std::int64_t>(d, 1);
  return op;
}

inline AnnotatedOp annotated(const ProgramStep& step) {
  if (step.is_collective)
    return {step.comm.name, step.comm.phase, {static_cast<std::int64_t>(step.comm.bytes), 1, 1, 1}, true,
            step.comm.kind};
  const ComputeOp& c = step.op;
  return {c.name, c.phase, {c.m, c.n, c.k, c.batch}, false, CollectiveKind::AllReduce};
}

// Megatron-LM accumulates weight gradients into fp32 main_grad buffers in a kernel the
// plan prices separately; the engine's wgrad GEMMs add into the fp32 gradient themselves,
// so it has no such op to annotate.
inline bool engine_runs(const ProgramStep& step) {
  return step.is_collective || std::string(step.op.name) != "main_grad_accumulate";
}

inline std::vector<AnnotatedOp> annotated(const OpProgram& program) {
  std::vector<AnnotatedOp> out;
  for (const ProgramStep& step : program)
    if (engine_runs(step)) out.push_back(annotated(step));
  return out;
}

// What the plan says layer `layer` (of the plan's first chunk) runs: a layer outside every
// full-recompute group keeps all it needs and reruns nothing.
inline LayerAnnotations planned_layer(const StepPlan& plan, int layer) {
  const ChunkPlan& chunk = plan.chunk(0, 0);
  const bool reruns = chunk.recompute != RecomputeScope::WholeLayer || !chunk.keeps_all(layer - chunk.layers.first);
  return {annotated(plan.ops.forward), annotated(plan.ops.backward),
          reruns ? annotated(plan.ops.recompute) : std::vector<AnnotatedOp>{}};
}

class LayerRecorder final : public OpRecorder {
 public:
  explicit LayerRecorder(int layer) : layer_(layer), previous_(active_recorder()) { active_recorder() = this; }
  ~LayerRecorder() override { active_recorder() = previous_; }
  LayerRecorder(const LayerRecorder&) = delete;
  LayerRecorder& operator=(const LayerRecorder&) = delete;

  void begin(const OpAnnotation& a) override {
    if (a.layer != layer_) return;
    const AnnotatedOp op = annotated(a);
    (a.phase == Phase::Forward ? ops_.forward : a.phase == Phase::Backward ? ops_.backward : ops_.recompute)
        .push_back(op);
  }
  void end(const OpAnnotation&) override {}
  const LayerAnnotations& ops() const { return ops_; }

 private:
  int layer_;
  OpRecorder* previous_;
  LayerAnnotations ops_;
};

// Forward and backward of microbatch 0 of step 1 through this rank's whole model (one
// stage, one chunk: `config` has PP 1), recording what global layer `layer` annotates
// (-1: the embedding, then the output layer).
inline LayerAnnotations engine_layer(const ModelSpec& model, const ParallelConfig& config, const ProcessGroups& groups,
                                     int layer) {
  const RankModel m = make_rank_model(model, config, groups.me.tp, 0);
  ModelWeights<float> w = allocate_weights<float>(m), g = allocate_weights<float>(m);
  initialise_weights(w, m, 3);
  TrainOptions options;
  options.dropout = 0.1;  // attention dropout is an op of its own
  const PassEnv env = step_pass_env(model, config, options, groups, 1, 0);
  std::vector<int> tokens, targets;
  for (int r = 0; r < env.full_rows(); ++r) {
    tokens.push_back((r * 5 + 3) % model.vocab_size);
    targets.push_back((r * 7 + 1) % model.vocab_size);
  }
  const ModelChunk<float> chunk(m);
  LayerRecorder recorder(layer);
  ChunkSaved<float> saved;
  Mat<float> out, dx;
  double loss = 0;
  chunk.forward(w, env, 0, Mat<float>(), tokens, targets, out, &loss, saved);
  chunk.backward(w, g, env, 0, saved, Mat<float>(), 1.0, dx);
  return recorder.ops();
}

// The first `n` rows of `ops` (all of them when there are fewer).
inline std::vector<AnnotatedOp> first_rows(const std::vector<AnnotatedOp>& ops, std::size_t n) {
  return {ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(std::min(n, ops.size()))};
}
// The last `n` rows of `ops` (all of them when there are fewer).
inline std::vector<AnnotatedOp> last_rows(const std::vector<AnnotatedOp>& ops, std::size_t n) {
  return {ops.end() - static_cast<std::ptrdiff_t>(std::min(n, ops.size())), ops.end()};
}

}  // namespace cc::engine
