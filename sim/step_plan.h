// step_plan.h — what each pipeline stage does in one training step, as a pure function of
// (model, parallel config): each chunk's layers and recompute groups, each stage's ordered
// passes with the stages they receive from and send to, and the kernels and collectives a
// layer runs. The simulator, the memory model, the FLOP count, the cross-node traffic map
// and both engines read it, so none of them derives a layer range, a recompute group or a
// pipeline peer again. Replicas are not in it: every DP replica runs the same plan.
#pragma once

#include <vector>

#include "sim/layer_program.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"
#include "sim/pipeline_schedule.h"

namespace cc {

// Consecutive layers [first, first + count).
struct LayerRange {
  int first = 0;
  int count = 0;
  int end() const { return first + count; }
  bool operator==(const LayerRange&) const = default;
};

// What a recomputed layer reruns before its backward.
enum class RecomputeScope {
  Nothing,
  CoreAttention,  // selective: the score and context products (unfused attention only)
  WholeLayer,     // full: the layer's forward, from the input its group kept
};

// The scope of `config`'s recomputation. Selective recomputation with flash attention reruns
// nothing: the fused kernel keeps no score matrix for it to drop.
RecomputeScope recompute_scope(const ParallelConfig& config);
RecomputeScope recompute_scope(RecomputeGranularity granularity, AttentionKernel attention);

// One model chunk: the layers a virtual stage holds and how they recompute.
struct ChunkPlan {
  int stage = 0;
  int chunk = 0;          // on its stage; 0 without interleaving
  int virtual_stage = 0;  // chunk · PP + stage: the order activations flow through the model
  LayerRange layers;      // global layer indices
  bool has_embedding = false;  // the first virtual stage
  bool has_output = false;     // the last virtual stage: final norm, logits, loss
  // Pipeline stages holding the virtual stages before and after this one, and their chunks
  // there; -1 at the ends.
  int previous_stage = -1, next_stage = -1;
  int previous_chunk = -1, next_chunk = -1;
  RecomputeScope recompute = RecomputeScope::Nothing;
  // Chunk-local ranges of layers that rerun together in backward, first layers first:
  // full/uniform, groups of --recompute-num-layers from the group's kept input; full/block,
  // the first --recompute-num-layers layers one at a time (the rest keep everything);
  // selective, every layer on its own. Empty without recomputation.
  std::vector<LayerRange> recompute_groups;
  // Of `layers`, and of those in recompute_groups: the MoE layers (ModelSpec::is_moe_layer),
  // which run an MoE layer's programs.
  int moe_layers = 0;
  int moe_recomputed_layers = 0;

  int recomputed_layers() const;
  // Whether chunk-local layer `i` keeps every activation for backward (no full rerun).
  bool keeps_all(int i) const;
  // The chunk-local layers that run backward together with layer `i`: its recompute group
  // under full recomputation, else layer `i` alone.
  LayerRange backward_group(int i) const;
};

// The transformer layers of every virtual stage, indexed chunk · PP + stage (the order layers
// run in), by Megatron-Core's rules (transformer_block.py get_num_layers_to_build):
//  - a --pipeline-model-parallel-layout string: what each of its virtual stages spells out;
//  - --decoder-first/last-pipeline-num-layers: the first (last) stage holds its count, the
//    middle stages share the rest evenly, and each stage splits its layers evenly over its chunks
//    (so with interleaving each of those counts divides by the chunks per stage);
//  - an even split over PP x chunks, where --account-for-embedding/loss-in-pipeline-split count
//    the embedding (loss) as one layer: the first (last) virtual stage holds one transformer
//    layer fewer, possibly none;
//  - DeepSpeed's uniform partition: the first num_layers % PP stages one layer more.
// A virtual stage may hold no transformer layer. `config` is assumed valid (validate_layout()).
std::vector<int> virtual_stage_layers(const ModelSpec& model, const ParallelConfig& config);
// The layers of virtual stage `chunk` on pipeline stage `stage`, from the counts above.
LayerRange chunk_layers(const ModelSpec& model, const ParallelConfig& config, int stage, int chunk);
// Layers held by pipeline stage `stage`, summed over its chunks.
int stage_layer_count(const ModelSpec& model, const ParallelConfig& config, int stage);
// The recompute groups of a chunk of `layers` layers under `config`.
std::vector<LayerRange> recompute_groups(const ParallelConfig& config, int layers);
ChunkPlan chunk_plan(const ModelSpec& model, const ParallelConfig& config, int stage, int chunk);

// One pass of a stage's schedule and where its data comes from and goes: forward receives
// the activation from the previous virtual stage and sends its output to the next; backward
// the other way round. Peers are pipeline stages; -1 where there is none (first and last
// virtual stage). `*_chunk` is the peer's chunk that runs the matching pass.
struct PlannedPass {
  PassKind kind = PassKind::Forward;
  int microbatch = 0;
  int chunk = 0;
  int virtual_stage = 0;
  int receive_from = -1;
  int send_to = -1;
  int receive_from_chunk = -1;
  int send_to_chunk = -1;
  bool operator==(const PlannedPass&) const = default;
};

// Every stage's passes in the order it runs them (pipeline_schedule()), with their peers.
std::vector<std::vector<PlannedPass>> planned_passes(const ParallelConfig& config);
// One schedule pass of `chunk` with its peers: what planned_passes() holds, for a reader that
// walks pipeline_schedule() itself rather than keep a second copy of every pass.
PlannedPass plan_pass(const PipelinePass& pass, const ChunkPlan& chunk);

// The kernels and collectives one rank runs for one microbatch, in order (layer_program):
// the one list the pricing, the traffic count and the engines' annotations share.
struct LayerOps {
  OpProgram forward;
  OpProgram backward;
  OpProgram recompute;  // what one recomputed layer reruns before its backward; empty: nothing
  OpProgram embedding_forward, embedding_backward;
  OpProgram output_forward, output_backward;
  OpProgram pipeline_receive;  // after an activation or gradient arrives from another stage
  // An MoE layer's programs (moe_layer_shape()); empty for a dense model. The chunk's layers
  // say which run which (ModelSpec::is_moe_layer).
  OpProgram moe_forward, moe_backward, moe_recompute;
};
// What one layer reruns before its backward under `scope` (empty for Nothing).
OpProgram recompute_program(const LayerShape& shape, RecomputeScope scope);
// `scope` chooses `recompute`.
LayerOps layer_ops(const LayerShape& shape, RecomputeScope scope);

struct StepPlan {
  int stages = 1;
  int virtual_stages = 1;
  int microbatches = 1;
  std::vector<std::vector<ChunkPlan>> chunks;    // [stage][chunk]
  std::vector<std::vector<PlannedPass>> passes;  // [stage], in run order
  // The per-rank shape of one microbatch through a layer. The plan knows no cluster: its TP
  // group is placed as if on one node; pricing places it on the cluster (price_layers()).
  LayerShape shape;
  LayerOps ops;

  const ChunkPlan& chunk(int stage, int chunk) const {
    return chunks[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)];
  }
};

// The plan of one step. `config` is assumed valid for `model` (validate_layout()).
StepPlan step_plan(const ModelSpec& model, const ParallelConfig& config);

}  // namespace cc
