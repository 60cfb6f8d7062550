// gelu.h — GELU activation, tanh approximation (GPT-2, llm.c, Megatron's default):
//
//   u     = s · (x + a·x³),      s = sqrt(2/π), a = 0.044715
//   y     = ½ · x · (1 + tanh u)
//   dy/dx = ½ · (1 + tanh u) + ½ · x · (1 - tanh² u) · s · (1 + 3a·x²)
// Elementwise. Backward recomputes tanh from x rather than saving it: x (the fc1 output)
// is kept for backward anyway, and one tanh per element is cheaper than a second
// activation-sized buffer.
#pragma once

#include <cmath>

#include "engine/tensor.h"

namespace cc::engine {

namespace gelu_detail {
template <typename T>
constexpr T kScale = T(0.7978845608028654);  // sqrt(2/π)
template <typename T>
constexpr T kCubic = T(0.044715);
}  // namespace gelu_detail

template <typename T>
void gelu_forward(const Mat<T>& x, Mat<T>& y) {
  using namespace gelu_detail;
  y.resize(x.rows(), x.cols());
  const T* in = x.data();
  T* out = y.data();
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const T v = in[i];
    const T u = kScale<T> * (v + kCubic<T> * v * v * v);
    out[i] = T(0.5) * v * (T(1) + std::tanh(u));
  }
}

template <typename T>
void gelu_backward(const Mat<T>& dy, const Mat<T>& x, Mat<T>& dx) {
  using namespace gelu_detail;
  dx.resize(x.rows(), x.cols());
  const T* in = x.data();
  const T* g = dy.data();
  T* out = dx.data();
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const T v = in[i];
    const T u = kScale<T> * (v + kCubic<T> * v * v * v);
    const T t = std::tanh(u);
    const T du = kScale<T> * (T(1) + T(3) * kCubic<T> * v * v);
    const T local = T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * du;
    out[i] = g[i] * local;
  }
}

}  // namespace cc::engine
