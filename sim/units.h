// units.h — simulated time as integer nanoseconds, and byte/FLOP constants.
// Event times are integers so ties order the same way on every machine (ns-3's habit);
// doubles appear only at the edges: cost formulas in, reports out.
#pragma once

#include <cmath>
#include <cstdint>

namespace cc {

using SimTime = std::int64_t;  // nanoseconds

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;
constexpr double kTera = 1e12;

// Rounds to the nearest nanosecond; costs below half a nanosecond vanish, which is far
// below anything a GPU kernel or a collective takes.
inline SimTime to_sim_time(double seconds) { return static_cast<SimTime>(std::llround(seconds * 1e9)); }
inline double to_seconds(SimTime t) { return static_cast<double>(t) * 1e-9; }

}  // namespace cc
