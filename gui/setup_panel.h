// setup_panel.h — the Setup dock: model (preset, every shape field with the experts, MLA and MTP
// fields and the parameter counts, HuggingFace import), cluster (preset, GPU, node figures), cost
// source (analytic or a cost database), layout (Megatron-LM's options, context parallelism,
// pipeline splits, expert parallelism and the MoE switches included), token budget and memory
// reserve. It edits a Project and says when it changed; a bad combination is explained next to
// the field it names, in the library's words.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <QWidget>

#include "gui/project.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace cc::gui {

class SetupPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SetupPanel(QWidget* parent = nullptr);

  Project project() const;
  void set_project(const Project& p);  // emits nothing
  // Shows `message` under the widget of `field` (see setup_field_of); empty clears it.
  void show_error(const std::string& field, const QString& message);
  QString error_text() const;
  QWidget* error_field_widget() const { return error_widget_; }
  QWidget* field(const std::string& name) const;  // for tests: the editor of a field
  void set_coverage(const QString& text);
  void import_hf_config(const QString& path);     // throws SpecError
  void set_costs_file(const QString& path);       // "" = analytic; throws SpecError

 signals:
  void edited();

 private:
  // A labelled editor in `form`, found by `field` (show_error, field()) when one is given.
  void row(QFormLayout* form, const QString& label, QWidget* editor, const std::string& field = {});
  QSpinBox* spin(QFormLayout* form, const QString& label, int min, int max, const std::string& field = {});
  QDoubleSpinBox* dspin(QFormLayout* form, const QString& label, double min, double max, int decimals);
  QCheckBox* check(QFormLayout* form, const QString& label, const std::string& field = {});
  void load_model_preset(const QString& name);
  void load_cluster_preset(const QString& name);
  void update_counts();  // the GPU count, and auto DP's value beside it
  void update_context_parallel_rows();
  void update_moe_rows();  // MoE and MLA rows show for a model that has them (or holds a value)
  void read_moe_layer_freq();  // the layer-frequency field, when the user finishes it
  void changed();
  void describe_fields();  // the tooltips not set beside their field (setup_tooltips.cpp)

  bool loading_ = false;
  std::string model_name_, cluster_name_;
  ModelSpec model_base_;      // fields the panel does not show (norm, positions, ...)
  ClusterSpec cluster_base_;
  MoeRunOptions moe_base_;    // MoE switches the panel does not show (load balancing, drop policy)
  std::optional<std::string> framework_;  // the stack the project names (none: the database's)
  MegatronSwitches switches_;             // the launch line's or file's Megatron-LM switches (no field)
  int gpu_total_ = 8;  // the project's GPU count; nodes x GPUs per node once the user edits either
  std::map<std::string, QWidget*> fields_;
  std::map<QWidget*, QFormLayout*> forms_;

  QComboBox* model_preset_;
  QSpinBox *layers_, *hidden_, *heads_, *groups_, *ffn_, *seq_, *vocab_;
  QComboBox* activation_;  // the MLP's, one entry per Activation in its order
  // Mixture of experts, multi-latent attention and MTP (sim/moe_spec.h), in the Model group.
  QFormLayout* model_form_;
  QSpinBox *experts_, *topk_, *expert_ffn_, *shared_ffn_, *router_groups_, *router_group_topk_;
  QLineEdit* moe_layer_freq_;  // an integer N, or one 0/1 per layer
  QComboBox* score_;
  QCheckBox* mla_;
  QSpinBox *q_lora_, *kv_lora_, *qk_head_, *qk_rope_head_, *v_head_, *mtp_;
  QLabel* parameters_;
  QComboBox* cluster_preset_;
  QComboBox* gpu_;
  std::vector<GpuSpec> gpus_;  // gpu_'s items
  QDoubleSpinBox *hbm_, *nvlink_, *nic_;
  QSpinBox *gpus_per_node_, *nodes_, *nics_;
  QLabel* gpu_count_;
  QComboBox* costs_;
  QLabel* costs_info_;
  QLabel* coverage_;
  QSpinBox *tp_, *cp_, *cp_a2a_, *pp_, *dp_, *micro_, *global_, *virtual_, *first_, *last_, *recompute_layers_,
      *distopt_instances_;
  QSpinBox* microbatch_group_;
  QLineEdit* pipeline_layout_;
  QCheckBox *account_embedding_, *account_loss_;
  QComboBox* cp_comm_;
  QSpinBox *ep_, *etp_;
  QComboBox *dispatcher_, *flex_backend_;  // the backend: enabled with the flex dispatcher
  QCheckBox *grouped_gemm_, *pad_to_capacity_, *shared_expert_overlap_, *overlap_ep_comm_;
  QDoubleSpinBox *capacity_factor_, *load_imbalance_;
  QFormLayout* layout_form_;
  QCheckBox *sp_, *distopt_, *overlap_grad_, *overlap_param_, *tp_overlap_, *grad_bf16_, *fp8_params_, *fused_loss_, *fused_rope_, *flash_, *every_rank_;
  QComboBox *recompute_, *method_, *precision_, *fp8_recipe_;
  QDoubleSpinBox* tokens_b_;
  QDoubleSpinBox *context_gib_, *comm_gib_, *fragmentation_, *headroom_;
  QLabel* error_;
  QWidget* error_widget_ = nullptr;
};

}  // namespace cc::gui
