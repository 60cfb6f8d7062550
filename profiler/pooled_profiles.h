// pooled_profiles.h — one cost database from several profiles: of the same runs taken at
// different times (pool_profiles), or of different runs, each its own job (join_profiles).
// A shared machine's speed drifts by ±10% over minutes (two profiles of `small` minutes apart on
// the 2-core machine, 2026-12-02, priced the same layout 0.833 s and 0.903 s); a prediction from
// one profile carries whatever spell it was taken in, while the layouts it is checked against
// are measured over many. `validate` profiles before every round and after the last: the pool
// prices memory and counts how ops were priced, and each training run is priced by the two
// profiles around it (weight_of_later_profile below).
#pragma once

#include <vector>

#include "sim/cost_database.h"

namespace cc::profiler {

// Ops matched by (name, phase, shape, dtype, TP): samples add up and each time is the median
// over the rounds that measured the op (the mean of the middle two for an even count), so a
// slow spell that falls on one round's run leaves the pool where the other rounds put it; a
// run's iteration times likewise, its timed steps adding up. The collective sweep is the first
// round's that has one (later rounds skip it); in-step collective times pool call-weighted.
// Throws SpecError when the profiles did not run the same layouts or element type, naming the
// first difference.
CostDatabase pool_profiles(const std::vector<CostDatabase>& rounds);

// One profile from profiles of different runs, each its own MPI job: their runs and ops one
// after another, the first collective sweep, their in-step collective times pooled, and
// every job's command joined with " && ".
// Why separate jobs: on the CPU backend a run that follows another in the same process
// measures faster than a fresh process does (the heap the earlier run grew and freed is
// reused), 5.3% on `tiny` at TP 2 after TP 1 (2026-12-03, six alternations), and every
// `train` that a profile predicts is a fresh process. Throws SpecError when the parts differ
// in element type.
CostDatabase join_profiles(const std::vector<CostDatabase>& parts);

// A run that took place between two profiles is priced by both, weighted by when it ran:
// the later profile's weight is (t - before) / (after - before), clamped to [0, 1] (all in
// seconds since one origin; 0 when after <= before). Pooling alone averages a drift away
// only when it is symmetric over the rounds; on the 2-core machine (2026-12-03) the same
// `train` command measured 0.752 s at 06:25 and 0.912 s at 06:52, and a validation whose
// rounds straddled that change read its in-sample layout -11.5% off. Linear in time: the
// speed moves over minutes, a round of `small` lasts about two and a half.
double weight_of_later_profile(double t_s, double before_s, double after_s);

}  // namespace cc::profiler
