// layernorm.h — layer normalisation over the columns (features) of each token row.
//
// Forward, per row x (C columns):
//   mean = (1/C) Σ_c x_c
//   var  = (1/C) Σ_c (x_c - mean)²          (biased, as PyTorch / GPT-2)
//   rstd = 1 / sqrt(var + eps)
//   x̂_c  = (x_c - mean) · rstd
//   y_c  = γ_c · x̂_c + β_c
// Backward, with g_c = dy_c · γ_c:
//   dx_c = rstd · (g_c - mean_c'(g) - x̂_c · mean_c'(g ⊙ x̂))
//   dγ_c += Σ_rows dy_c · x̂_c,   dβ_c += Σ_rows dy_c
// mean and rstd are saved per row so backward needs neither a second reduction pass
// nor the normalised activations (x̂ is rebuilt from x, which the caller keeps anyway).
#pragma once

#include <cmath>

#include "engine/tensor.h"

namespace cc::engine {

template <typename T>
struct LayerNormSaved {
  Vec<T> mean, rstd;  // one entry per row
};

template <typename T>
void layernorm_forward(const Mat<T>& x, const Vec<T>& gamma, const Vec<T>& beta, Mat<T>& y,
                       LayerNormSaved<T>& saved, T eps = T(1e-5)) {
  const Eigen::Index rows = x.rows(), cols = x.cols();
  y.resize(rows, cols);
  saved.mean.resize(rows);
  saved.rstd.resize(rows);
  for (Eigen::Index r = 0; r < rows; ++r) {
    const auto xr = x.row(r).array();
    const T mean = xr.mean();
    // Two-pass variance: subtracting the mean first avoids the cancellation of E[x²]-E[x]².
    const T var = (xr - mean).square().mean();
    const T rstd = T(1) / std::sqrt(var + eps);
    y.row(r).array() = (xr - mean) * rstd * gamma.transpose().array() + beta.transpose().array();
    saved.mean(r) = mean;
    saved.rstd(r) = rstd;
  }
}

template <typename T>
void layernorm_backward(const Mat<T>& dy, const Mat<T>& x, const Vec<T>& gamma,
                        const LayerNormSaved<T>& saved, Mat<T>& dx, Vec<T>& dgamma,
                        Vec<T>& dbeta) {
  const Eigen::Index rows = x.rows(), cols = x.cols();
  dx.resize(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r) {
    const T rstd = saved.rstd(r);
    const auto xhat = ((x.row(r).array() - saved.mean(r)) * rstd).eval();
    const auto dyr = dy.row(r).array();
    const auto g = (dyr * gamma.transpose().array()).eval();  // dL/dx̂
    // The two means are the gradient flowing back through mean and rstd respectively.
    const T mean_g = g.mean();
    const T mean_gx = (g * xhat).mean();
    dx.row(r).array() = rstd * (g - mean_g - xhat * mean_gx);
    dgamma.array() += (dyr * xhat).transpose();
    dbeta.array() += dyr.transpose();
  }
}

}  // namespace cc::engine
