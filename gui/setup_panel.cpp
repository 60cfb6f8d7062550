#include "gui/setup_panel.h"

#include <fstream>
#include <sstream>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLocale>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include "gui/wheel_guard.h"
#include "interop/hf_config.h"
#include "sim/cost_database.h"
#include "sim/error.h"
#include "sim/layout_rules.h"
#include "sim/numbers.h"
#include "sim/presets.h"

namespace cc::gui {

namespace {

QFormLayout* group(QVBoxLayout* parent, const QString& title) {
  auto* box = new QGroupBox(title);
  auto* form = new QFormLayout(box);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setLabelAlignment(Qt::AlignRight);
  parent->addWidget(box);
  return form;
}

// Megatron-LM's --cp-comm-type choices, in the order its help lists them.
constexpr CpCommType kCpCommTypes[] = {CpCommType::P2P, CpCommType::AllToAll, CpCommType::AllGather,
                                       CpCommType::AllToAllP2P};

// Megatron-LM's --moe-token-dispatcher-type choices, and --moe-flex-dispatcher-backend's that are
// modelled (ncclep is refused by name).
constexpr TokenDispatcher kDispatchers[] = {TokenDispatcher::AllGather, TokenDispatcher::AllToAll,
                                            TokenDispatcher::Flex};
constexpr FlexBackend kFlexBackends[] = {FlexBackend::DeepEP, FlexBackend::HybridEP};

// "46.70B" for a parameter count.
// A parameter count in the unit that keeps its digits: billions, millions, or the exact count
// with thousands separators as `simulate` prints it (a tiny model read 0.00B).
QString parameter_count(std::int64_t n) {
  const double x = static_cast<double>(n);
  if (x >= 1e9) return QStringLiteral("%1B").arg(x / 1e9, 0, 'f', 2);
  if (x >= 1e6) return QStringLiteral("%1M").arg(x / 1e6, 0, 'f', 2);
  return QLocale(QLocale::English).toString(static_cast<qlonglong>(n));
}

QString bundled_traces_dir() {
#ifdef CLUSTERCAST_TRACES_DIR
  return QStringLiteral(CLUSTERCAST_TRACES_DIR);
#else
  return {};
#endif
}

}  // namespace

SetupPanel::SetupPanel(QWidget* parent) : QWidget(parent), error_(new QLabel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  error_->setWordWrap(true);
  error_->setStyleSheet("QLabel { color: #b00020; background: #fdecea; padding: 4px; }");
  error_->setObjectName("inline_error");
  error_->hide();

  // Model.
  QFormLayout* m = group(layout, tr("Model"));
  model_preset_ = new QComboBox;
  for (const auto& n : model_preset_names()) model_preset_->addItem(QString::fromStdString(n));
  model_preset_->addItem(tr("custom"));
  row(m, tr("Preset"), model_preset_, "model");
  layers_ = spin(m, tr("Layers"), 1, 100000);
  hidden_ = spin(m, tr("Hidden size"), 1, 1 << 20);
  heads_ = spin(m, tr("Attention heads"), 1, 65536);
  groups_ = spin(m, tr("Query groups (KV heads)"), 1, 65536);
  ffn_ = spin(m, tr("FFN hidden size"), 1, 1 << 22);
  seq_ = spin(m, tr("Sequence length"), 1, 1 << 22);
  vocab_ = spin(m, tr("Vocabulary size"), 1, 1 << 24);
  activation_ = new QComboBox;
  // In Activation's order: project() and set_project() convert by index.
  static_assert(static_cast<int>(Activation::SquaredReLU) == 3, "the activation entries follow Activation's order");
  activation_->addItems({tr("GeLU"), tr("SwiGLU"), tr("GeGLU"), tr("squared ReLU")});
  row(m, tr("MLP activation"), activation_, "activation");
  connect(activation_, &QComboBox::currentIndexChanged, this, &SetupPanel::changed);
  model_form_ = m;
  // Mixture of experts (Megatron-LM's names in the tooltips; docs/moe.md). 0 experts: dense.
  experts_ = spin(m, tr("Routed experts"), 0, 1 << 20, "num_experts");
  experts_->setSpecialValueText(tr("none (dense)"));
  experts_->setToolTip(tr("--num-experts: routed experts per MoE layer"));
  topk_ = spin(m, tr("Router top-k"), 0, 1 << 20, "moe_router_topk");
  topk_->setToolTip(tr("--moe-router-topk: experts each token visits"));
  expert_ffn_ = spin(m, tr("Expert FFN hidden size"), 0, 1 << 22, "moe_ffn_hidden_size");
  expert_ffn_->setToolTip(tr("--moe-ffn-hidden-size: one routed expert's FFN width"));
  shared_ffn_ = spin(m, tr("Shared expert FFN"), 0, 1 << 22, "moe_shared_expert_intermediate_size");
  shared_ffn_->setSpecialValueText(tr("none"));
  shared_ffn_->setToolTip(tr("--moe-shared-expert-intermediate-size: the shared experts' width, summed"));
  moe_layer_freq_ = new QLineEdit;
  moe_layer_freq_->setToolTip(tr("--moe-layer-freq: N (layer i is MoE when i mod N = 0), or one 0/1 per layer "
                                 "separated by commas (DeepSeek-V3: three 0s, then 1s)"));
  row(m, tr("MoE layer frequency"), moe_layer_freq_, "moe_layer_freq");
  connect(moe_layer_freq_, &QLineEdit::editingFinished, this, &SetupPanel::read_moe_layer_freq);
  score_ = new QComboBox;
  score_->addItems({"softmax", "sigmoid"});
  score_->setToolTip(tr("--moe-router-score-function: how the router turns its logits into expert weights, softmax "
                        "or sigmoid"));
  row(m, tr("Router score function"), score_, "moe_router_score_function");
  connect(score_, &QComboBox::currentIndexChanged, this, &SetupPanel::changed);
  router_groups_ = spin(m, tr("Router groups"), 0, 1 << 20, "moe_router_num_groups");
  router_groups_->setSpecialValueText(tr("none"));
  router_groups_->setToolTip(tr("--moe-router-num-groups: grouped top-k's expert groups"));
  router_group_topk_ = spin(m, tr("Router group top-k"), 0, 1 << 20, "moe_router_group_topk");
  router_group_topk_->setSpecialValueText(tr("none"));
  router_group_topk_->setToolTip(tr("--moe-router-group-topk: groups a token may use"));
  // Multi-latent attention (DeepSeek-V2/V3) and multi-token prediction.
  mla_ = check(m, tr("Multi-latent attention"), "multi_latent_attention");
  mla_->setToolTip(tr("--multi-latent-attention: keys and values through a low-rank latent (DeepSeek-V2/V3), "
                      "with the ranks and head dims below"));
  q_lora_ = spin(m, tr("Query LoRA rank"), 0, 1 << 20, "q_lora_rank");
  q_lora_->setSpecialValueText(tr("none"));
  kv_lora_ = spin(m, tr("Key/value LoRA rank"), 0, 1 << 20, "kv_lora_rank");
  qk_head_ = spin(m, tr("Q/K head dim (no RoPE)"), 0, 1 << 16, "qk_head_dim");
  qk_rope_head_ = spin(m, tr("Q/K head dim (RoPE)"), 0, 1 << 16, "qk_pos_emb_head_dim");
  v_head_ = spin(m, tr("Value head dim"), 0, 1 << 16, "v_head_dim");
  mtp_ = spin(m, tr("MTP layers"), 0, 1024, "mtp_num_layers");
  mtp_->setToolTip(tr("--mtp-num-layers: multi-token prediction layers"));
  parameters_ = new QLabel;
  parameters_->setObjectName("parameters");
  parameters_->setToolTip(tr("Total, and active: what one token uses (the router, its top-k and the shared experts of each MoE layer, every dense layer, the embedding and output tables)"));
  parameters_->setWordWrap(true);
  m->addRow(tr("Parameters"), parameters_);
  auto* import = new QPushButton(tr("Import HuggingFace config.json…"));
  import->setToolTip(tr("The model's shape from a HuggingFace config.json; the sequence length stays as shown"));
  m->addRow(import);
  connect(import, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("HuggingFace config.json"), {}, tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    try {
      import_hf_config(path);
    } catch (const SpecError& e) {
      show_error("model", QString::fromStdString(e.what()));
    }
  });
  connect(model_preset_, &QComboBox::currentTextChanged, this, [this](const QString& name) {
    if (loading_ || name == tr("custom")) return;
    load_model_preset(name);
    changed();
  });

