// axis_ticks.h — a chart value axis that spans exactly [0, max] with ticks at round
// 1-2-5 steps (QValueAxis::applyNiceNumbers would stretch the range past the data instead).
#pragma once

#include <QValueAxis>

#include "gui/time_scale.h"

namespace cc::gui {

inline void set_round_ticks(QValueAxis* axis, double max, int target_ticks = 6) {
  axis->setRange(0, max);
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(tick_step_ns(TimeScale{0, max / target_ticks}, 1));  // the ruler's 1-2-5 rule
}

}  // namespace cc::gui
