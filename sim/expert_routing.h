// expert_routing.h — where a token's routed copies land, as the flex dispatcher (DeepEP,
// HybridEP) sends them: once to every EP rank that holds one of its experts, and once over the
// network to every other node among those. Expected counts under uniform routing, so that the
// dispatch is priced by the copies that travel, not by top-k.
#pragma once

#include "sim/moe_spec.h"

namespace cc {

// The expected number of distinct holders a token's top-k experts lie on, when the E routed
// experts are split evenly and in order over `holders` (EP ranks, or the nodes the EP group
// spans) and the router picks top-k distinct experts uniformly. Under group-limited routing
// (--moe-router-num-groups G, --moe-router-group-topk M: DeepSeek-V3's node-limited routing) it
// first picks M of the G expert groups uniformly, then its top-k among their experts. The
// groups are counted where they line up with the holders (each holder holds whole groups, or
// each group whole holders); otherwise the unlimited count stands, an upper bound.
double expected_holders_reached(const MoeSpec& moe, int holders);

}  // namespace cc