  // Cluster.
  QFormLayout* c = group(layout, tr("Cluster"));
  cluster_preset_ = new QComboBox;
  for (const auto& n : cluster_preset_names()) cluster_preset_->addItem(QString::fromStdString(n));
  row(c, tr("Preset"), cluster_preset_, "cluster");
  // GPU type: any GPU a cluster preset describes, on this cluster's nodes and fabrics.
  gpu_ = new QComboBox;
  for (const auto& n : cluster_preset_names()) {
    const GpuSpec gpu = load_cluster(n).gpu;
    if (gpu_->findText(QString::fromStdString(gpu.name)) < 0) {
      gpu_->addItem(QString::fromStdString(gpu.name));
      gpus_.push_back(gpu);
    }
  }
  row(c, tr("GPU"), gpu_, "gpu");
  connect(gpu_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (loading_ || i < 0) return;
    Project p = project();
    p.cluster.gpu = gpus_[static_cast<std::size_t>(i)];
    set_project(p);
    changed();
  });
  hbm_ = dspin(c, tr("HBM per GPU (GiB)"), 1, 4096, 0);
  gpus_per_node_ = spin(c, tr("GPUs per node"), 1, 1024);
  nodes_ = spin(c, tr("Nodes"), 1, 1 << 20, "gpus");
  gpu_count_ = new QLabel;
  c->addRow(tr("GPUs"), gpu_count_);
  nvlink_ = dspin(c, tr("NVLink GB/s per GPU"), 0.1, 1e5, 0);
  nic_ = dspin(c, tr("NIC GB/s"), 0.1, 1e5, 1);
  nics_ = spin(c, tr("NICs per node"), 1, 1024);
  connect(cluster_preset_, &QComboBox::currentTextChanged, this, [this](const QString& name) {
    if (loading_) return;
    load_cluster_preset(name);
    changed();
  });

  // Cost source.
  QFormLayout* k = group(layout, tr("Cost source"));
  costs_ = new QComboBox;
  costs_->addItem(tr("analytic model"), QString());
  const QDir traces(bundled_traces_dir());
  for (const QString& f : traces.entryList({"*.json"}, QDir::Files, QDir::Name))
    costs_->addItem(f, traces.filePath(f));
  row(k, tr("Costs"), costs_, "costs");
  auto* open_costs = new QPushButton(tr("Cost database file…"));
  open_costs->setToolTip(tr("clustercast --costs FILE: a cost database measured by `clustercast profile` (traces/ "
                            "holds the bundled ones)"));
  k->addRow(open_costs);
  costs_info_ = new QLabel;
  costs_info_->setWordWrap(true);
  k->addRow(costs_info_);
  coverage_ = new QLabel;
  coverage_->setWordWrap(true);
  k->addRow(coverage_);
  connect(open_costs, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Cost database"), bundled_traces_dir(), tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    try {
      set_costs_file(path);
      changed();
    } catch (const SpecError& e) {
      show_error("costs", QString::fromStdString(e.what()));
    }
  });
  connect(costs_, &QComboBox::currentIndexChanged, this, [this] {
    if (loading_) return;
    try {
      set_costs_file(costs_->currentData().toString());
    } catch (const SpecError& e) {
      costs_info_->setText(QString::fromStdString(e.what()));
    }
    changed();
  });

  // Layout, named as Megatron-LM names the options.
  QFormLayout* l = group(layout, tr("Layout"));
  layout_form_ = l;
  tp_ = spin(l, tr("TP (tensor parallel)"), 1, 1024, "tp");
  cp_ = spin(l, tr("CP (context parallel)"), 1, 1024, "cp");
  cp_->setToolTip(tr("--context-parallel-size: each rank holds 1/CP of every sequence"));
  cp_comm_ = new QComboBox;
  for (const CpCommType t : kCpCommTypes) cp_comm_->addItem(QString::fromUtf8(to_string(t)), static_cast<int>(t));
  cp_comm_->setToolTip(tr("--cp-comm-type: how CP ranks exchange keys and values — p2p: a ring overlapped with "
                          "attention; a2a: all-to-all to a head split (Ulysses); allgather: K and V gathered before "
                          "attention; a2a+p2p: all-to-all inside groups, a ring between them"));
  row(l, tr("CP communication"), cp_comm_, "cp_comm_type");
  connect(cp_comm_, &QComboBox::currentIndexChanged, this, &SetupPanel::changed);
  cp_a2a_ = spin(l, tr("CP all-to-all group"), 0, 65536, "cp_a2a_size");
  cp_a2a_->setSpecialValueText(tr("none"));
  cp_a2a_->setToolTip(tr("a2a+p2p: the all-to-all group size, the first of --hierarchical-context-parallel-sizes; "
                         "the ring runs over CP / this many groups"));
  pp_ = spin(l, tr("PP (pipeline parallel)"), 1, 1024, "pp");
  // Expert layers fold EP x ETP into the same ranks (Megatron-Core; docs/moe.md).
  ep_ = spin(l, tr("EP (expert parallel)"), 1, 1 << 20, "ep");
  ep_->setToolTip(tr("--expert-model-parallel-size: an MoE layer's routed experts spread over EP ranks; "
                     "EP × ETP divides TP × CP × DP"));
  etp_ = spin(l, tr("ETP (expert tensor parallel)"), 0, 1024, "etp");
  etp_->setSpecialValueText(tr("default: TP"));
  etp_->setToolTip(tr("--expert-tensor-parallel-size: each expert's FFN split over ETP ranks; 0: TP, as in "
                      "Megatron-LM"));
  dp_ = spin(l, tr("DP (data parallel)"), 0, 1 << 20, "dp");
  dp_->setToolTip(tr("clustercast --data-parallel-size (Megatron-LM derives it from the world size): model replicas "
                     "that split the global batch; 0: DP follows the GPU count, GPUs / (TP × CP × PP)"));
  sp_ = check(l, tr("Sequence parallel"), "sequence_parallel");
  micro_ = spin(l, tr("Micro batch"), 1, 1 << 16, "micro_batch");
  global_ = spin(l, tr("Global batch"), 1, 1 << 24, "global_batch");
  virtual_ = spin(l, tr("Virtual stages per rank"), 1, 1024, "virtual_stages");
  microbatch_group_ = spin(l, tr("Microbatch group per chunk"), 0, 1 << 24, "microbatch_group_size");
  microbatch_group_->setSpecialValueText(tr("default: PP"));
  microbatch_group_->setToolTip(tr("--microbatch-group-size-per-virtual-pipeline-stage: how many microbatches the "
                                   "interleaved schedule runs on one chunk before the next; 0: PP, Megatron-Core's "
                                   "default"));
  // How the layers split over the stages: evenly, with lighter first/last stages, with the
  // embedding and loss counted as layers, or spelled out by a layout string. The library says
  // which of these cannot stand together; the panel keeps each as the user set it.
  first_ = spin(l, tr("First stage layers (0 = even)"), 0, 100000, "first_stage_layers");
  last_ = spin(l, tr("Last stage layers (0 = even)"), 0, 100000, "last_stage_layers");
  first_->setToolTip(tr("--decoder-first-pipeline-num-layers: layers on the first stage; 0: an even split"));
  last_->setToolTip(tr("--decoder-last-pipeline-num-layers: layers on the last stage; 0: an even split"));
  account_embedding_ = check(l, tr("Count the embedding as a layer"), "account_for_embedding");
  account_embedding_->setToolTip(tr("--account-for-embedding-in-pipeline-split: the input embedding counts as a "
                                    "layer when the layers are split over the stages"));
  account_loss_ = check(l, tr("Count the loss as a layer"), "account_for_loss");
  account_loss_->setToolTip(tr("--account-for-loss-in-pipeline-split: the output layer and loss count as a layer "
                               "when the layers are split over the stages"));
  pipeline_layout_ = new QLineEdit;
  pipeline_layout_->setPlaceholderText(tr("none: split as set above"));
  pipeline_layout_->setToolTip(tr("--pipeline-model-parallel-layout: every virtual stage's layers, e.g. "
                                  "E|(t|)*126L — E the embedding, t a transformer layer, L the loss, | between "
                                  "virtual stages, (…)*N repeats; its stage count / PP sets the virtual stages"));
  row(l, tr("Pipeline layout"), pipeline_layout_, "pipeline_layout");
  // One edit per finished string (Return or leaving the field), not one per keystroke.
  connect(pipeline_layout_, &QLineEdit::editingFinished, this, [this] {
    if (!pipeline_layout_->isModified()) return;
    pipeline_layout_->setModified(false);
    changed();
  });
  recompute_ = new QComboBox;
  recompute_->addItems({"none", "selective", "full"});
  row(l, tr("Recompute"), recompute_, "recompute");
  method_ = new QComboBox;
  method_->addItems({"uniform", "block"});
  row(l, tr("Recompute method"), method_);
  recompute_layers_ = spin(l, tr("Recompute layers"), 1, 100000);
  distopt_ = check(l, tr("Distributed optimizer"), "distributed_optimizer");
  distopt_instances_ = spin(l, tr("Optimizer instances"), 1, 65536, "num_distributed_optimizer_instances");
  overlap_grad_ = check(l, tr("Overlap grad reduce"));
  overlap_param_ = check(l, tr("Overlap param gather"));
  tp_overlap_ = check(l, tr("TP comm overlap"), "tp_comm_overlap");
  grad_bf16_ = check(l, tr("Grad reduce in bf16"));
  fp8_params_ = check(l, tr("FP8 parameters"), "fp8_param_gather");
  fused_loss_ = check(l, tr("Fused cross-entropy"), "cross_entropy_loss_fusion");
  fused_rope_ = check(l, tr("Fused RoPE"), "apply_rope_fusion");
  flash_ = check(l, tr("Flash attention"), "attention");
  precision_ = new QComboBox;
  precision_->addItems({"bf16", "fp16", "fp8", "fp32"});
  row(l, tr("Precision"), precision_, "precision");
  fp8_recipe_ = new QComboBox;
  fp8_recipe_->addItems({to_string(Fp8Recipe::Delayed), to_string(Fp8Recipe::Tensorwise)});
  row(l, tr("FP8 recipe"), fp8_recipe_, "fp8_recipe");
  // MoE run-time switches (MoeRunOptions), shown for a model with experts.
  dispatcher_ = new QComboBox;
  for (const TokenDispatcher d : kDispatchers) dispatcher_->addItem(QString::fromUtf8(to_string(d)), static_cast<int>(d));
  dispatcher_->setToolTip(tr("--moe-token-dispatcher-type: allgather (Megatron-LM's default), alltoall, or flex "
                             "(DeepEP / HybridEP kernels: a token crosses the network once per node it reaches)"));
  row(l, tr("MoE token dispatcher"), dispatcher_, "moe_token_dispatcher_type");
  connect(dispatcher_, &QComboBox::currentIndexChanged, this, &SetupPanel::changed);
  flex_backend_ = new QComboBox;
  flex_backend_->setObjectName("moe_flex_dispatcher_backend");
  for (const FlexBackend b : kFlexBackends)
    flex_backend_->addItem(QString::fromUtf8(to_string(b)), static_cast<int>(b));
  flex_backend_->setToolTip(tr("--moe-flex-dispatcher-backend: the flex dispatcher's kernels, deepep (Megatron-LM's "
                               "default) or hybridep (also spans a multi-node NVLink domain); read with the flex "
                               "dispatcher only"));
  row(l, tr("MoE flex backend"), flex_backend_, "moe_flex_dispatcher_backend");
  connect(flex_backend_, &QComboBox::currentIndexChanged, this, &SetupPanel::changed);
  grouped_gemm_ = check(l, tr("MoE grouped GEMM"), "moe_grouped_gemm");
  grouped_gemm_->setToolTip(tr("--moe-grouped-gemm: one grouped GEMM for a rank's experts"));
  capacity_factor_ = dspin(l, tr("Expert capacity factor"), 0, 1000, 2);
  fields_["moe_expert_capacity_factor"] = capacity_factor_;
  capacity_factor_->setSpecialValueText(tr("none (dropless)"));
  capacity_factor_->setToolTip(tr("--moe-expert-capacity-factor: tokens an expert takes, as a multiple of its even "
                                  "share; none: dropless"));
  pad_to_capacity_ = check(l, tr("Pad expert input to capacity"), "moe_pad_expert_input_to_capacity");
  pad_to_capacity_->setToolTip(tr("--moe-pad-expert-input-to-capacity (needs a capacity factor)"));
  load_imbalance_ = dspin(l, tr("MoE load imbalance"), 0, 1000, 2);
  fields_["moe_load_imbalance"] = load_imbalance_;
  load_imbalance_->setSpecialValueText(tr("default"));
  load_imbalance_->setToolTip(tr("--moe-load-imbalance: tokens of the busiest EP rank over the mean; default: "
                                 "1.0 padded to capacity, else %1 for dropless routing (docs/moe.md)")
                                  .arg(kDroplessLoadImbalance));
  shared_expert_overlap_ = check(l, tr("Overlap the shared expert"), "moe_shared_expert_overlap");
  shared_expert_overlap_->setToolTip(tr("--moe-shared-expert-overlap: the shared experts compute while the routed "
                                        "tokens are dispatched"));
  overlap_ep_comm_ = check(l, tr("Overlap EP communication"), "overlap_moe_expert_parallel_comm");
  overlap_ep_comm_->setToolTip(tr("--overlap-moe-expert-parallel-comm: the EP dispatch and combine overlap with "
                                  "another micro batch's computation"));
  fields_["layout"] = tp_;
  for (QComboBox* box : {recompute_, method_, precision_, fp8_recipe_})
    connect(box, &QComboBox::currentIndexChanged, this, &SetupPanel::changed);

  // Run.
  QFormLayout* r = group(layout, tr("Run"));
  tokens_b_ = dspin(r, tr("Token budget (billions, 0 = none)"), 0, 1e6, 1);
  every_rank_ = check(r, tr("Every rank (each DP replica)"));

  // What a GPU holds beyond the model's tensors (sim/memory_model.h MemoryReserve).
  QFormLayout* mr = group(layout, tr("Memory reserve"));
  context_gib_ = dspin(mr, tr("CUDA context (GiB)"), 0, 1024, 2);
  comm_gib_ = dspin(mr, tr("NCCL buffers (GiB)"), 0, 1024, 2);
  fragmentation_ = dspin(mr, tr("Fragmentation (× activations)"), 0, 10, 2);
  headroom_ = dspin(mr, tr("Headroom (fraction of HBM)"), 0, 0.9, 2);
  layout->addStretch(1);
  describe_fields();
  guard_wheel(this);  // the wheel scrolls the panel, never a field the cursor passes over

  set_project(project_from_presets("gpt3-175b", "dgx-a100-80gb", 1024));
}

