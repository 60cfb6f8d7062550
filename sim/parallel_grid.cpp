#include "sim/parallel_grid.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/error.h"

namespace cc {

namespace {

// The index of `name` in kGridDimensions, -1 for an unknown name.
int known_index(std::string_view name) {
  for (std::size_t i = 0; i < kGridDimensions.size(); ++i)
    if (kGridDimensions[i].name == name) return static_cast<int>(i);
  return -1;
}

// The static copy of a known name, or an empty view for an unknown one.
std::string_view known_name(std::string_view name) {
  const int i = known_index(name);
  return i < 0 ? std::string_view() : kGridDimensions[static_cast<std::size_t>(i)].name;
}

[[noreturn]] void unknown_name(std::string_view what, std::string_view text, std::string_view name) {
  std::vector<std::string_view> valid;
  for (const GridDimensionInfo& d : kGridDimensions) valid.push_back(d.name);
  fail("{} '{}': '{}' is not a parallel dimension; valid names are {}", what, text, name, fmt::join(valid, ", "));
}

// Calls `visit(name)` for each '-'-separated name of `text`, refusing an empty one.
template <typename Visit>
void for_each_name(std::string_view what, std::string_view text, Visit&& visit) {
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = std::min(text.find('-', begin), text.size());
    const std::string_view name = text.substr(begin, end - begin);
    if (name.empty())
      fail("{} '{}': an empty name (a '-' at an end or two in a row); join names with '-', e.g. tp-cp-ep-dp-pp",
           what, text);
    visit(name);
    if (end == text.size()) return;
    begin = end + 1;
  }
}

}  // namespace

const GridDimensionInfo& dimension_info(std::string_view name) {
  const int i = known_index(name);
  if (i < 0) unknown_name("dimension", name, name);
  return kGridDimensions[static_cast<std::size_t>(i)];
}

ParallelGrid::ParallelGrid(std::string_view order, std::span<const GridDimension> sizes) {
  for_each_name("grid order", order, [&](std::string_view name) {
    const std::string_view known = known_name(name);
    if (known.empty()) unknown_name("grid order", order, name);
    if (position(known) >= 0) fail("grid order '{}': '{}' appears twice; name each dimension once", order, name);
    dims_[static_cast<std::size_t>(count_++)].name = known;
  });
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const GridDimension& d = sizes[i];
    if (known_name(d.name).empty()) unknown_name("grid sizes of", order, d.name);
    if (d.size < 1) fail("grid '{}': {} size is {}; it must be >= 1", order, d.name, d.size);
    for (std::size_t j = 0; j < i; ++j)
      if (sizes[j].name == d.name)
        fail("grid '{}': {} is given two sizes ({} and {}); give it one", order, d.name, sizes[j].size, d.size);
    const int at = position(d.name);
    if (at < 0 && d.size > 1)
      fail("grid '{}': {} has size {}, but the order does not name it; add it to the order or give it size 1", order,
           d.name, d.size);
    if (at >= 0) dims_[static_cast<std::size_t>(at)].size = d.size;
  }
  std::int64_t stride = 1;
  for (int i = 0; i < count_; ++i) {
    Dimension& d = dims_[static_cast<std::size_t>(i)];
    d.stride = static_cast<int>(stride);
    stride *= d.size;
    if (stride > INT_MAX)
      fail("grid '{}': {} ranks (the product of its sizes) is more than {}", order, stride, INT_MAX);
  }
  world_size_ = static_cast<int>(stride);
}

int ParallelGrid::position(std::string_view name) const {
  for (int i = 0; i < count_; ++i)
    if (dims_[static_cast<std::size_t>(i)].name == name) return i;
  return -1;
}

int ParallelGrid::held_position(std::string_view name) const {
  const int at = position(name);
  if (at < 0 && known_name(name).empty()) unknown_name("grid", order(), name);
  return at;
}

GridDimension ParallelGrid::dimension(int i) const {
  const Dimension& d = dims_[static_cast<std::size_t>(i)];
  return {d.name, d.size};
}

std::string ParallelGrid::order() const {
  std::string out;
  for (int i = 0; i < count_; ++i) {
    if (i > 0) out += '-';
    out += dims_[static_cast<std::size_t>(i)].name;
  }
  return out;
}

