// tensor.h — the engine's only tensor types: row-major Eigen matrices and vectors over a
// scalar type. Rows are tokens, ordered sequence-first (row = position · batch + sample,
// Megatron-LM's [s, b, h] layout), so a sequence-parallel shard is a contiguous block of
// rows. Ops are templates: float for training, double for gradient checks.
#pragma once

#include <Eigen/Core>

namespace cc::engine {

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;

}  // namespace cc::engine
