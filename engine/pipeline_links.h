// pipeline_links.h — which point-to-point link a pipeline transfer travels on, for backends
// whose transfers need a fixed channel per (link, direction) rather than MPI tags (the CUDA
// backend: one 2-rank NCCL communicator each). Link l joins stage l to stage (l+1) mod p:
// activations travel up it (stage l sends, rank 0 of the link), gradients down it (stage
// l+1 sends, rank 1). Link p-1, from the last stage back to the first, carries the
// interleaved schedule's chunk-to-chunk transfers only. Pure functions, tested on the CPU
// against every schedule (tests/unit/test_pipeline_schedule.cpp).
#pragma once

namespace cc::engine {

// The link stage `stage` of `stages` uses to send or receive activations (forward) or
// gradients (backward).
constexpr int pipeline_link(int stage, int stages, bool forward, bool sending) {
  return forward == sending ? stage : (stage - 1 + stages) % stages;
}

// Whether `stage` is the sending end of link `link`'s activation (forward) or gradient channel.
constexpr bool sends_on_link(int stage, int link, bool forward) { return forward == (stage == link); }

// Links a schedule uses: p-1 of them, plus the wrap link when interleaved (p > 1 only).
constexpr int pipeline_links_used(int stages, bool interleaved) {
  return stages < 2 ? 0 : interleaved ? stages : stages - 1;
}

}  // namespace cc::engine
