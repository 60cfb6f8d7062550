// memory_table.h — per-stage GPU memory of a result (SimResult::memory, the library's
// memory model) as a table model in GiB: one row per pipeline stage, one column per part.
// The memory chart is built from this model, so what the chart shows is what it holds. An MoE
// model adds two columns: the routed-expert parameters one GPU of the stage holds
// (stage_expert_parameters) and their bytes of weights, gradients and optimizer state
// (MemoryBreakdown::experts), which are inside those three columns, not added to the total.
#pragma once

#include <memory>

#include <QAbstractTableModel>

#include "sim/simulator.h"

namespace cc::gui {

class MemoryTable : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Weights,
    Gradients,
    Optimizer,
    Activations,
    Workspaces,
    Other,
    Total,
    ExpertParameters,
    ExpertState,
    ColumnCount
  };
  static constexpr int kParts = 6;  // Weights..Other stack up to Total
  using QAbstractTableModel::QAbstractTableModel;

  void set_result(std::shared_ptr<const SimResult> result);
  double gib(int stage, int column) const;
  double expert_parameters(int stage) const;  // routed-expert parameters per GPU of the stage
  bool has_experts() const { return result_ && result_->model.moe.enabled(); }
  double usable_gib() const { return result_ ? result_->usable_gib : 0; }
  int peak_stage() const { return result_ ? result_->memory.peak_stage : 0; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const SimResult> result_;
};

}  // namespace cc::gui
