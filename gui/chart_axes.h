// chart_axes.h — the axes of the GUI's charts: emptying a chart before it is rebuilt, and a
// value axis spanning exactly [0, max] with ticks at round 1-2-5 steps
// (QValueAxis::applyNiceNumbers would stretch the range past the data instead).
#pragma once

#include <QChart>
#include <QValueAxis>

#include "gui/time_scale.h"

namespace cc::gui {

// Removes (and deletes) every series and axis.
inline void clear_chart(QChart* c) {
  c->removeAllSeries();
  for (QAbstractAxis* axis : c->axes()) {
    c->removeAxis(axis);
    delete axis;
  }
}

inline void set_round_ticks(QValueAxis* axis, double max, int target_ticks = 6) {
  axis->setRange(0, max);
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(tick_step_ns(TimeScale{0, max / target_ticks}, 1));  // the ruler's 1-2-5 rule
}

}  // namespace cc::gui
