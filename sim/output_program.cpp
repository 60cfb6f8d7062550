// The embedding's and the output layer's programs (with the loss and multi-token prediction)
// and the pipeline's receive, built as layer_program.h describes.
#include <cstdint>

#include "sim/layer_program.h"
#include "sim/program_builder.h"

namespace cc {

using program::Builder;
using program::dropout_bytes;

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

namespace {

// The output layer over the rank's hidden states: final norm, logits over this rank's
// vocabulary slice, and vocab-parallel cross-entropy in fp32. Megatron-Core's plain loss
// (tensor_parallel/cross_entropy.py) passes over the logits slice six times: the fp32 cast
// (e + 4 bytes per element), the max (4), the in-place shift (8), exp (8), the sum (4) and the
// division into the softmax it keeps (8); each rank's max, target logit and exp-sum are
// all-reduced over TP one after another. --cross-entropy-loss-fusion compiles it into three
// functions: cast and max (e + 4), shift, exp and sum, whose mutated input is written back beside
// a new output (12), and the division (8); the target logits and sums travel in one all-reduce.
// Only the second function is charged the write-back: the measured peak shows its new fp32 output
// beside the shifted copy (memory_model), the division's in-place result aliases its input.
// fp32 logits skip the cast (the max then only reads them).
double cross_entropy_forward_bytes(const LayerShape& x) {
  const bool cast = x.elem != 4;
  if (x.cross_entropy_fusion) return (cast ? x.elem + 4 : 4) + 20;
  return (cast ? x.elem + 4 : 0) + 32;
}

void logits_and_loss_forward(Builder& b, const LayerShape& x) {
  b.elementwise("final_norm", x.region_tokens * x.h, 2 * x.elem, 8);
  b.sp_gather("sp_all_gather");
  b.gemm("logits", x.tokens, x.vocab, x.h);
  if (x.logit_softcap) b.elementwise("logit_softcap", x.tokens * x.vocab, 2 * x.elem, 3);
  b.elementwise("cross_entropy", x.tokens * x.vocab, cross_entropy_forward_bytes(x), 6);
  const double per_token = 4.0 * static_cast<double>(x.tokens);  // one fp32 value per token
  b.collective("cross_entropy.all_reduce", CollectiveKind::AllReduce, per_token);  // the max
  if (x.cross_entropy_fusion) {
    b.collective("cross_entropy.all_reduce", CollectiveKind::AllReduce, 2 * per_token);
  } else {
    b.collective("cross_entropy.all_reduce", CollectiveKind::AllReduce, per_token);
    b.collective("cross_entropy.all_reduce", CollectiveKind::AllReduce, per_token);
  }
}

// The loss's backward: the target entries lowered in the kept softmax, scaled by the loss
// gradient in place (8) and, for 16-bit logits, cast back (4 + e): e + 12 plain. Fused, one kernel
// that writes the mutated softmax back beside a bf16 cast (10), which fused_cross_entropy.py
// hard-codes: fp32 logits then take one more cast back (2 + 4). (fp16 runs are priced as bf16.)
double cross_entropy_backward_bytes(const LayerShape& x) {
  const bool cast = x.elem != 4;
  if (x.cross_entropy_fusion) return 10 + (cast ? 0 : 2 + x.elem);
  return 8 + (cast ? 4 + x.elem : 0);
}

void logits_and_loss_backward(Builder& b, const LayerShape& x) {
  b.elementwise("cross_entropy.backward", x.tokens * x.vocab, cross_entropy_backward_bytes(x), 3);
  if (x.logit_softcap) b.elementwise("logit_softcap.backward", x.tokens * x.vocab, 3 * x.elem, 3);
  b.gemm("logits.dgrad", x.tokens, x.h, x.vocab);
  const int wgrad = b.gemm("logits.wgrad", x.h, x.vocab, x.tokens);
  b.tp_reduce("tp_reduce.input_grad", wgrad);
  b.elementwise("final_norm.backward", x.region_tokens * x.h, 4 * x.elem, 12);
  b.elementwise("main_grad_accumulate", x.h * x.vocab, 2 * x.main_grad_elem, 1);
}

LayerShape mtp_layer_shape(const LayerShape& x) {
  LayerShape layer = x;
  layer.moe.layer = x.mtp_moe;
  return layer;
}

// One multi-token prediction layer (Megatron-Core's MultiTokenPredictionLayer): the shifted
// tokens' embedding (vocab-parallel, summed over TP like the first stage's), its norm and the
// hidden state's, their concatenation projected 2h -> h by a column-parallel linear whose
// output is gathered over TP (and cut back to the rank's SP rows), then one transformer layer
// and the output layer again over the shared table.
void mtp_forward(Builder& b, const LayerShape& x) {
  const std::int64_t region = x.region_tokens * x.h;
  b.elementwise("mtp.embedding", x.tokens * x.h, 3 * x.elem);
  b.tp_reduce("mtp.embedding.tp_reduce");
  b.elementwise("mtp.enorm", region, 2 * x.elem, 8);
  b.elementwise("mtp.hnorm", region, 2 * x.elem, 8);
  b.gathered_gemm("sp_all_gather", "mtp.eh_proj", x.tokens, x.h / x.tp, 2 * x.h);
  b.collective("mtp.eh_proj.all_gather", CollectiveKind::AllGather, b.activation());
  b.append(layer_forward(mtp_layer_shape(x), Phase::Forward));
  logits_and_loss_forward(b, x);
}

void mtp_backward(Builder& b, const LayerShape& x) {
  const std::int64_t region = x.region_tokens * x.h;
  logits_and_loss_backward(b, x);
  b.append(layer_backward(mtp_layer_shape(x)));
  // The SP cut's gradient is gathered back; the TP gather's is a split (no communication).
  b.sp_gather("mtp.sp_all_gather.grad");
  const int dgrad = b.gemm("mtp.eh_proj.dgrad", x.tokens, 2 * x.h, x.h / x.tp);
  b.sp_gather_bytes("sp_all_gather.wgrad_input", 2 * b.activation(), dgrad);
  b.tp_reduce_bytes("tp_reduce.input_grad", 2 * b.activation(), b.gemm("mtp.eh_proj.wgrad", 2 * x.h, x.h / x.tp, x.tokens));
  b.elementwise("mtp.enorm.backward", region, 4 * x.elem, 12);
  b.elementwise("mtp.hnorm.backward", region, 4 * x.elem, 12);
  b.sp_gather("sp_all_gather");
  b.elementwise("mtp.embedding.backward", x.tokens * x.h, x.elem + 8);
  b.elementwise("main_grad_accumulate", 2 * x.h * (x.h / x.tp), 2 * x.main_grad_elem, 1);
}

}  // namespace

OpProgram output_forward(const LayerShape& x) {
  Builder b(x, Phase::Forward);
  logits_and_loss_forward(b, x);
  for (int i = 0; i < x.mtp_layers; ++i) mtp_forward(b, x);
  return b.take();
}

OpProgram output_backward(const LayerShape& x) {
  Builder b(x, Phase::Backward);
  for (int i = 0; i < x.mtp_layers; ++i) mtp_backward(b, x);
  logits_and_loss_backward(b, x);
  return b.take();
}

OpProgram pipeline_receive(const LayerShape& x) {
  Builder b(x, Phase::Forward);
  if (!x.sequence_parallel) b.collective("p2p.all_gather", CollectiveKind::AllGather, b.activation());
  return b.take();
}

}  // namespace cc