void SetupPanel::row(QFormLayout* form, const QString& label, QWidget* editor, const std::string& field) {
  form->addRow(label, editor);
  forms_[editor] = form;
  if (!field.empty()) fields_[field] = editor;
}

QSpinBox* SetupPanel::spin(QFormLayout* form, const QString& label, int min, int max, const std::string& field) {
  auto* s = new QSpinBox;
  s->setRange(min, max);
  s->setKeyboardTracking(false);  // typing "128" is one edit, not three
  row(form, label, s, field);
  connect(s, &QSpinBox::valueChanged, this, &SetupPanel::changed);
  return s;
}

QDoubleSpinBox* SetupPanel::dspin(QFormLayout* form, const QString& label, double min, double max, int decimals) {
  auto* s = new QDoubleSpinBox;
  s->setRange(min, max);
  s->setDecimals(decimals);
  s->setKeyboardTracking(false);
  row(form, label, s);
  connect(s, &QDoubleSpinBox::valueChanged, this, &SetupPanel::changed);
  return s;
}

QCheckBox* SetupPanel::check(QFormLayout* form, const QString& label, const std::string& field) {
  auto* b = new QCheckBox(label);
  form->addRow(b);
  forms_[b] = form;
  if (!field.empty()) fields_[field] = b;
  connect(b, &QCheckBox::toggled, this, &SetupPanel::changed);
  return b;
}

