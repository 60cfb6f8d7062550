#include "sim/layer_program.h"

#include <algorithm>

namespace cc {

LayerShape make_layer_shape(const ModelSpec& m, const ParallelConfig& c, GroupPlacement tp_group) {
  LayerShape x;
  x.b = c.micro_batch;
  x.s = m.seq_length;
  x.h = m.hidden_size;
  x.tokens = x.b * x.s;
  x.region_tokens = c.sequence_parallel ? x.tokens / c.tp : x.tokens;
  x.heads = m.num_attention_heads / c.tp;
  x.head_dim = m.head_dim();
  x.qkv_out = (m.query_width() + 2LL * m.kv_channels()) / c.tp;
  x.kv_width = m.kv_channels() / c.tp;
  x.ffn = m.ffn_hidden_size / c.tp;
  x.vocab = (m.vocab_size + c.tp - 1) / c.tp;
  x.elem = c.precision == Precision::FP32 ? 4.0 : 2.0;
  x.sequence_parallel = c.sequence_parallel;
  x.tp_overlap = c.tp_comm_overlap && c.sequence_parallel;
  x.dropout = m.dropout;
  x.gated = m.gated_mlp();
  x.rope = m.position_embedding == PositionEmbedding::Rope;
  x.flash = c.attention == AttentionKernel::Flash;
  x.tp = c.tp;
  x.tp_group = tp_group;
  return x;
}

namespace {

// Builds programs step by step; every helper appends one kernel or collective.
class Builder {
 public:
  Builder(const LayerShape& x, Phase phase) : x_(x), phase_(phase) {}

