// host_allocator.h — the CPU engine keeps the host memory it frees, as PyTorch's caching
// allocator keeps GPU memory for Megatron-LM.
//
// Why: glibc hands blocks above its mmap threshold straight back to the kernel on free and
// trims the heap top, so every step that allocated its activations afresh page-faulted them
// in again. The cost landed on whichever op first touched new memory and grew with how much
// a step keeps: on `small` (TP 1, micro batch 2, 2 ranks, 2026-12-02) a forward attention
// score GEMM took 3.69 ms with recompute none and 1.99 ms with selective, the optimizer step
// 115 ms against 88 ms, so a layout's op costs depended on its recompute mode and pipeline
// depth, which a profile of another layout cannot know (traces/validation-cpu.md had every
// recomputing layout over-predicted). Kept, the same ops cost the same in every mode
// (2.08 / 2.13 / 2.13 ms for none / selective / full) and the optimizer step 71–76 ms.
#pragma once

namespace cc::engine {

// Call once, first thing in the process, before the engine allocates. Harmless when the
// allocator is not glibc's (a sanitizer's, say): the setting is then ignored.
void keep_freed_host_memory();

}  // namespace cc::engine
