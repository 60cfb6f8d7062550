// search_csv.h — a search's ranked layouts as CSV, one row per layout, best first: what
// `search --csv` and the GUI's "Search results as CSV…" write, for pandas or a spreadsheet.
// The parallel sizes are one column per dimension of sim/parallel_grid.h's kGridDimensions
// (a new dimension is a new column without a change here); the rest are the layout's switches
// and the prediction, named as in the layout JSON.
#pragma once

#include <string>

#include "sim/search.h"

namespace cc {

std::string search_csv(const SearchOutcome& outcome);

}  // namespace cc
