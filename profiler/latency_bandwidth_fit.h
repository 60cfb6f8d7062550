// latency_bandwidth_fit.h — turns a measured collective sweep into the two numbers the
// simulator prices collectives with: a fixed latency and a bus bandwidth, fitted to
// time(bytes) = latency + bytes · bus_bandwidth_factor / bus_bandwidth, and prints the
// sweep the way nccl-tests does so a person can judge the fit row by row. Pure functions:
// no MPI, so the fit is unit-tested on synthetic curves.
#pragma once

#include <string>

#include "sim/cost_database.h"

namespace cc::profiler {

// Fills curve.latency_s, bus_bandwidth_gbs and max_residual from curve.points. Weighted
// least squares on relative error, so 1 KiB and 256 MiB points weigh alike; a negative
// latency is refitted at zero. When the times do not grow with size (latency-bound, or
// noisier than the transfer), the latency is the smallest message's time and the bandwidth
// the largest message's, a lower bound. Throws SpecError with fewer than two distinct sizes.
void fit_latency_bandwidth(CollectiveCurve& curve);

// The fitted model's time in seconds for a message of `bytes` (nccl-tests "size").
double fitted_time(const CollectiveCurve& curve, double bytes);

// nccl-tests-style table: a "# kind on n ranks (transport)" header, one right-aligned row per
// point with the fit and its residual, and a "# fit: ..." summary line.
std::string format_sweep_table(const CollectiveCurve& curve, const std::string& transport);

}  // namespace cc::profiler
