// program_builder.h — the step-by-step builder of a rank's OpProgram that layer_program.cpp
// (the transformer layer) and output_program.cpp (the embedding, the output layer and loss)
// share: every helper appends one kernel or collective in execution order.
#pragma once

#include <cstdint>
#include <utility>

#include "sim/layer_program.h"

namespace cc::program {

// Builds programs step by step; every helper appends one kernel or collective.
class Builder {
 public:
  Builder(const LayerShape& x, Phase phase) : x_(x), phase_(phase) {}

  int gemm(const char* name, std::int64_t m, std::int64_t n, std::int64_t k) {
    ComputeOp op{name, OpKind::Gemm, phase_, m, n, k, 1, 2.0 * m * n * k,
                 x_.elem * static_cast<double>(m * k + k * n + m * n)};
    return push(op);
  }
  int batched(const char* name, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, int launches = 1) {
    ComputeOp op{name, OpKind::BatchedGemm, phase_, m, n, k, batch, 2.0 * batch * m * n * k,
                 x_.elem * static_cast<double>(batch * (m * k + k * n + m * n)), launches};
    return push(op);
  }
  // `bytes_per_element` counts every read and write of the kernel per output element.
  int elementwise(const char* name, std::int64_t elements, double bytes_per_element, double flops_per_element = 1) {
    ComputeOp op{name, OpKind::Elementwise, phase_, elements, 1, 1, 1, flops_per_element * elements,
                 bytes_per_element * static_cast<double>(elements)};
    return push(op);
  }
  // Flash attention of `queries` rows against `keys` rows per (sequence, head), `heads` heads.
  int flash(const char* name, double flops, double bytes, std::int64_t queries, std::int64_t keys,
            std::int64_t heads) {
    ComputeOp op{name, OpKind::FlashAttention, phase_, queries, keys, x_.head_dim, x_.b * heads, flops, bytes};
    return push(op);
  }
  void collective(const char* name, CollectiveKind kind, double bytes, int hides_behind = -1) {
    if (x_.tp > 1) communicate({name, kind, phase_, bytes, x_.tp_group, CommGroup::Tensor}, hides_behind);
  }
  // A dispatch or combine collective of an MoE layer over `group` (expert grid).
  // Its step's index, or -1 when the group is one rank (nothing sent).
  int ep_collective(const char* name, CollectiveKind kind, double bytes, const GroupPlacement& group,
                    int hides_behind = -1, double node_relay_share = 0) {
    if (group.size <= 1) return -1;
    communicate({name, kind, phase_, bytes, group, CommGroup::Expert, node_relay_share}, hides_behind);
    return last();
  }
  // Collective `step` (when there is one) overlaps compute steps [first, last].
  void hide(int step, int first, int through) {
    if (step < 0) return;
    program_[static_cast<std::size_t>(step)].hides_behind = first;
    program_[static_cast<std::size_t>(step)].hides_through = through;
  }
  int last() const { return static_cast<int>(program_.size()) - 1; }
  // A collective of the context-parallel group `runs_on` (placed at `group`).
  void cp_collective(const char* name, CollectiveKind kind, double bytes, CommGroup runs_on,
                     const GroupPlacement& group, int hides_behind = -1) {
    if (group.size > 1) communicate({name, kind, phase_, bytes, group, runs_on}, hides_behind);
  }
  void communicate(const CollectiveOp& op, int hides_behind) {
    ProgramStep step;
    step.is_collective = true;
    step.comm = op;
    step.hides_behind = hides_behind;
    program_.push_back(step);
  }
  // The TP collective after a row-parallel linear (forward) or before a column-parallel
  // one (backward): all-reduce, or reduce-scatter under sequence parallelism.
  void tp_reduce(const char* name, int hides_behind = -1) { tp_reduce_bytes(name, activation(), hides_behind); }
  void tp_reduce_bytes(const char* name, double bytes, int hides_behind = -1) {
    collective(name, x_.sequence_parallel ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, bytes,
               hides_behind);
  }
  // Another program's steps after these, its overlap indices moved along.
  void append(const OpProgram& other) {
    const auto offset = static_cast<int>(program_.size());
    for (ProgramStep step : other) {
      if (step.hides_behind >= 0) step.hides_behind += offset;
      if (step.hides_through >= 0) step.hides_through += offset;
      program_.push_back(step);
    }
  }
  void sp_gather(const char* name, int hides_behind = -1) { sp_gather_bytes(name, activation(), hides_behind); }
  void sp_gather_bytes(const char* name, double bytes, int hides_behind = -1) {
    if (x_.sequence_parallel) collective(name, CollectiveKind::AllGather, bytes, hides_behind);
  }
  // A GEMM whose input SP must first gather: with --tp-comm-overlap the gather streams in
  // chunks beside the GEMM (userbuffers), otherwise it blocks before it. The input is k wide.
  int gathered_gemm(const char* gather, const char* name, std::int64_t m, std::int64_t n, std::int64_t k) {
    const double bytes = x_.elem * static_cast<double>(x_.tokens * k);
    if (!x_.tp_overlap) sp_gather_bytes(gather, bytes);
    const int g = gemm(name, m, n, k);
    if (x_.tp_overlap) sp_gather_bytes(gather, bytes, g);
    return g;
  }
  // The reduction after a row-parallel GEMM `g`: pipelined with it under --tp-comm-overlap.
  void reduce_after(const char* name, int g) { tp_reduce(name, x_.tp_overlap ? g : -1); }
  double activation() const { return x_.elem * static_cast<double>(x_.tokens * x_.h); }
  OpProgram take() { return std::move(program_); }

 private:
  int push(const ComputeOp& op) {
    ProgramStep step;
    step.op = op;
    program_.push_back(step);
    return static_cast<int>(program_.size()) - 1;
  }
  const LayerShape& x_;
  Phase phase_;
  OpProgram program_;
};

// Bytes per element of a dropout: read the input, write the output and the one-byte mask.
inline double dropout_bytes(const LayerShape& x) { return x.dropout ? 2 * x.elem + 1 : 0; }

}  // namespace cc::program
