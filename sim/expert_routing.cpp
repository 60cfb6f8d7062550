#include "sim/expert_routing.h"

#include <algorithm>

namespace cc {

namespace {

// C(n - b, k) / C(n, k): the chance that k distinct picks out of n miss a given b of them.
double miss_chance(int n, int b, int k) {
  double p = 1.0;
  for (int i = 0; i < k; ++i) {
    if (n - b - i <= 0) return 0.0;
    p *= static_cast<double>(n - b - i) / static_cast<double>(n - i);
  }
  return p;
}

// C(n, r) as a double (the hypergeometric weights below: a few dozen groups at most).
double choose(int n, int r) {
  if (r < 0 || r > n) return 0.0;
  double c = 1.0;
  for (int i = 1; i <= r; ++i) c = c * (n - r + i) / i;
  return c;
}

}  // namespace

double expected_holders_reached(const MoeSpec& moe, int holders) {
  const int e = moe.num_experts, k = moe.router_topk;
  if (holders <= 1 || e <= 0 || k <= 0) return holders == 1 ? 1.0 : 0.0;
  const int per_holder = e / holders;
  const int g = moe.router_num_groups, m = moe.router_group_topk;
  double hit = 1.0 - miss_chance(e, per_holder, k);  // one holder's chance, unlimited routing
  if (g > 0 && m > 0 && m < g) {
    const int per_group = e / g, pool = m * per_group;
    if (g % holders == 0) {
      // Each holder holds g/holders whole groups, j of which are among the M picked
      // (hypergeometric); it is reached unless the top-k miss those j groups' experts.
      const int own = g / holders;
      hit = 0.0;
      for (int j = 1; j <= std::min(own, m); ++j)
        hit += choose(own, j) * choose(g - own, m - j) / choose(g, m) * (1.0 - miss_chance(pool, j * per_group, k));
    } else if (holders % g == 0) {
      // Each group spans holders/g whole holders: reached only if its group is picked.
      hit = static_cast<double>(m) / g * (1.0 - miss_chance(pool, per_holder, k));
    }
  }
  return holders * hit;
}

}  // namespace cc
