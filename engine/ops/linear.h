// linear.h — fully connected layer on token rows (the GEMMs of attention and MLP).
//
//   y[T×out] = x[T×in] · W[in×out] + b[out]        (b.size() == 0: no bias)
// Backward, from dy[T×out]:
//   dx = dy · Wᵀ          (overwritten; skipped when dx is null, e.g. for the first layer's input)
//   dW += xᵀ · dy         (accumulated: gradient accumulation over microbatches)
//   db += Σ_rows dy       (accumulated; skipped when db is null)
// W is stored [in×out] (not PyTorch's [out×in]) so the forward is a plain x·W and a
// column-parallel shard of W is a contiguous block of columns of the global W.
#pragma once

#include <stdexcept>

#include "engine/tensor.h"

namespace cc::engine {

template <typename T>
void linear_forward(const Mat<T>& x, const Mat<T>& w, const Vec<T>& b, Mat<T>& y) {
  if (x.cols() != w.rows() || (b.size() != 0 && b.size() != w.cols()))
    throw std::invalid_argument("linear_forward: shape mismatch");
  y.resize(x.rows(), w.cols());
  y.noalias() = x * w;
  if (b.size() != 0) y.rowwise() += b.transpose();
}

// The two halves of the backward run as separate kernels (Megatron-LM's "dgrad" and
// "wgrad" GEMMs), so the profiler times them apart and the weight-gradient half can run
// after the input gradient has been sent on.
template <typename T>
void linear_backward_data(const Mat<T>& dy, const Mat<T>& w, Mat<T>& dx) {
  if (dy.cols() != w.cols()) throw std::invalid_argument("linear_backward_data: shape mismatch");
  dx.resize(dy.rows(), w.rows());
  dx.noalias() = dy * w.transpose();
}

template <typename T>
void linear_backward_weight(const Mat<T>& dy, const Mat<T>& x, Mat<T>& dw, Vec<T>* db) {
  if (dy.rows() != x.rows() || dw.rows() != x.cols() || dw.cols() != dy.cols() || (db && db->size() != dy.cols()))
    throw std::invalid_argument("linear_backward_weight: shape mismatch");
  dw.noalias() += x.transpose() * dy;
  if (db) *db += dy.colwise().sum().transpose();
}

template <typename T>
void linear_backward(const Mat<T>& dy, const Mat<T>& x, const Mat<T>& w, Mat<T>* dx, Mat<T>& dw,
                     Vec<T>* db) {
  if (dy.rows() != x.rows() || dy.cols() != w.cols() || x.cols() != w.rows() ||
      dw.rows() != w.rows() || dw.cols() != w.cols() || (db && db->size() != w.cols()))
    throw std::invalid_argument("linear_backward: shape mismatch");
  if (dx) linear_backward_data(dy, w, *dx);
  linear_backward_weight(dy, x, dw, db);
}

}  // namespace cc::engine
