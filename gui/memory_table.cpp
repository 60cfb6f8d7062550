#include "gui/memory_table.h"

#include "sim/memory_model.h"
#include "sim/units.h"

namespace cc::gui {

void MemoryTable::set_result(std::shared_ptr<const SimResult> result) {
  beginResetModel();
  result_ = std::move(result);
  endResetModel();
}

double MemoryTable::gib(int stage, int column) const {
  const MemoryBreakdown& b = result_->memory.stages[static_cast<std::size_t>(stage)].bytes;
  switch (column) {
    case Weights: return b.weights / kGiB;
    case Gradients: return b.gradients / kGiB;
    case Optimizer: return b.optimizer / kGiB;
    case Activations: return b.activations / kGiB;
    case Workspaces: return b.workspaces / kGiB;
    case Other: return b.other / kGiB;
    case Total: return b.total() / kGiB;
    case ExpertState: return b.experts / kGiB;
    default: return 0;
  }
}

double MemoryTable::expert_parameters(int stage) const {
  return static_cast<double>(stage_expert_parameters(result_->model, result_->config, stage));
}

int MemoryTable::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !result_ ? 0 : static_cast<int>(result_->memory.stages.size());
}

int MemoryTable::columnCount(const QModelIndex& parent) const {
  if (parent.isValid()) return 0;
  return has_experts() ? ColumnCount : ExpertParameters;
}

QVariant MemoryTable::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
  if (index.column() == ExpertParameters) {
    if (role == Qt::DisplayRole) return QStringLiteral("%1 B").arg(expert_parameters(index.row()) / 1e9, 0, 'f', 2);
    if (role == Qt::UserRole) return expert_parameters(index.row());
    return {};
  }
  if (role == Qt::DisplayRole) return QString::number(gib(index.row(), index.column()), 'f', 2);
  if (role == Qt::UserRole) return gib(index.row(), index.column());
  return {};
}

QVariant MemoryTable::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role == Qt::ToolTipRole && orientation == Qt::Horizontal && section == ExpertParameters)
    return tr("Routed-expert parameters one GPU of the stage holds: its MoE layers x experts / EP x one expert / ETP. "
              "Their weights and gradients are in those columns; their optimizer state is sharded over the "
              "expert-data-parallel group.");
  if (role == Qt::ToolTipRole && orientation == Qt::Horizontal && section == Workspaces)
    return tr("GiB of cuBLAS workspaces that PyTorch and Transformer Engine keep allocated from the first GEMM on "
              "(sized by the GPU's compute capability and the software stack).");
  if (role == Qt::ToolTipRole && orientation == Qt::Horizontal && section == ExpertState)
    return tr("GiB of the routed experts' weights, gradients and optimizer state (over expert DP): a share of those "
              "three columns, not added to the total.");
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return QStringLiteral("stage %1").arg(section);
  static const char* names[] = {"weights", "gradients", "optimizer", "activations", "workspaces", "other", "total",
                                "expert params", "expert state"};
  return section >= 0 && section < ColumnCount ? QVariant(QString::fromLatin1(names[section])) : QVariant();
}

}  // namespace cc::gui
