// memory_page.h — the Memory tab: per-stage stacked bars (weights, gradients, optimizer,
// activations, other) against the usable-HBM line, built from a MemoryTable; and memory
// over the iteration per stage (the library's memory_timeline), its peak marked.
#pragma once

#include <vector>

#include <QWidget>

#include "sim/memory_timeline.h"

class QChartView;
class QTableView;

namespace cc::gui {

class MemoryTable;

class MemoryPage : public QWidget {
  Q_OBJECT
 public:
  MemoryPage(MemoryTable* table, QWidget* parent = nullptr);
  void set_curves(const std::vector<StageMemoryCurve>& curves, double usable_gib);
  QChartView* stage_chart() const { return stages_; }
  QChartView* curve_chart() const { return curves_; }
  // Stacked GiB per stage as the bar chart holds them (tests compare with the library's).
  std::vector<double> drawn_totals_gib() const;

 private:
  void rebuild_bars();

  MemoryTable* table_;
  QChartView* stages_;
  QChartView* curves_;
  QTableView* numbers_;
};

}  // namespace cc::gui