int ParallelGrid::size(std::string_view name) const {
  const int at = held_position(name);
  return at < 0 ? 1 : dims_[static_cast<std::size_t>(at)].size;
}

std::vector<int> ParallelGrid::coords(int rank) const {
  std::vector<int> out(static_cast<std::size_t>(count_));
  for (int i = 0; i < count_; ++i) {
    const Dimension& d = dims_[static_cast<std::size_t>(i)];
    out[static_cast<std::size_t>(i)] = rank / d.stride % d.size;
  }
  return out;
}

int ParallelGrid::coord(int rank, std::string_view name) const {
  const int at = held_position(name);
  if (at < 0) return 0;
  const Dimension& d = dims_[static_cast<std::size_t>(at)];
  return rank / d.stride % d.size;
}

int ParallelGrid::rank(std::span<const int> coords) const {
  assert(static_cast<int>(coords.size()) == count_);
  int r = 0;
  for (int i = 0; i < count_; ++i)
    r += coords[static_cast<std::size_t>(i)] * dims_[static_cast<std::size_t>(i)].stride;
  return r;
}

int ParallelGrid::group_size(std::string_view dims) const {
  const unsigned mask = span_mask(dims);
  int ranks = 1;  // at most the world size, which fits an int
  for (int i = 0; i < count_; ++i)
    if (mask & (1U << static_cast<unsigned>(i))) ranks *= dims_[static_cast<std::size_t>(i)].size;
  return ranks;
}

unsigned ParallelGrid::span_mask(std::string_view dims) const {
  unsigned mask = 0, seen = 0;
  for_each_name("parallel group", dims, [&](std::string_view name) {
    const std::string_view known = known_name(name);
    if (known.empty()) unknown_name("parallel group", dims, name);
    const unsigned bit = 1U << static_cast<unsigned>(known_index(known));
    if (seen & bit) fail("parallel group '{}': '{}' appears twice; name each dimension once", dims, name);
    seen |= bit;
    const int at = position(known);
    if (at >= 0) mask |= 1U << static_cast<unsigned>(at);
  });
  return mask;
}

std::vector<int> ParallelGrid::group(int rank, std::string_view dims) const {
  const unsigned mask = span_mask(dims);
  // Start from the member whose spanned coordinates are all 0, then count through the
  // spanned dimensions innermost first, like an odometer: ranks come out increasing.
  int first = rank;
  std::size_t members = 1;
  for (int i = 0; i < count_; ++i) {
    if (!(mask & (1U << static_cast<unsigned>(i)))) continue;
    const Dimension& d = dims_[static_cast<std::size_t>(i)];
    first -= rank / d.stride % d.size * d.stride;
    members *= static_cast<std::size_t>(d.size);
  }
  std::vector<int> out;
  out.reserve(members);
  std::array<int, kMaxDimensions> digit{};
  int r = first;
  while (true) {
    out.push_back(r);
    int i = 0;
    for (; i < count_; ++i) {
      if (!(mask & (1U << static_cast<unsigned>(i)))) continue;
      const Dimension& d = dims_[static_cast<std::size_t>(i)];
      auto& k = digit[static_cast<std::size_t>(i)];
      if (++k < d.size) {
        r += d.stride;
        break;
      }
      r -= (d.size - 1) * d.stride;
      k = 0;
    }
    if (i == count_) return out;
  }
}

std::vector<std::vector<int>> ParallelGrid::groups(std::string_view dims) const {
  const unsigned mask = span_mask(dims);
  std::vector<std::vector<int>> out;
  for (int r = 0; r < world_size_; ++r) {
    bool first_of_group = true;
    for (int i = 0; i < count_ && first_of_group; ++i) {
      const Dimension& d = dims_[static_cast<std::size_t>(i)];
      if ((mask & (1U << static_cast<unsigned>(i))) && r / d.stride % d.size != 0) first_of_group = false;
    }
    if (first_of_group) out.push_back(group(r, dims));
  }
  return out;
}

bool ParallelGrid::operator==(const ParallelGrid& other) const {
  if (count_ != other.count_) return false;
  for (int i = 0; i < count_; ++i) {
    const Dimension &a = dims_[static_cast<std::size_t>(i)], &b = other.dims_[static_cast<std::size_t>(i)];
    if (a.name != b.name || a.size != b.size) return false;
  }
  return true;
}

}  // namespace cc
