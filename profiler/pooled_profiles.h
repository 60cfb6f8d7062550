// pooled_profiles.h — one cost database from several profiles of the same runs taken at
// different times. A shared machine's speed drifts by ±10% over minutes (two profiles of
// `small` minutes apart on the 2-core machine, 2026-12-02, priced the same layout 0.833 s and
// 0.903 s); a prediction from one profile carries whatever spell it was taken in, while the
// layouts it is checked against are measured over many. `validate` profiles once per round
// and predicts from the pool, so both sides average over the same stretch of time.
#pragma once

#include <vector>

#include "sim/cost_database.h"

namespace cc::profiler {

// Ops matched by (name, phase, shape, dtype, TP): samples add up and the times are
// sample-weighted means of the rounds' (for the median and spread an approximation: the
// rounds' occurrences are not kept). Runs keep their order, timed steps add up, iteration
// times average over them. The collective sweep is the first round's that has one (later
// rounds skip it). Throws SpecError when the profiles did not run the same layouts or
// element type, naming the first difference.
CostDatabase pool_profiles(const std::vector<CostDatabase>& rounds);

}  // namespace cc::profiler
