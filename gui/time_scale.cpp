#include "gui/time_scale.h"

#include <algorithm>
#include <cmath>

namespace cc::gui {

void TimeScale::fit(double t0_ns, double t1_ns, double width_px) {
  origin_ns = t0_ns;
  ns_per_px = (t1_ns > t0_ns && width_px > 0) ? (t1_ns - t0_ns) / width_px : 1;
}

void TimeScale::zoom_around(double px, double factor, double min_ns_per_px, double max_ns_per_px) {
  if (!(factor > 0)) return;
  const double anchor = to_time(px);
  ns_per_px = std::clamp(ns_per_px / factor, min_ns_per_px, max_ns_per_px);
  origin_ns = anchor - px * ns_per_px;
}

double tick_step_ns(const TimeScale& scale, double min_spacing_px) {
  const double min_step = std::max(scale.ns_per_px * min_spacing_px, 1e-9);
  double decade = std::pow(10.0, std::floor(std::log10(min_step)));
  for (;;) {
    for (double m : {1.0, 2.0, 5.0})
      if (m * decade >= min_step * (1 - 1e-12)) return m * decade;
    decade *= 10;
  }
}

std::vector<Tick> ruler_ticks(const TimeScale& scale, double width_px, double min_spacing_px) {
  std::vector<Tick> ticks;
  const double step = tick_step_ns(scale, min_spacing_px);
  const double first = std::ceil(scale.to_time(0) / step);
  for (double k = first;; k += 1) {
    const double t = k * step;
    const double px = scale.to_px(t);
    if (px > width_px + 1e-9) break;
    ticks.push_back({t, px});
  }
  return ticks;
}

}  // namespace cc::gui
