// adamw.h — AdamW (Loshchilov & Hutter), as torch.optim.AdamW, on a flat buffer.
// With g the gradient, step t (1-based):
//   θ ← θ - lr · wd · θ                       (decoupled weight decay, only when decay)
//   m ← β1 · m + (1 - β1) · g
//   v ← β2 · v + (1 - β2) · g²
//   m̂ = m / (1 - β1ᵗ),   v̂ = v / (1 - β2ᵗ)    (bias correction: m, v start at 0)
//   θ ← θ - lr · m̂ / (sqrt(v̂) + eps)
// The decay uses θ before the Adam step, as PyTorch. Biases and LayerNorm parameters are
// usually passed with decay = false (GPT-2 / Megatron convention).
// One plain loop in index order: the result is bitwise reproducible, so a run sharded
// over data-parallel ranks (ZeRO-1) matches an unsharded one element for element.
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace cc::engine {

struct AdamWConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
};

template <typename T>
void adamw_update(T* param, const T* grad, T* m, T* v, std::size_t n, const AdamWConfig& c,
                  long step, bool decay) {
  if (step < 1) throw std::invalid_argument("adamw_update: step is 1-based");
  // Per-step scalars in double, then cast once: the same constants for every element.
  const double t = static_cast<double>(step);
  const T bias1 = static_cast<T>(1.0 - std::pow(c.beta1, t));
  const T bias2 = static_cast<T>(1.0 - std::pow(c.beta2, t));
  const T lr = static_cast<T>(c.lr);
  const T b1 = static_cast<T>(c.beta1), b2 = static_cast<T>(c.beta2);
  const T eps = static_cast<T>(c.eps);
  const T shrink = static_cast<T>(1.0 - c.lr * c.weight_decay);
  for (std::size_t i = 0; i < n; ++i) {
    const T g = grad[i];
    if (decay) param[i] *= shrink;
    m[i] = b1 * m[i] + (T(1) - b1) * g;
    v[i] = b2 * v[i] + (T(1) - b2) * g * g;
    const T m_hat = m[i] / bias1;
    const T v_hat = v[i] / bias2;
    param[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
  }
}

}  // namespace cc::engine
