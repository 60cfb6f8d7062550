// setup_panel_project.cpp — the setup's fields to and from a Project: what project() reads off
// every widget and set_project() shows, each field in one place (a value the user did not change
// passes through unchanged).
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStringList>

#include "gui/setup_panel.h"
#include "sim/error.h"
#include "sim/layout_rules.h"
#include "sim/presets.h"

namespace cc::gui {

namespace {

// The layer-frequency field as the model holds it: N, or the 0/1 pattern when one is given.
QString layer_freq_text(const MoeSpec& moe) {
  if (moe.layer_pattern.empty()) return QString::number(moe.layer_freq);
  QStringList entries;
  for (const int e : moe.layer_pattern) entries << QString::number(e);
  return entries.join(',');
}

}  // namespace

Project SetupPanel::project() const {
  Project p;
  p.model = model_base_;
  p.model_preset = model_preset_->currentText() == tr("custom") ? std::string() : model_preset_->currentText().toStdString();
  p.model.num_layers = layers_->value();
  p.model.hidden_size = hidden_->value();
  p.model.num_attention_heads = heads_->value();
  p.model.num_query_groups = groups_->value();
  p.model.ffn_hidden_size = ffn_->value();
  p.model.seq_length = seq_->value();
  p.model.vocab_size = vocab_->value();
  p.model.change_activation(static_cast<Activation>(activation_->currentIndex()));
  MoeSpec& e = p.model.moe;  // the layer frequency is model_base_'s, read when its field is finished
  e.num_experts = experts_->value();
  e.router_topk = topk_->value();
  e.ffn_hidden_size = expert_ffn_->value();
  e.shared_expert_ffn_hidden_size = shared_ffn_->value();
  e.score_function = score_->currentIndex() == 1 ? RouterScore::Sigmoid : RouterScore::Softmax;
  e.router_num_groups = router_groups_->value();
  e.router_group_topk = router_group_topk_->value();
  MlaSpec& a = p.model.mla;
  a.enabled = mla_->isChecked();
  a.q_lora_rank = q_lora_->value();
  a.kv_lora_rank = kv_lora_->value();
  a.qk_head_dim = qk_head_->value();
  a.qk_pos_emb_head_dim = qk_rope_head_->value();
  a.v_head_dim = v_head_->value();
  p.model.mtp_num_layers = mtp_->value();

  p.cluster = cluster_base_;
  p.cluster_preset = cluster_preset_->currentText().toStdString();
  p.cluster.gpu.hbm_gib = hbm_->value();
  p.cluster.gpus_per_node = gpus_per_node_->value();
  p.cluster.intra_node.bandwidth_gbs = nvlink_->value();
  p.cluster.inter_node.bandwidth_gbs = nic_->value();
  p.cluster.nics_per_node = nics_->value();
  p.gpus = gpu_total_;
  p.costs_file = costs_->currentData().toString().toStdString();
  p.framework = framework_;  // no field shows it: kept as the project or launch line named it
  p.switches = switches_;    // likewise, the launch line's or file's Megatron-LM switches

  ParallelConfig& c = p.config;
  c.tp = tp_->value();
  c.cp = cp_->value();
  c.cp_comm_type = static_cast<CpCommType>(cp_comm_->currentData().toInt());
  c.cp_a2a_size = cp_a2a_->value();
  c.pp = pp_->value();
  c.moe = moe_base_;
  c.ep = ep_->value();
  c.etp = etp_->value();
  c.moe.dispatcher = static_cast<TokenDispatcher>(dispatcher_->currentData().toInt());
  c.moe.flex_backend = static_cast<FlexBackend>(flex_backend_->currentData().toInt());
  c.moe.grouped_gemm = grouped_gemm_->isChecked();
  c.moe.capacity_factor = capacity_factor_->value() > 0 ? std::optional<double>(capacity_factor_->value()) : std::nullopt;
  c.moe.pad_to_capacity = pad_to_capacity_->isChecked();
  c.moe.load_imbalance = load_imbalance_->value() > 0 ? std::optional<double>(load_imbalance_->value()) : std::nullopt;
  c.moe.shared_expert_overlap = shared_expert_overlap_->isChecked();
  c.moe.overlap_ep_comm = overlap_ep_comm_->isChecked();
  p.auto_dp = dp_->value() == 0;
  c.dp = p.auto_dp ? 1 : dp_->value();
  c.sequence_parallel = sp_->isChecked();
  c.micro_batch = micro_->value();
  c.global_batch = global_->value();
  c.virtual_stages = virtual_->value();
  c.microbatch_group_size = microbatch_group_->value();
  c.first_stage_layers = first_->value();
  c.last_stage_layers = last_->value();
  c.account_for_embedding = account_embedding_->isChecked();
  c.account_for_loss = account_loss_->isChecked();
  c.pipeline_layout = pipeline_layout_->text().toStdString();  // as typed: the library reads it or says why not
  c.recompute = recompute_granularity_from(recompute_->currentText().toStdString(), "recompute");
  c.recompute_method = recompute_method_from(method_->currentText().toStdString(), "recompute method");
  c.recompute_num_layers = recompute_layers_->value();
  c.distributed_optimizer = distopt_->isChecked();
  c.distributed_optimizer_instances = distopt_instances_->value();
  c.overlap_grad_reduce = overlap_grad_->isChecked();
  c.overlap_param_gather = overlap_param_->isChecked();
  c.tp_comm_overlap = tp_overlap_->isChecked();
  c.grad_reduce_in_bf16 = grad_bf16_->isChecked();
  c.fp8_param_gather = fp8_params_->isChecked();
  c.cross_entropy_fusion = fused_loss_->isChecked();
  c.rope_fusion = fused_rope_->isChecked();
  c.attention = flash_->isChecked() ? AttentionKernel::Flash : AttentionKernel::Unfused;
  c.precision = precision_from(precision_->currentText().toStdString(), "precision");
  c.fp8_recipe = fp8_recipe_from(fp8_recipe_->currentText().toStdString(), "FP8 recipe");
  p.train_tokens = tokens_b_->value() * 1e9;
  p.every_rank = every_rank_->isChecked();
  p.reserve.cuda_context_gib = context_gib_->value();
  p.reserve.comm_buffers_gib = comm_gib_->value();
  p.reserve.fragmentation_fraction = fragmentation_->value();
  p.reserve.headroom_fraction = headroom_->value();
  return p;
}

void SetupPanel::set_project(const Project& p) {
  loading_ = true;
  model_base_ = p.model;
  cluster_base_ = p.cluster;
  moe_base_ = p.config.moe;
  framework_ = p.framework;
  switches_ = p.switches;
  model_preset_->setCurrentText(p.model_preset.empty() ? tr("custom") : QString::fromStdString(p.model_preset));
  layers_->setValue(p.model.num_layers);
  hidden_->setValue(p.model.hidden_size);
  heads_->setValue(p.model.num_attention_heads);
  groups_->setValue(p.model.num_query_groups);
  ffn_->setValue(p.model.ffn_hidden_size);
  seq_->setValue(p.model.seq_length);
  vocab_->setValue(p.model.vocab_size);
  activation_->setCurrentIndex(static_cast<int>(p.model.activation));
  experts_->setValue(p.model.moe.num_experts);
  topk_->setValue(p.model.moe.router_topk);
  expert_ffn_->setValue(p.model.moe.ffn_hidden_size);
  shared_ffn_->setValue(p.model.moe.shared_expert_ffn_hidden_size);
  moe_layer_freq_->setText(layer_freq_text(p.model.moe));
  moe_layer_freq_->setModified(false);
  score_->setCurrentIndex(p.model.moe.score_function == RouterScore::Sigmoid ? 1 : 0);
  router_groups_->setValue(p.model.moe.router_num_groups);
  router_group_topk_->setValue(p.model.moe.router_group_topk);
  mla_->setChecked(p.model.mla.enabled);
  q_lora_->setValue(p.model.mla.q_lora_rank);
  kv_lora_->setValue(p.model.mla.kv_lora_rank);
  qk_head_->setValue(p.model.mla.qk_head_dim);
  qk_rope_head_->setValue(p.model.mla.qk_pos_emb_head_dim);
  v_head_->setValue(p.model.mla.v_head_dim);
  mtp_->setValue(p.model.mtp_num_layers);

  cluster_preset_->setCurrentText(QString::fromStdString(p.cluster_preset));
  if (gpu_->findText(QString::fromStdString(p.cluster.gpu.name)) < 0) {  // a GPU from a cluster file
    gpu_->addItem(QString::fromStdString(p.cluster.gpu.name));
    gpus_.push_back(p.cluster.gpu);
  }
  gpu_->setCurrentText(QString::fromStdString(p.cluster.gpu.name));
  hbm_->setValue(p.cluster.gpu.hbm_gib);
  gpus_per_node_->setValue(p.cluster.gpus_per_node);
  nodes_->setValue(std::max(1, (p.gpus + p.cluster.gpus_per_node - 1) / p.cluster.gpus_per_node));
  gpu_total_ = p.gpus;
  nvlink_->setValue(p.cluster.intra_node.bandwidth_gbs);
  nic_->setValue(p.cluster.inter_node.bandwidth_gbs);
  nics_->setValue(p.cluster.nics_per_node);

  // The project's cost source is shown as named even when it cannot be read: the run then says
  // why, beside this field, instead of quietly simulating with whatever the box showed before.
  const QString costs_file = QString::fromStdString(p.costs_file);
  if (costs_->findData(costs_file) < 0) costs_->addItem(QFileInfo(costs_file).fileName(), costs_file);
  costs_->setCurrentIndex(costs_->findData(costs_file));
  loading_ = false;
  try {
    set_costs_file(QString::fromStdString(p.costs_file));
  } catch (const SpecError& e) {
    costs_info_->setText(QString::fromStdString(e.what()));
  }
  loading_ = true;

  const ParallelConfig& c = p.config;
  tp_->setValue(c.tp);
  cp_->setValue(c.cp);
  cp_comm_->setCurrentIndex(cp_comm_->findData(static_cast<int>(c.cp_comm_type)));
  cp_a2a_->setValue(c.cp_a2a_size);
  pp_->setValue(c.pp);
  ep_->setValue(c.ep);
  etp_->setValue(c.etp);
  dispatcher_->setCurrentIndex(dispatcher_->findData(static_cast<int>(c.moe.dispatcher)));
  flex_backend_->setCurrentIndex(flex_backend_->findData(static_cast<int>(c.moe.flex_backend)));
  grouped_gemm_->setChecked(c.moe.grouped_gemm);
  capacity_factor_->setValue(c.moe.capacity_factor.value_or(0.0));
  pad_to_capacity_->setChecked(c.moe.pad_to_capacity);
  load_imbalance_->setValue(c.moe.load_imbalance.value_or(0.0));
  shared_expert_overlap_->setChecked(c.moe.shared_expert_overlap);
  overlap_ep_comm_->setChecked(c.moe.overlap_ep_comm);
  dp_->setValue(p.auto_dp ? 0 : c.dp);
  sp_->setChecked(c.sequence_parallel);
  micro_->setValue(c.micro_batch);
  global_->setValue(c.global_batch);
  virtual_->setValue(c.virtual_stages);
  microbatch_group_->setValue(c.microbatch_group_size);
  first_->setValue(c.first_stage_layers);
  last_->setValue(c.last_stage_layers);
  account_embedding_->setChecked(c.account_for_embedding);
  account_loss_->setChecked(c.account_for_loss);
  pipeline_layout_->setText(QString::fromStdString(c.pipeline_layout));
  pipeline_layout_->setModified(false);
  recompute_->setCurrentText(to_string(c.recompute));
  method_->setCurrentText(to_string(c.recompute_method));
  recompute_layers_->setValue(c.recompute_num_layers);
  distopt_->setChecked(c.distributed_optimizer);
  distopt_instances_->setValue(c.distributed_optimizer_instances);
  overlap_grad_->setChecked(c.overlap_grad_reduce);
  overlap_param_->setChecked(c.overlap_param_gather);
  tp_overlap_->setChecked(c.tp_comm_overlap);
  grad_bf16_->setChecked(c.grad_reduce_in_bf16);
  fp8_params_->setChecked(c.fp8_param_gather);
  fused_loss_->setChecked(c.cross_entropy_fusion);
  fused_rope_->setChecked(c.rope_fusion);
  flash_->setChecked(c.attention == AttentionKernel::Flash);
  precision_->setCurrentText(to_string(c.precision));
  fp8_recipe_->setCurrentText(to_string(c.fp8_recipe));
  tokens_b_->setValue(p.train_tokens / 1e9);
  every_rank_->setChecked(p.every_rank);
  context_gib_->setValue(p.reserve.cuda_context_gib);
  comm_gib_->setValue(p.reserve.comm_buffers_gib);
  fragmentation_->setValue(p.reserve.fragmentation_fraction);
  headroom_->setValue(p.reserve.headroom_fraction);
  update_counts();
  update_context_parallel_rows();
  update_moe_rows();
  loading_ = false;
}

}  // namespace cc::gui
