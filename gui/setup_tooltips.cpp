// The Setup panel's tooltips: each field says the Megatron-LM flag it stands for (or the
// clustercast option, where Megatron-LM has none: the hardware, the cost source, the reserve)
// and what it means. The MoE, CP and pipeline-split fields have theirs beside their definition.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QSpinBox>

#include "gui/setup_panel.h"

namespace cc::gui {

void SetupPanel::describe_fields() {
  // Model.
  model_preset_->setToolTip(tr("clustercast --model: a published model's shape; choosing one fills every field below"));
  layers_->setToolTip(tr("--num-layers: transformer layers"));
  hidden_->setToolTip(tr("--hidden-size: the model width"));
  heads_->setToolTip(tr("--num-attention-heads: query heads per layer"));
  groups_->setToolTip(tr("--num-query-groups (with --group-query-attention): key/value heads; equal to the heads: "
                         "multi-head attention"));
  ffn_->setToolTip(tr("--ffn-hidden-size: the MLP's inner width"));
  seq_->setToolTip(tr("--seq-length: tokens per training sequence"));
  vocab_->setToolTip(tr("--vocab-size: the embedding and output tables' rows"));
  activation_->setToolTip(tr("The MLP's activation: GeLU (two matrices; Megatron-LM's default), SwiGLU (--swiglu: "
                             "gated, three matrices), GeGLU (Gemma's gated GeLU) or squared ReLU (--squared-relu: "
                             "Nemotron-4's, two matrices, no biases)"));
  q_lora_->setToolTip(tr("--q-lora-rank: multi-latent attention's query compression; none: full-rank queries"));
  kv_lora_->setToolTip(tr("--kv-lora-rank: multi-latent attention's key/value compression rank"));
  qk_head_->setToolTip(tr("--qk-head-dim: a query/key head's dimensions without rotary embedding"));
  qk_rope_head_->setToolTip(tr("--qk-pos-emb-head-dim: a query/key head's rotary-embedding dimensions"));
  v_head_->setToolTip(tr("--v-head-dim: a value head's dimensions"));

  // Cluster: hardware, which Megatron-LM takes from the machine it runs on.
  cluster_preset_->setToolTip(tr("clustercast --cluster: a described cluster (GPU, nodes, NVLink, network); choosing "
                                 "one fills the fields below"));
  gpu_->setToolTip(tr("The GPU type: its peak FLOP/s, HBM and memory bandwidth; the nodes and fabrics stay"));
  hbm_->setToolTip(tr("HBM per GPU in GiB: what the memory check holds the peak against"));
  gpus_per_node_->setToolTip(tr("torchrun --nproc-per-node: GPUs in a node, joined by NVLink"));
  nodes_->setToolTip(tr("torchrun --nnodes: the node count; GPUs = nodes × GPUs per node (clustercast --gpus)"));
  nvlink_->setToolTip(tr("NVLink bandwidth per GPU inside a node, GB/s, one direction"));
  nic_->setToolTip(tr("Bandwidth of one network card between nodes, GB/s, one direction"));
  nics_->setToolTip(tr("Network cards per node"));
  costs_->setToolTip(tr("clustercast --costs: where operation and collective times come from; the analytic model, "
                        "or a cost database measured on a real machine"));

  // Layout.
  tp_->setToolTip(tr("--tensor-model-parallel-size: each layer's matrices split over TP GPUs"));
  pp_->setToolTip(tr("--pipeline-model-parallel-size: the layers split into PP stages, one per GPU group"));
  sp_->setToolTip(tr("--sequence-parallel: under TP, norms and dropout split over the sequence too (less activation "
                     "memory, reduce-scatter and all-gather instead of all-reduce)"));
  micro_->setToolTip(tr("--micro-batch-size: sequences per micro batch on one GPU"));
  global_->setToolTip(tr("--global-batch-size: sequences per iteration over all data-parallel replicas"));
  virtual_->setToolTip(tr("--num-virtual-stages-per-pipeline-rank: model chunks per pipeline rank (interleaved "
                          "schedule); 1: no interleaving"));
  recompute_->setToolTip(tr("--recompute-granularity: none; selective (the attention's core recomputed in the "
                            "backward pass); full (whole layers, with the method and layers below)"));
  method_->setToolTip(tr("--recompute-method: uniform (every chunk of layers) or block (the first layers of each "
                         "stage); read with full recomputation"));
  recompute_layers_->setToolTip(tr("--recompute-num-layers: layers per recomputed chunk (uniform) or recomputed "
                                   "layers per stage (block)"));
  distopt_->setToolTip(tr("--use-distributed-optimizer: optimizer state sharded over data-parallel ranks (ZeRO-1)"));
  distopt_instances_->setToolTip(tr("--num-distributed-optimizer-instances: the optimizer state sharded within this "
                                    "many equal blocks of the data-parallel ranks, its shards all-reduced across them "
                                    "(1: over all of them)"));
  overlap_grad_->setToolTip(tr("--overlap-grad-reduce: the gradient reduction runs during the backward pass"));
  overlap_param_->setToolTip(tr("--overlap-param-gather: the distributed optimizer's parameter all-gather runs "
                                "during the next forward pass"));
  tp_overlap_->setToolTip(tr("--tp-comm-overlap: tensor-parallel communication overlapped with the GEMMs "
                             "(Transformer Engine userbuffers; with sequence parallelism)"));
  grad_bf16_->setToolTip(tr("--grad-reduce-in-bf16: a bf16 run keeps, accumulates and reduces its gradients in "
                            "bf16 instead of fp32 (half the gradient memory and data-parallel traffic)"));
  fp8_params_->setToolTip(tr("--fp8-param-gather: an FP8 run with the distributed optimizer keeps Transformer "
                             "Engine's linear weights in FP8 (one byte each in memory and in the parameter all-gather)"));
  fused_loss_->setToolTip(tr("--cross-entropy-loss-fusion: Megatron-Core's fused vocab-parallel loss (fewer passes "
                             "over the logits, one TP all-reduce fewer, one more fp32 copy of the logits at its peak)"));
  fused_rope_->setToolTip(tr("RoPE by Transformer Engine's fused kernel (Megatron-LM's default); off: "
                             "--no-rope-fusion, separate PyTorch kernels"));
  flash_->setToolTip(tr("--attention-backend flash: fused attention that never stores the s × s scores; off: "
                        "unfused, which stores them"));
  fp8_recipe_->setToolTip(tr("--fp8-recipe for an FP8 run: delayed (Megatron-LM's default, scales from each "
                             "tensor's amax history) or tensorwise (current scaling); priced alike"));
  precision_->setToolTip(tr("--bf16, --fp16, --bf16 --fp8-format hybrid, or none of them (fp32)"));

  // Run.
  tokens_b_->setToolTip(tr("clustercast --train-tokens (here in billions): the training budget behind days and "
                           "GPU-hours; Megatron-LM's --train-samples × --seq-length"));
  every_rank_->setToolTip(tr("clustercast --every-rank: simulate each data-parallel replica, not one for all"));

  // Memory reserve (clustercast's options; Megatron-LM has no flag for them).
  context_gib_->setToolTip(tr("clustercast --cuda-context-gib: the CUDA context and kernels each GPU holds"));
  comm_gib_->setToolTip(tr("clustercast --comm-buffers-gib: NCCL's communication buffers per GPU"));
  fragmentation_->setToolTip(tr("clustercast --fragmentation: the allocator's fragmentation, as a fraction of the "
                                "activations"));
  headroom_->setToolTip(tr("clustercast --memory-headroom: the share of HBM a layout must leave free"));
}

}  // namespace cc::gui