  int gemm(const char* name, std::int64_t m, std::int64_t n, std::int64_t k) {
    ComputeOp op{name, OpKind::Gemm, phase_, m, n, k, 1, 2.0 * m * n * k,
                 x_.elem * static_cast<double>(m * k + k * n + m * n)};
    return push(op);
  }
  int batched(const char* name, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
    ComputeOp op{name, OpKind::BatchedGemm, phase_, m, n, k, batch, 2.0 * batch * m * n * k,
                 x_.elem * static_cast<double>(batch * (m * k + k * n + m * n))};
    return push(op);
  }
  // `bytes_per_element` counts every read and write of the kernel per output element.
  int elementwise(const char* name, std::int64_t elements, double bytes_per_element, double flops_per_element = 1) {
    ComputeOp op{name, OpKind::Elementwise, phase_, elements, 1, 1, 1, flops_per_element * elements,
                 bytes_per_element * static_cast<double>(elements)};
    return push(op);
  }
  int flash(const char* name, double flops, double bytes) {
    ComputeOp op{name, OpKind::FlashAttention, phase_, x_.s, x_.s, x_.head_dim, x_.b * x_.heads, flops, bytes};
    return push(op);
  }
  void collective(const char* name, CollectiveKind kind, double bytes, int hides_behind = -1) {
    if (x_.tp <= 1) return;
    ProgramStep step;
    step.is_collective = true;
    step.comm = {name, kind, phase_, bytes, x_.tp_group};
    step.hides_behind = hides_behind;
    program_.push_back(step);
  }
  // The TP collective after a row-parallel linear (forward) or before a column-parallel
  // one (backward): all-reduce, or reduce-scatter under sequence parallelism.
  void tp_reduce(const char* name, int hides_behind = -1) {
    collective(name, x_.sequence_parallel ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, activation(),
               hides_behind);
  }
  void sp_gather(const char* name, int hides_behind = -1) {
    if (x_.sequence_parallel) collective(name, CollectiveKind::AllGather, activation(), hides_behind);
  }
  // A GEMM whose input SP must first gather: with --tp-comm-overlap the gather streams in
  // chunks beside the GEMM (userbuffers), otherwise it blocks before it.
  int gathered_gemm(const char* gather, const char* name, std::int64_t m, std::int64_t n, std::int64_t k) {
    if (!x_.tp_overlap) sp_gather(gather);
    const int g = gemm(name, m, n, k);
    if (x_.tp_overlap) sp_gather(gather, g);
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

double dropout_bytes(const LayerShape& x) { return x.dropout ? 2 * x.elem + 1 : 0; }

void attention_core(Builder& b, const LayerShape& x) {
  const std::int64_t batch = x.b * x.heads;
  if (x.flash) {
    // Causal flash attention computes only the lower triangle: half of QK^T and of PV.
    const double flops = 2.0 * batch * x.s * x.s * x.head_dim;
    b.flash("flash_attention", flops, x.elem * 4.0 * x.tokens * x.heads * x.head_dim);
    return;
  }
  const std::int64_t scores = batch * x.s * x.s;
  b.batched("attention_scores", batch, x.s, x.s, x.head_dim);
  b.elementwise("softmax", scores, 2 * x.elem, 4);  // fused scale, causal mask, softmax
  if (x.dropout) b.elementwise("attention_dropout", scores, dropout_bytes(x));
  b.batched("attention_context", batch, x.s, x.head_dim, x.s);
}

}  // namespace

OpProgram attention_core_forward(const LayerShape& x, Phase phase) {
  Builder b(x, phase);
  attention_core(b, x);
  return b.take();
}

OpProgram layer_forward(const LayerShape& x, Phase phase) {
  Builder b(x, phase);
  const std::int64_t region = x.region_tokens * x.h;
  b.elementwise("input_norm", region, 2 * x.elem, 8);
  b.gathered_gemm("sp_all_gather", "qkv", x.tokens, x.qkv_out, x.h);
  if (x.rope) b.elementwise("rope", x.tokens * (x.qkv_out - x.kv_width), 2 * x.elem, 6);  // rotates Q and K
  attention_core(b, x);
  b.reduce_after("tp_reduce", b.gemm("attention_proj", x.tokens, x.h, x.heads * x.head_dim));
  b.elementwise("bias_dropout_add", region, 3 * x.elem + (x.dropout ? 1 : 0));
  b.elementwise("post_attention_norm", region, 2 * x.elem, 8);
  b.gathered_gemm("sp_all_gather", "fc1", x.tokens, x.ffn * (x.gated ? 2 : 1), x.h);
  b.elementwise(x.gated ? "swiglu" : "gelu", x.tokens * x.ffn, (x.gated ? 3 : 2) * x.elem, 8);
  b.reduce_after("tp_reduce", b.gemm("fc2", x.tokens, x.h, x.ffn));
  b.elementwise("bias_dropout_add", region, 3 * x.elem + (x.dropout ? 1 : 0));
  return b.take();
}

OpProgram layer_backward(const LayerShape& x) {
  Builder b(x, Phase::Backward);
  const std::int64_t region = x.region_tokens * x.h;
  const std::int64_t fc1_out = x.ffn * (x.gated ? 2 : 1);
  const std::int64_t attn_width = x.heads * x.head_dim;
  // MLP block, last op first.
  b.elementwise("bias_dropout_add.backward", region, 2 * x.elem + (x.dropout ? 1 : 0));
  b.gathered_gemm("sp_all_gather", "fc2.dgrad", x.tokens, x.ffn, x.h);  // backward of the forward reduce-scatter
  b.gemm("fc2.wgrad", x.ffn, x.h, x.tokens);
  b.elementwise(x.gated ? "swiglu.backward" : "gelu.backward", x.tokens * x.ffn, (x.gated ? 5 : 3) * x.elem, 12);
  int dgrad = b.gemm("fc1.dgrad", x.tokens, x.h, fc1_out);
  b.sp_gather("sp_all_gather.wgrad_input", dgrad);  // SP saved only 1/t of the input
  int wgrad = b.gemm("fc1.wgrad", x.h, fc1_out, x.tokens);
  b.tp_reduce("tp_reduce.input_grad", wgrad);
  b.elementwise("post_attention_norm.backward", region, 4 * x.elem, 12);
  // Attention block.
  b.elementwise("bias_dropout_add.backward", region, 2 * x.elem + (x.dropout ? 1 : 0));
  b.gathered_gemm("sp_all_gather", "attention_proj.dgrad", x.tokens, attn_width, x.h);
  b.gemm("attention_proj.wgrad", attn_width, x.h, x.tokens);
  const std::int64_t batch = x.b * x.heads;
  if (x.flash) {
    // FlashAttention-2 backward: five matmuls against two forward, with its own recompute.
    const double flops = 2.5 * 2.0 * batch * x.s * x.s * x.head_dim;
    b.flash("flash_attention.backward", flops, x.elem * 8.0 * x.tokens * attn_width);
  } else {
    const std::int64_t scores = batch * x.s * x.s;
    b.batched("attention_context.dgrad_probs", batch, x.s, x.s, x.head_dim);
    b.batched("attention_context.dgrad_values", batch, x.s, x.head_dim, x.s);
    if (x.dropout) b.elementwise("attention_dropout.backward", scores, dropout_bytes(x));
    b.elementwise("softmax.backward", scores, 3 * x.elem, 4);
    b.batched("attention_scores.dgrad_query", batch, x.s, x.head_dim, x.s);
    b.batched("attention_scores.dgrad_key", batch, x.s, x.head_dim, x.s);
  }
  if (x.rope) b.elementwise("rope.backward", x.tokens * (x.qkv_out - x.kv_width), 2 * x.elem, 6);
  dgrad = b.gemm("qkv.dgrad", x.tokens, x.h, x.qkv_out);
  b.sp_gather("sp_all_gather.wgrad_input", dgrad);
  wgrad = b.gemm("qkv.wgrad", x.h, x.qkv_out, x.tokens);
  b.tp_reduce("tp_reduce.input_grad", wgrad);
  b.elementwise("input_norm.backward", region, 4 * x.elem, 12);
  // Weight gradients accumulate into fp32 main_grad buffers (Megatron-LM's gradient
  // accumulation fusion: the wgrad GEMM epilogue reads and writes 8 bytes per parameter).
  const std::int64_t layer_weights = x.h * x.qkv_out + attn_width * x.h + x.h * fc1_out + x.ffn * x.h;
  b.elementwise("main_grad_accumulate", layer_weights, 8, 1);
  return b.take();
}

OpProgram embedding_forward(const LayerShape& x) {
  Builder b(x, Phase::Forward);
  // Vocab-parallel lookup: each rank fills the rows of its vocabulary slice, then the
  // partial embeddings are summed over TP (reduce-scattered along the sequence with SP).
  b.elementwise("embedding", x.tokens * x.h, 3 * x.elem);
  b.tp_reduce("tp_reduce");
  if (x.dropout) b.elementwise("embedding_dropout", x.region_tokens * x.h, dropout_bytes(x));
  return b.take();
}

OpProgram embedding_backward(const LayerShape& x) {
  Builder b(x, Phase::Backward);
  if (x.dropout) b.elementwise("embedding_dropout.backward", x.region_tokens * x.h, dropout_bytes(x));
  b.sp_gather("sp_all_gather");
  b.elementwise("embedding.backward", x.tokens * x.h, x.elem + 8);  // fp32 scatter-add into the grad buffer
  return b.take();
}

OpProgram output_forward(const LayerShape& x) {
  Builder b(x, Phase::Forward);
  b.elementwise("final_norm", x.region_tokens * x.h, 2 * x.elem, 8);
  b.sp_gather("sp_all_gather");
  b.gemm("logits", x.tokens, x.vocab, x.h);
  // Vocab-parallel cross-entropy in fp32: cast, max, exp-sum, loss — about five passes.
  b.elementwise("cross_entropy", x.tokens * x.vocab, x.elem + 16, 6);
  b.collective("cross_entropy.all_reduce", CollectiveKind::AllReduce, 3.0 * 4.0 * static_cast<double>(x.tokens));
  return b.take();
}

OpProgram output_backward(const LayerShape& x) {
  Builder b(x, Phase::Backward);
  b.elementwise("cross_entropy.backward", x.tokens * x.vocab, x.elem + 8, 3);
  b.gemm("logits.dgrad", x.tokens, x.h, x.vocab);
  const int wgrad = b.gemm("logits.wgrad", x.h, x.vocab, x.tokens);
  b.tp_reduce("tp_reduce.input_grad", wgrad);
  b.elementwise("final_norm.backward", x.region_tokens * x.h, 4 * x.elem, 12);
  b.elementwise("main_grad_accumulate", x.h * x.vocab, 8, 1);
  return b.take();
}

OpProgram pipeline_receive(const LayerShape& x) {
  Builder b(x, Phase::Forward);
  if (!x.sequence_parallel) b.collective("p2p.all_gather", CollectiveKind::AllGather, b.activation());
  return b.take();
}

ProgramCost& ProgramCost::operator+=(const ProgramCost& o) {
  span_s = std::max(span_s + o.device(), host_s + o.span_s);
  compute_s += o.compute_s;
  comm_exposed_s += o.comm_exposed_s;
  measured_s += o.measured_s;
  flops += o.flops;
  host_s += o.host_s;
  return *this;
}

ProgramCost ProgramCost::repeated(int n) const {
  if (n <= 0) return {};
  const double f = n;
  return {compute_s * f, comm_exposed_s * f, measured_s * f, flops * f, host_s * f,
          span_s + (f - 1) * std::max(device(), host_s)};
}

ProgramCost ProgramCost::host_only(double seconds) {
  ProgramCost p;
  p.host_s = p.span_s = seconds;
  return p;
}

ProgramCost cost_of(const OpProgram& program, const CostSource& costs) {
  std::vector<OpCost> kernels(program.size());
  for (std::size_t i = 0; i < program.size(); ++i)
    if (!program[i].is_collective) kernels[i] = costs.compute(program[i].op);
  // In program order, each op after the last: the flow shop's span accumulates op by op.
  ProgramCost total;
  for (std::size_t i = 0; i < program.size(); ++i) {
    const ProgramStep& step = program[i];
    ProgramCost op;
    if (!step.is_collective) {
      const OpCost& c = kernels[i];
      op.compute_s = c.seconds;
      op.flops = step.op.flops;
      op.host_s = c.host_s;
      if (c.measured) op.measured_s = c.seconds;
    } else {
      const OpCost c = costs.collective(step.comm);
      const double hidden = step.hides_behind >= 0 ? kernels[static_cast<std::size_t>(step.hides_behind)].seconds : 0.0;
      op.comm_exposed_s =
          std::max(0.0, c.seconds - hidden) + costs.overlap_interference() * std::min(c.seconds, hidden);
      op.host_s = c.host_s;
      if (c.measured) op.measured_s = op.comm_exposed_s;
    }
    op.span_s = op.host_s + op.device();
    total += op;
  }
  return total;
}

}  // namespace cc
