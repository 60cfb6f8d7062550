// flag_runs.h — a per-element flag vector (optimizer.h's FlatLayout: decay, counted,
// sp_partial) as maximal runs of equal flags: how a backend that works on whole ranges
// rather than elements (the CUDA optimizer: one kernel or one NCCL call per range) walks a
// flat parameter vector. Elements past the vector's end (the distributed optimizer's
// padding) read as unflagged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cc::engine {

struct FlagRun {
  std::size_t begin = 0, end = 0;  // [begin, end)
  bool flag = false;

  bool operator==(const FlagRun&) const = default;
};

// Maximal runs of equal flags covering [begin, end), in order.
inline std::vector<FlagRun> flag_runs(const std::vector<std::uint8_t>& flags, std::size_t begin, std::size_t end) {
  std::vector<FlagRun> out;
  auto flag = [&](std::size_t i) { return i < flags.size() && flags[i] != 0; };
  for (std::size_t i = begin; i < end;) {
    std::size_t j = i;
    while (j < end && flag(j) == flag(i)) ++j;
    out.push_back({i, j, flag(i)});
    i = j;
  }
  return out;
}

// The [begin, end) ranges of flagged elements within [begin, end).
inline std::vector<std::pair<std::size_t, std::size_t>> flagged_ranges(const std::vector<std::uint8_t>& flags,
                                                                       std::size_t begin, std::size_t end) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const FlagRun& r : flag_runs(flags, begin, end))
    if (r.flag) out.emplace_back(r.begin, r.end);
  return out;
}

}  // namespace cc::engine
