// time_scale.h — the timeline's mapping between simulated time (ns) and pixels, and the
// ruler's tick positions: a plain struct with no Qt, tested with data tables.
#pragma once

#include <vector>

namespace cc::gui {

struct TimeScale {
  double origin_ns = 0;  // time at pixel 0
  double ns_per_px = 1;

  double to_px(double t_ns) const { return (t_ns - origin_ns) / ns_per_px; }
  double to_time(double px) const { return origin_ns + px * ns_per_px; }
  // Shows [t0, t1] across `width_px` pixels.
  void fit(double t0_ns, double t1_ns, double width_px);
  // factor > 1 zooms in; the time under pixel `px` stays under it. Zoom is clamped to
  // [min_ns_per_px, max_ns_per_px] so repeated wheel turns cannot overflow or collapse.
  void zoom_around(double px, double factor, double min_ns_per_px = 1e-3, double max_ns_per_px = 1e15);
  void pan_px(double dx_px) { origin_ns -= dx_px * ns_per_px; }
};

struct Tick {
  double time_ns;
  double px;
};

// Ticks at a 1-2-5 step no closer than `min_spacing_px`, covering [0, width_px].
std::vector<Tick> ruler_ticks(const TimeScale& scale, double width_px, double min_spacing_px);
// The tick step ruler_ticks() picks, in ns.
double tick_step_ns(const TimeScale& scale, double min_spacing_px);

}  // namespace cc::gui