QWidget* SetupPanel::field(const std::string& name) const {
  const auto it = fields_.find(name);
  return it == fields_.end() ? nullptr : it->second;
}

void SetupPanel::changed() {
  if (loading_) return;
  // The GPU count follows nodes x GPUs per node once the user edits either; until then it is
  // the project's own, which need not fill whole nodes (`simulate --gpus 2` on 8-GPU nodes).
  if (sender() == nodes_ || sender() == gpus_per_node_) gpu_total_ = nodes_->value() * gpus_per_node_->value();
  update_counts();
  update_context_parallel_rows();
  update_moe_rows();
  emit edited();
}

void SetupPanel::update_counts() {
  gpu_count_->setText(QString::number(gpu_total_));
  // Auto DP shows the value the resolver will take, from the same rule (sim/layout_rules.h).
  const std::optional<int> dp = data_parallel_size(gpu_total_, tp_->value(), cp_->value(), pp_->value());
  const QString division =
      QStringLiteral("%1 / (%2 × %3 × %4)").arg(gpu_total_).arg(tp_->value()).arg(cp_->value()).arg(pp_->value());
  dp_->setSpecialValueText(dp ? tr("auto: %1 = %2").arg(division).arg(*dp) : tr("auto: %1 is not whole").arg(division));
}

