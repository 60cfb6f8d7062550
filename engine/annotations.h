// annotations.h — the one small interface through which every compute op and collective of
// the engine says what it is: name, phase (forward / backward / recompute), layer,
// microbatch and shape. The CPU profiler times these scopes with the host clock; the CUDA
// backend emits the same annotations as NVTX ranges. Without a recorder a scope costs a
// pointer test.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "sim/ops.h"

namespace cc::engine {

struct OpAnnotation {
  const char* name = "";
  Phase phase = Phase::Forward;
  int layer = -1;       // global layer index; -1 outside transformer layers
  int microbatch = -1;
  std::array<std::int64_t, 4> shape{};  // GEMM: m, n, k, batch; elementwise: elements; collectives: bytes
  bool collective = false;
  CollectiveKind kind = CollectiveKind::AllReduce;  // collectives only: how the sweep names it
};

class OpRecorder {
 public:
  virtual ~OpRecorder() = default;
  virtual void begin(const OpAnnotation& op) = 0;
  virtual void end(const OpAnnotation& op) = 0;
};

// The recorder in force for this process (nullptr: none). Set by the profiler.
OpRecorder*& active_recorder();

// What this rank is doing now: the innermost annotated op, read by the stall watchdog
// (stall_watchdog.h) from its own thread. Op names are string literals, so a read that races
// with a scope's end still names a real op. Relaxed loads and stores: plain moves on x86.
struct CurrentOp {
  std::atomic<const char*> name{nullptr};
  std::atomic<bool> collective{false};
};
CurrentOp& current_op();

class ScopedOp {
 public:
  explicit ScopedOp(const OpAnnotation& op)
      : op_(op),
        outer_name_(current_op().name.load(std::memory_order_relaxed)),
        outer_collective_(current_op().collective.load(std::memory_order_relaxed)) {
    current_op().name.store(op_.name, std::memory_order_relaxed);
    current_op().collective.store(op_.collective, std::memory_order_relaxed);
    if (OpRecorder* r = active_recorder()) r->begin(op_);
  }
  ~ScopedOp() {
    if (OpRecorder* r = active_recorder()) r->end(op_);
    current_op().name.store(outer_name_, std::memory_order_relaxed);
    current_op().collective.store(outer_collective_, std::memory_order_relaxed);
  }
  ScopedOp(const ScopedOp&) = delete;
  ScopedOp& operator=(const ScopedOp&) = delete;

 private:
  OpAnnotation op_;
  const char* outer_name_;
  bool outer_collective_;
};

}  // namespace cc::engine
