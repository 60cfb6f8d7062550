// gpt_weights_impl.h — template bodies for gpt_weights.h.
#pragma once

#include <cmath>

namespace cc::engine {

template <typename T, typename F>
void for_each_tensor(ModelWeights<T>& w, const RankModel& m, F&& f) {
  const std::int64_t h = m.spec.hidden_size, ff = m.spec.ffn_hidden_size, V = m.spec.vocab_size;
  const std::int64_t S = m.spec.seq_length;
  const double std0 = 0.02;
  const double std_out = 0.02 / std::sqrt(2.0 * m.spec.num_layers);  // GPT-2: residual projections scaled
  using I = TensorInfo::Init;
  auto visit = [&](TensorInfo info, auto& tensor) {
    f(info, tensor.data(), static_cast<std::int64_t>(tensor.rows()), static_cast<std::int64_t>(tensor.cols()));
  };
  if (m.has_embedding()) {
    visit({"wte", V, h, Split::Rows, I::Normal, std0, true, false, true, false}, w.wte);
    visit({"wpe", S, h, Split::Replicated, I::Normal, 0.01, true, true, true, false}, w.wpe);
  }
  for (int l = 0; l < m.local_layers(); ++l) {
    LayerWeights<T>& L = w.layers[static_cast<std::size_t>(l)];
    const std::string p = "layer" + std::to_string(m.global_layer(l)) + ".";
    visit({p + "ln1_g", 1, h, Split::Replicated, I::Ones, 0, false, true, true, false}, L.ln1_g);
    visit({p + "ln1_b", 1, h, Split::Replicated, I::Zeros, 0, false, true, true, false}, L.ln1_b);
    visit({p + "qkv_w", h, 3 * h, Split::QkvColumns, I::Normal, std0, true, false, true, false}, L.qkv_w);
    visit({p + "qkv_b", 1, 3 * h, Split::QkvColumns, I::Zeros, 0, false, false, true, false}, L.qkv_b);
    visit({p + "proj_w", h, h, Split::Rows, I::Normal, std_out, true, false, true, false}, L.proj_w);
    visit({p + "proj_b", 1, h, Split::Replicated, I::Zeros, 0, false, true, true, false}, L.proj_b);
    visit({p + "ln2_g", 1, h, Split::Replicated, I::Ones, 0, false, true, true, false}, L.ln2_g);
    visit({p + "ln2_b", 1, h, Split::Replicated, I::Zeros, 0, false, true, true, false}, L.ln2_b);
    visit({p + "fc1_w", h, ff, Split::Columns, I::Normal, std0, true, false, true, false}, L.fc1_w);
    visit({p + "fc1_b", 1, ff, Split::Columns, I::Zeros, 0, false, false, true, false}, L.fc1_b);
    visit({p + "fc2_w", ff, h, Split::Rows, I::Normal, std_out, true, false, true, false}, L.fc2_w);
    visit({p + "fc2_b", 1, h, Split::Replicated, I::Zeros, 0, false, true, true, false}, L.fc2_b);
  }
  if (m.has_output()) {
    visit({"lnf_g", 1, h, Split::Replicated, I::Ones, 0, false, true, true, false}, w.lnf_g);
    visit({"lnf_b", 1, h, Split::Replicated, I::Zeros, 0, false, true, true, false}, w.lnf_b);
    // Tied output layer: with PP > 1 the last stage keeps its own copy of the embedding,
    // initialised identically and kept equal by summing the two copies' gradients.
    if (!m.has_embedding())
      visit({"wte", V, h, Split::Rows, I::Normal, std0, true, false, false, true}, w.wte);
  }
}

template <typename T>
ModelWeights<T> allocate_weights(const RankModel& m) {
  const Eigen::Index h = m.spec.hidden_size, t = m.tp;
  const Eigen::Index ff = m.spec.ffn_hidden_size / t, V = m.spec.vocab_size / t, S = m.spec.seq_length;
  ModelWeights<T> w;
  if (m.has_embedding() || m.has_output()) w.wte = Mat<T>::Zero(V, h);
  if (m.has_embedding()) w.wpe = Mat<T>::Zero(S, h);
  if (m.has_output()) {
    w.lnf_g = Vec<T>::Zero(h);
    w.lnf_b = Vec<T>::Zero(h);
  }
  w.layers.resize(static_cast<std::size_t>(m.local_layers()));
  for (auto& L : w.layers) {
    L.ln1_g = Vec<T>::Zero(h);
    L.ln1_b = Vec<T>::Zero(h);
    L.qkv_w = Mat<T>::Zero(h, 3 * h / t);
    L.qkv_b = Vec<T>::Zero(3 * h / t);
    L.proj_w = Mat<T>::Zero(h / t, h);
    L.proj_b = Vec<T>::Zero(h);
    L.ln2_g = Vec<T>::Zero(h);
    L.ln2_b = Vec<T>::Zero(h);
    L.fc1_w = Mat<T>::Zero(h, ff);
    L.fc1_b = Vec<T>::Zero(ff);
    L.fc2_w = Mat<T>::Zero(ff, h);
    L.fc2_b = Vec<T>::Zero(h);
  }
  return w;
}

template <typename T>
void initialise_weights(ModelWeights<T>& w, const RankModel& m, std::uint64_t seed) {
  for_each_tensor(w, m, [&](const TensorInfo& info, T* data, std::int64_t rows, std::int64_t cols) {
    const std::uint64_t stream = name_hash(info.name);
    // Vectors are stored as columns but indexed as 1 × n rows of the global tensor.
    const bool vector = info.global_rows == 1;
    const std::int64_t r_count = vector ? 1 : rows, c_count = vector ? rows * cols : cols;
    for (std::int64_t i = 0; i < r_count; ++i)
      for (std::int64_t j = 0; j < c_count; ++j) {
        T& x = data[i * c_count + j];
        switch (info.init) {
          case TensorInfo::Init::Zeros: x = T(0); break;
          case TensorInfo::Init::Ones: x = T(1); break;
          case TensorInfo::Init::Normal:
            x = static_cast<T>(info.init_std * normal01(seed, stream, info.global_index(i, j, m.tp_rank, m.tp)));
            break;
        }
      }
  });
}

template <typename T>
void set_zero(ModelWeights<T>& w, const RankModel& m) {
  for_each_tensor(w, m, [](const TensorInfo&, T* data, std::int64_t rows, std::int64_t cols) {
    std::fill(data, data + rows * cols, T(0));
  });
}

template <typename T>
std::size_t parameter_count(ModelWeights<T>& w, const RankModel& m) {
  std::size_t n = 0;
  for_each_tensor(w, m, [&](const TensorInfo&, T*, std::int64_t rows, std::int64_t cols) {
    n += static_cast<std::size_t>(rows * cols);
  });
  return n;
}

template <typename T>
void pack(ModelWeights<T>& w, const RankModel& m, std::vector<T>& flat) {
  flat.clear();
  for_each_tensor(w, m, [&](const TensorInfo&, T* data, std::int64_t rows, std::int64_t cols) {
    flat.insert(flat.end(), data, data + rows * cols);
  });
}

template <typename T>
void unpack(const std::vector<T>& flat, ModelWeights<T>& w, const RankModel& m) {
  std::size_t at = 0;
  for_each_tensor(w, m, [&](const TensorInfo&, T* data, std::int64_t rows, std::int64_t cols) {
    const auto n = static_cast<std::size_t>(rows * cols);
    std::copy(flat.begin() + static_cast<std::ptrdiff_t>(at), flat.begin() + static_cast<std::ptrdiff_t>(at + n), data);
    at += n;
  });
}

}  // namespace cc::engine
