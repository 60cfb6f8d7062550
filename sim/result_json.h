// result_json.h — the `--json` document of `clustercast simulate` (and of each entry of
// `search`). Field names are part of the interface; README.md "JSON output" lists them.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/simulator.h"

namespace cc {

nlohmann::json result_to_json(const SimResult& result);
// Chrome trace / Perfetto JSON of a result kept with `keep_timeline`: integer-ns times
// printed as microseconds, one process per stage, one thread per stream.
nlohmann::json timeline_to_chrome_trace(const SimResult& result);

}  // namespace cc
