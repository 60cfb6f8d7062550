// chart_axes.h — the axes of the GUI's charts: emptying a chart before it is rebuilt, a value
// axis spanning exactly [0, max] with ticks at round 1-2-5 steps (QValueAxis::applyNiceNumbers
// would stretch the range past the data instead), and numbered bar groups labelled sparsely.
#pragma once

#include <algorithm>

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

// An axis under `count` groups of bars (a QBarSeries draws group i at x = i), numbered from 0
// every 1, 2, 5, 10, ... groups so that at most `max_labels` numbers show. A QBarCategoryAxis
// labels every group and elides a number wider than its group ("1…" for stages 10 to 15 of 16
// in half a 1280-pixel window).
inline void set_group_number_ticks(QValueAxis* axis, int count, int max_labels = 8) {
  axis->setRange(-0.5, count - 0.5);
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(std::max(1.0, tick_step_ns(TimeScale{0, double(count) / max_labels}, 1)));
  axis->setLabelFormat("%.0f");
  axis->setMinorTickCount(0);
  axis->setGridLineVisible(false);  // a line through the middle of each labelled group would cut its bars
}

}  // namespace cc::gui
