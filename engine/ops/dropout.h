// dropout.h — inverted dropout with byte masks (as Megatron-LM stores them), generated from
// the counter-based RNG so the mask of an element depends only on (seed, stream, global
// index) — never on how rows/columns are split over TP/SP/DP ranks or on execution order.
//
//   keep_e = [uniform01(seed, stream, index(e)) >= p]
//   y_e    = x_e · keep_e / (1 - p)              (expectation of y equals x)
//   dx_e   = dy_e · keep_e / (1 - p)
// p == 0: y = x and the mask is all ones. p >= 1: everything is dropped, y = 0.
// A local block of a larger (global) matrix names its place through MaskIndex:
//   index(r, c) = row_ids[r] · global_cols + col_offset + c
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "engine/rng.h"
#include "engine/tensor.h"

namespace cc::engine {

// 1 = kept, 0 = dropped. Bytes rather than bits: what Megatron-LM keeps, and what the
// memory model (sim/) counts for activation memory.
using Mask = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Global coordinates of a local block of a larger matrix.
struct MaskIndex {
  std::vector<std::uint64_t> row_ids;  // global id of each local row
  std::int64_t col_offset = 0;         // global column of local column 0
  std::int64_t global_cols = 0;        // width of the global matrix

  std::uint64_t index(Eigen::Index r, Eigen::Index c) const {
    return row_ids[static_cast<std::size_t>(r)] * static_cast<std::uint64_t>(global_cols) +
           static_cast<std::uint64_t>(col_offset + c);
  }
};

// Factor applied to kept elements; 0 when everything is dropped (avoids 0·∞ = NaN).
template <typename T>
T dropout_scale(T p) {
  return p < T(1) ? T(1) / (T(1) - p) : T(0);
}

template <typename T>
void dropout_forward(const Mat<T>& x, T p, std::uint64_t seed, std::uint64_t stream,
                     const MaskIndex& where, Mat<T>& y, Mask& mask) {
  const Eigen::Index rows = x.rows(), cols = x.cols();
  mask.resize(rows, cols);
  if (p == T(0)) {
    // No RNG draws: dropout disabled must cost nothing and change nothing.
    y = x;
    mask.setOnes();
    return;
  }
  if (where.row_ids.size() != static_cast<std::size_t>(rows))
    throw std::invalid_argument("dropout_forward: MaskIndex.row_ids must have one id per row");
  const double threshold = static_cast<double>(p);
  const T scale = dropout_scale(p);
  y.resize(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r) {
    for (Eigen::Index c = 0; c < cols; ++c) {
      const bool keep = uniform01(seed, stream, where.index(r, c)) >= threshold;
      mask(r, c) = keep ? 1 : 0;
      y(r, c) = keep ? x(r, c) * scale : T(0);
    }
  }
}

template <typename T>
void dropout_backward(const Mat<T>& dy, T p, const Mask& mask, Mat<T>& dx) {
  if (p == T(0)) {  // the mask is all ones (or was never kept): identity
    dx = dy;
    return;
  }
  dx.resize(dy.rows(), dy.cols());
  dx.array() = dy.array() * mask.cast<T>().array() * dropout_scale(p);
}

}  // namespace cc::engine