void SetupPanel::update_context_parallel_rows() {
  // The all-to-all group size is read with a2a+p2p only; the row shows while that type is
  // chosen, or while it holds a size (the library then says why it is refused).
  layout_form_->setRowVisible(cp_a2a_, cp_comm_->currentData().toInt() == static_cast<int>(CpCommType::AllToAllP2P) ||
                                           cp_a2a_->value() != 0);
  // The optimizer's instances apply with the distributed optimizer only (Project::request); the
  // field keeps its value while greyed out.
  distopt_instances_->setEnabled(distopt_->isChecked());
}

void SetupPanel::update_moe_rows() {
  // A dense model's setup stays as short as before: the expert rows show for a model with
  // experts, or while one holds a value (the library then says why it is refused); likewise MLA.
  const bool moe = experts_->value() > 0;
  for (QSpinBox* s : {topk_, expert_ffn_, shared_ffn_, router_groups_, router_group_topk_})
    model_form_->setRowVisible(s, moe || s->value() != 0);
  model_form_->setRowVisible(moe_layer_freq_, moe || moe_layer_freq_->text() != QStringLiteral("1"));
  model_form_->setRowVisible(score_, moe || score_->currentIndex() != 0);
  const bool mla = mla_->isChecked();
  for (QSpinBox* s : {q_lora_, kv_lora_, qk_head_, qk_rope_head_, v_head_}) model_form_->setRowVisible(s, mla || s->value() != 0);
  for (QWidget* w : std::initializer_list<QWidget*>{dispatcher_, flex_backend_, grouped_gemm_, capacity_factor_,
                                                    pad_to_capacity_, load_imbalance_, shared_expert_overlap_,
                                                    overlap_ep_comm_})
    layout_form_->setRowVisible(w, moe || project().config.moe != MoeRunOptions{});
  // The backend is read with the flex dispatcher only; it stays editable while it holds another
  // backend than the default, so the library's refusal of that can be fixed where it is shown.
  flex_backend_->setEnabled(
      dispatcher_->currentData().toInt() == static_cast<int>(TokenDispatcher::Flex) ||
      flex_backend_->currentData().toInt() != static_cast<int>(MoeRunOptions{}.flex_backend));

  // Total and per-token active parameters, as `simulate` prints them (ModelSpec's counts).
  const ModelSpec model = project().model;
  try {
    model.validate("model");
    parameters_->setText(tr("%1 total, %2 active")
                             .arg(parameter_count(model.total_parameters()), parameter_count(model.active_parameters())));
  } catch (const SpecError&) {
    parameters_->setText(tr("— (the model is refused, see below)"));
  }
}

