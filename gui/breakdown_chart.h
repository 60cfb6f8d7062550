// breakdown_chart.h — the iteration time split into compute, recompute, exposed TP / PP /
// DP communication, optimizer and bubble (SimResult::breakdown), as one stacked bar.
#pragma once

#include <vector>

#include <QChartView>
#include <QColor>
#include <QStringList>

#include "sim/simulator.h"

namespace cc::gui {

// The parts of TimeBreakdown in stacking order, with their legend name and colour.
struct BreakdownPart {
  const char* name;
  double TimeBreakdown::*field;
  QColor color;
};
const std::vector<BreakdownPart>& breakdown_parts();

class BreakdownChart : public QChartView {
  Q_OBJECT
 public:
  explicit BreakdownChart(QWidget* parent = nullptr);
  void set_breakdown(const TimeBreakdown& breakdown);
  // Seconds per part as drawn, in stacking order (tests compare them with the library's).
  std::vector<double> drawn_seconds() const;
  // The parts the legend lists (those that take time), in stacking order.
  const QStringList& legend_parts() const { return legend_parts_; }

 private:
  QStringList legend_parts_;
};

}  // namespace cc::gui
