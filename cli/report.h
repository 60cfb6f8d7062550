// report.h — the human-readable report of one simulation, printed by `simulate`.
#pragma once

#include <string>

#include "sim/simulator.h"

namespace cc::cli {

std::string format_report(const SimResult& result);
// "1,234,567" — thousands separators for counts in reports.
std::string with_commas(double value);

}  // namespace cc::cli