void SetupPanel::read_moe_layer_freq() {
  if (!moe_layer_freq_->isModified()) return;
  moe_layer_freq_->setModified(false);
  // An integer, or 0/1 entries separated by commas or spaces, each read by the one reader of
  // numbers (sim/numbers.h); what the entries mean is the model's to check (ModelSpec::validate).
  const QStringList parts = moe_layer_freq_->text().split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts);
  try {
    if (parts.isEmpty()) fail_at("--moe-layer-freq", "--moe-layer-freq is empty; give N or one 0/1 per layer");
    std::vector<int> entries;
    for (const QString& part : parts)
      entries.push_back(static_cast<int>(read_integer(part.toStdString(), "--moe-layer-freq", 0, 1 << 20)));
    if (parts.size() == 1 && !moe_layer_freq_->text().contains(',')) {
      model_base_.moe.layer_freq = entries.front();
      model_base_.moe.layer_pattern.clear();
    } else {
      model_base_.moe.layer_pattern = entries;
    }
  } catch (const SpecError& e) {
    show_error("moe_layer_freq", QString::fromStdString(e.what()));
    return;
  }
  changed();
}

void SetupPanel::load_model_preset(const QString& name) {
  Project p = project();
  p.model_preset = name.toStdString();
  replace_model(p, load_model(p.model_preset));
  set_project(p);
}

