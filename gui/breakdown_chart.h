// breakdown_chart.h — the iteration time split into compute, recompute, exposed TP / PP /
// DP communication, optimizer and bubble (SimResult::breakdown), as one stacked bar.
#pragma once

#include <QChartView>

#include "sim/simulator.h"

namespace cc::gui {

class BreakdownChart : public QChartView {
  Q_OBJECT
 public:
  explicit BreakdownChart(QWidget* parent = nullptr);
  void set_breakdown(const TimeBreakdown& breakdown);
  // Seconds per part as drawn, in stacking order (tests compare them with the library's).
  std::vector<double> drawn_seconds() const;
};

}  // namespace cc::gui
