#include "profiler/latency_bandwidth_fit.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "sim/error.h"

namespace cc::profiler {

namespace {

int distinct_sizes(const CollectiveCurve& curve) {
  std::vector<double> sizes;
  for (const CollectivePoint& p : curve.points) sizes.push_back(p.bytes);
  std::sort(sizes.begin(), sizes.end());
  return static_cast<int>(std::unique(sizes.begin(), sizes.end()) - sizes.begin());
}

void check_fittable(const CollectiveCurve& curve) {
  const char* kind = to_string(curve.kind);
  if (curve.group_size < 2)
    fail("collective fit for {} on {} ranks: a collective needs a group of at least 2 ranks", kind,
         curve.group_size);
  for (const CollectivePoint& p : curve.points)
    if (!(p.bytes > 0) || !(p.time_s > 0) || !std::isfinite(p.time_s))
      fail("collective fit for {} on {} ranks: the point of {} bytes took {} s; sizes and times must be positive",
           kind, curve.group_size, p.bytes, p.time_s);
  const int sizes = distinct_sizes(curve);
  if (sizes < 2)
    fail("collective fit for {} on {} ranks needs at least two message sizes, got {}", kind, curve.group_size,
         sizes);
}

}  // namespace

void fit_latency_bandwidth(CollectiveCurve& curve) {
  check_fittable(curve);
  const double factor = bus_bandwidth_factor(curve.kind, curve.group_size);
  // Model t = a + b·x with x = bytes·factor and b = 1 / bus bandwidth. Dividing each
  // equation by its measured time makes the residuals relative (weight 1/t²): the
  // unknowns multiply v = 1/t and u = x/t, and every target is 1.
  double svv = 0, suv = 0, suu = 0, sv = 0, su = 0;
  for (const CollectivePoint& p : curve.points) {
    const double v = 1.0 / p.time_s;
    const double u = p.bytes * factor / p.time_s;
    svv += v * v;
    suv += u * v;
    suu += u * u;
    sv += v;
    su += u;
  }
  const double det = svv * suu - suv * suv;
  double latency = (sv * suu - su * suv) / det;
  double seconds_per_byte = (su * svv - sv * suv) / det;
  if (latency < 0) {  // a negative latency is noise, not physics: best line through the origin
    latency = 0;
    seconds_per_byte = su / suu;
  }
  if (!(seconds_per_byte > 0)) {
    // The times do not grow with size: a latency-bound range, or noise larger than the
    // transfer time (a loaded machine). A measurement, not bad input — keep the sweep: the
    // smallest message's time is the latency, and the largest message's bus bandwidth
    // (which includes that latency) a lower bound on the bandwidth. max_residual says how
    // poor a line this is; the simulator prices inside the range from the points.
    const auto smallest = std::min_element(curve.points.begin(), curve.points.end(),
                                           [](const CollectivePoint& a, const CollectivePoint& b) { return a.bytes < b.bytes; });
    const auto largest = std::max_element(curve.points.begin(), curve.points.end(),
                                          [](const CollectivePoint& a, const CollectivePoint& b) { return a.bytes < b.bytes; });
    latency = smallest->time_s;
    seconds_per_byte = largest->time_s / (largest->bytes * factor);
  }
  curve.latency_s = latency;
  curve.bus_bandwidth_gbs = 1.0 / seconds_per_byte / 1e9;
  curve.max_residual = 0;
  for (const CollectivePoint& p : curve.points)
    curve.max_residual = std::max(curve.max_residual, std::abs(fitted_time(curve, p.bytes) - p.time_s) / p.time_s);
}

double fitted_time(const CollectiveCurve& curve, double bytes) {
  return curve.latency_s +
         bytes * bus_bandwidth_factor(curve.kind, curve.group_size) / (curve.bus_bandwidth_gbs * 1e9);
}

std::string format_sweep_table(const CollectiveCurve& curve, const std::string& transport) {
  std::string table = fmt::format("# {} on {} ranks ({})\n", to_string(curve.kind), curve.group_size, transport);
  table += fmt::format("{:>12} {:>15} {:>6} {:>10} {:>11} {:>11} {:>10} {:>8}\n", "size(B)", "count(elements)",
                       "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "fit(us)", "resid(%)");
  for (const CollectivePoint& p : curve.points) {
    const double fit = fitted_time(curve, p.bytes);
    // The sweep always moves float32 elements (collective_sweep.h).
    table += fmt::format("{:>12.0f} {:>15} {:>6} {:>10.2f} {:>11.2f} {:>11.2f} {:>10.2f} {:>8.1f}\n", p.bytes,
                         p.count, "float", p.time_s * 1e6, p.algbw_gbs, p.busbw_gbs, fit * 1e6,
                         (fit - p.time_s) / p.time_s * 100);
  }
  table += fmt::format("# fit: latency {:.2f} us, bus bandwidth {:.2f} GB/s, max residual {:.1f}%\n",
                       curve.latency_s * 1e6, curve.bus_bandwidth_gbs, curve.max_residual * 100);
  return table;
}

}  // namespace cc::profiler
