// optimizer_instances.h — the process groups of Megatron-Core's partial distributed optimizer
// (--num-distributed-optimizer-instances): the DP x CP group split into equal blocks of consecutive
// members (its intra-instance groups), and the members at one place in every block (its
// inter-instance groups). One place for both, read by the pricing and the cross-node traffic.
#pragma once

#include <cstddef>
#include <vector>

namespace cc {

// The `index`-th block of `block` consecutive members of `members`.
inline std::vector<int> instance_block(const std::vector<int>& members, std::size_t block, std::size_t index) {
  const auto first = members.begin() + static_cast<std::ptrdiff_t>(index * block);
  return std::vector<int>(first, first + static_cast<std::ptrdiff_t>(block));
}

// The members at place `offset` of every block of `block` members.
inline std::vector<int> across_instances(const std::vector<int>& members, std::size_t block, std::size_t offset) {
  std::vector<int> out;
  for (std::size_t i = offset; i < members.size(); i += block) out.push_back(members[i]);
  return out;
}

}  // namespace cc
