// layer_program.h — the kernels and collectives of one transformer layer (and of the
// embedding and output layers) on one rank, in execution order, exactly as Megatron-LM
// runs them under TP / SP / recompute. Costing a program sums its kernels and adds each
// collective's exposed part: blocking ones in full, overlapped ones beyond the kernel
// they hide behind (Megatron overlaps the input-gradient all-reduce / reduce-scatter with
// the weight-gradient GEMM, and SP's re-gather of inputs with the data-gradient GEMM).
#pragma once

#include <vector>

#include "sim/cost_source.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

// Per-rank shape of one microbatch through a layer.
struct LayerShape {
  std::int64_t b = 1, s = 1, h = 1;
  std::int64_t tokens = 1;           // b·s: rows of every GEMM
  std::int64_t region_tokens = 1;    // tokens in norm/dropout regions: b·s/t with SP, else b·s
  std::int64_t heads = 1;            // attention heads on this rank
  std::int64_t head_dim = 1;
  std::int64_t qkv_out = 1;          // (q + 2·kv)/t, q = heads·head_dim (= h unless head_dim is explicit)
  std::int64_t kv_width = 1;         // kv/t: width of K (and of V) on this rank
  std::int64_t ffn = 1;              // ffn/t
  std::int64_t vocab = 1;            // ceil(v/t)
  double elem = 2;                   // bytes per activation element
  bool sequence_parallel = false, dropout = true, gated = false, rope = false, flash = false;
  int tp = 1;
  GroupPlacement tp_group;
};

LayerShape make_layer_shape(const ModelSpec& model, const ParallelConfig& config, GroupPlacement tp_group);

struct ProgramStep {
  bool is_collective = false;
  ComputeOp op;
  CollectiveOp comm;
  int hides_behind = -1;  // collectives: index of the compute step it overlaps; -1 = blocking
};
using OpProgram = std::vector<ProgramStep>;

OpProgram layer_forward(const LayerShape& shape, Phase phase);  // Forward or Recompute
OpProgram layer_backward(const LayerShape& shape);
OpProgram attention_core_forward(const LayerShape& shape, Phase phase);  // what selective recompute reruns
OpProgram embedding_forward(const LayerShape& shape);
OpProgram embedding_backward(const LayerShape& shape);
OpProgram output_forward(const LayerShape& shape);  // final norm, logits, cross-entropy
OpProgram output_backward(const LayerShape& shape);

struct ProgramCost {
  double compute_s = 0;     // kernels
  double comm_exposed_s = 0;
  double measured_s = 0;    // part of the total that came from measurements
  double flops = 0;
  double total() const { return compute_s + comm_exposed_s; }
  ProgramCost& operator+=(const ProgramCost& o);
  ProgramCost scaled(double factor) const;
};

ProgramCost cost_of(const OpProgram& program, const CostSource& costs);

}  // namespace cc