void SetupPanel::load_cluster_preset(const QString& name) {
  Project p = project();
  p.cluster_preset = name.toStdString();
  p.cluster = load_cluster(p.cluster_preset);
  set_project(p);
}

void SetupPanel::import_hf_config(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  if (!in) fail("'{}' cannot be opened", path.toStdString());
  std::ostringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) fail("'{}' is not valid JSON", path.toStdString());
  Project p = project();
  // The file's position limit is the longest sequence the model supports; the length the user
  // trains at is the one the setup already shows, which the import leaves as it is.
  replace_model(p, model_from_hf_config(doc, path.toStdString(), p.model.seq_length).model);
  p.model_preset.clear();
  set_project(p);
  emit edited();
}

void SetupPanel::set_costs_file(const QString& path) {
  coverage_->clear();
  if (path.isEmpty()) {
    costs_info_->setText(tr("The analytic model of the cluster's GPU and fabrics."));
    return;
  }
  const CostDatabase db = read_cost_database(path.toStdString());
  const auto& fp = db.machine;
  const QString machine = fp.backend == "cuda"
                              ? QStringLiteral("%1 (%2 SMs), CUDA %3, NCCL %4")
                                    .arg(QString::fromStdString(fp.gpu_name))
                                    .arg(fp.gpu_sms)
                                    .arg(QString::fromStdString(fp.cuda_version), QString::fromStdString(fp.nccl_version))
                              : QStringLiteral("%1, %2 cores, %3 GiB")
                                    .arg(QString::fromStdString(fp.cpu_model))
                                    .arg(fp.cpu_cores)
                                    .arg(fp.memory_gib, 0, 'f', 0);
  costs_info_->setText(tr("Measured %1 on %2 (%3 backend, %4): %5 ops, %6 collective curves.")
                           .arg(QString::fromStdString(db.created), machine, QString::fromStdString(fp.backend),
                                QString::fromStdString(db.dtype))
                           .arg(db.ops.size())
                           .arg(db.collectives.size()));
  const int index = costs_->findData(path);
  loading_ = true;
  if (index >= 0) {
    costs_->setCurrentIndex(index);
  } else {
    costs_->addItem(QFileInfo(path).fileName(), path);
    costs_->setCurrentIndex(costs_->count() - 1);
  }
  loading_ = false;
}

void SetupPanel::set_coverage(const QString& text) { coverage_->setText(text); }

void SetupPanel::show_error(const std::string& field_name, const QString& message) {
  if (error_widget_) {
    error_widget_->setStyleSheet({});
    if (QFormLayout* form = forms_[error_widget_]) {
      const QFormLayout::TakeRowResult row = form->takeRow(error_);  // the label itself stays ours
      delete row.labelItem;
      delete row.fieldItem;
    }
    error_widget_ = nullptr;
  }
  if (message.isEmpty()) {
    error_->hide();
    return;
  }
  QWidget* w = field(field_name);
  if (!w) w = tp_;
  QFormLayout* form = forms_[w];
  int row = -1;
  QFormLayout::ItemRole role;
  form->getWidgetPosition(w, &row, &role);
  form->insertRow(row + 1, error_);
  error_->setText(message);
  error_->show();
  w->setStyleSheet("border: 1px solid #b00020;");
  error_widget_ = w;
}

QString SetupPanel::error_text() const { return error_->isVisible() || error_widget_ ? error_->text() : QString(); }

}  // namespace cc::gui
