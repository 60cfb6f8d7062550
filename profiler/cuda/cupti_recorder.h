// cupti_recorder.h — the CUDA backend's profiler: records what the GPU actually ran (kernels,
// memcpys, memsets) with the CUPTI Activity API and charges every piece of device work to the
// engine's annotated op that launched it. The CPU backend times the same scopes with the host
// clock (HostRecorder); host time says little on a GPU, where launches return at once and the
// work runs later, so here an op's time is the device time of its own work.
//
// Attribution: begin(op) pushes a CUPTI external correlation id (the index of this op
// occurrence) and an NVTX range with the op's name (so Nsight Systems shows the same names);
// CUPTI then tags every driver/runtime API call made inside the scope with that id, and every
// kernel, memcpy and memset carries the correlation id of the API call that launched it.
// Nested scopes: the innermost open op owns the work. NCCL kernels belong to the collective op
// (collective=true) around them.
//
// Output: the profiler's own RecordedOp (profiler/host_recorder.h), one per ended occurrence,
// with self_s = the summed device time of the occurrence's own work and duration_s = the span
// from the first to the last device activity of it and its nested ops, so summarize_ops and
// step_coverage (profiler/op_statistics.h) work unchanged on GPU data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/annotations.h"
#include "profiler/host_recorder.h"

namespace cc::profiler {

// One annotated scope as the recorder saw it on the host. Times are on CUPTI's clock
// (cuptiGetTimestamp), the clock every activity record is stamped with.
struct OpOccurrence {
  engine::OpAnnotation op;  // names are string literals of the engine: safe to keep
  long step = -1;           // the train_step it ran in; -1 outside any step
  long parent = -1;         // index of the enclosing occurrence; -1 at the top level
  std::uint64_t host_begin_ns = 0;
  std::uint64_t host_end_ns = std::numeric_limits<std::uint64_t>::max();  // max: still open
};

// One piece of device work, from one activity record.
struct GpuActivity {
  enum class Kind { Kernel, Memcpy, Memset };
  Kind kind = Kind::Kernel;
  std::string_view name;  // the kernel's (mangled) name, or "memcpy" / "memset"
  std::uint64_t start_ns = 0, end_ns = 0;  // device timestamps on CUPTI's clock
  std::uint32_t device = 0, stream = 0;
  std::uint32_t correlation = 0;          // of the launching API call (driver API for memcpy/memset)
  std::uint32_t runtime_correlation = 0;  // memcpy: of the runtime API call too; 0 otherwise
  std::uint64_t bytes = 0;                // memcpy / memset
  long occurrence = -1;                   // the op occurrence it is charged to; -1: none
};

// Host time inside one API call that waits for the device (a synchronize, a blocking copy):
// the host was not issuing work then, so it is not the op's host time.
struct DeviceWait {
  std::uint64_t begin_ns = 0, end_ns = 0;  // on CUPTI's clock
};

// Whether the runtime or driver API function `name` (CUPTI's name, e.g. "cudaMemcpy_v3020")
// waits for the device: the synchronize calls and the copies without "Async".
bool waits_for_device(std::string_view name);

// How one flush's activity records link device work back to host calls.
struct CorrelationLinks {
  std::unordered_map<std::uint32_t, std::uint64_t> external;   // API correlation id -> occurrence index
  std::unordered_map<std::uint32_t, std::uint64_t> launch_ns;  // API correlation id -> host start of the call
  std::vector<DeviceWait> waits;                               // calls that waited for the device
};

// Charges each activity to an occurrence: through its external correlation id, else (a call
// CUPTI did not tag) to the innermost occurrence open when the launching call started; NCCL
// kernels then move up to the enclosing collective op. `occurrences` must be in begin order
// on one thread (as the recorder keeps them). Returns the number of kernels left unattributed.
std::size_t attribute_activities(std::span<GpuActivity> activities, const std::vector<OpOccurrence>& occurrences,
                                 const CorrelationLinks& links);

// One RecordedOp per ended occurrence, in the order they ended (as HostRecorder emits them):
// self_s = device time of the occurrence's own activities, duration_s = span of its own and its
// nested occurrences' activities, start_s = first device activity (or, with none, the host
// begin) relative to origin_ns; host_self_s = the occurrence's host span minus its nested
// occurrences' spans and minus the device waits that began inside it and in none of them (the
// host's own time to issue the op). Times are ns on CUPTI's clock.
std::vector<RecordedOp> device_times(const std::vector<OpOccurrence>& occurrences, const std::vector<long>& ended,
                                     std::span<const GpuActivity> activities, std::uint64_t origin_ns,
                                     std::span<const DeviceWait> waits = {});

// Construct BEFORE the first CUDA call of the process that creates a context (cudaMalloc,
// cudaSetDevice, a cuBLAS handle...): CUPTI then hooks every context from its first launch, and
// nothing the process launches escapes the trace. (cudaGetDeviceCount, as no_gpu_reason()
// calls it, creates no context.) Nothing here touches CUPTI before construction, so a binary
// that holds no recorder starts, and runs, on a machine without a driver.
//
// One recorder at a time per process (CUPTI's activity buffers are process-wide); begin, end
// and flush on the thread that launches the GPU work.
class CuptiRecorder final : public engine::OpRecorder {
 public:
  CuptiRecorder();
  ~CuptiRecorder() override;  // disables the activities and flushes; never throws
  CuptiRecorder(const CuptiRecorder&) = delete;
  CuptiRecorder& operator=(const CuptiRecorder&) = delete;

  void begin(const engine::OpAnnotation& op) override;
  void end(const engine::OpAnnotation& op) override;

  // Waits for the device, collects every record CUPTI holds and attributes it; returns every
  // ended occurrence so far (events()). Call between runs, not inside an op.
  const std::vector<RecordedOp>& flush();

  const std::vector<RecordedOp>& events() const { return events_; }
  // The timeline: every device activity collected so far; `occurrence` indexes occurrences().
  const std::vector<GpuActivity>& activities() const { return activities_; }
  const std::vector<OpOccurrence>& occurrences() const { return occurrences_; }
  // Records CUPTI could not deliver (no buffer space) or delivered without timestamps; a run
  // with any is incomplete and the caller says so.
  std::size_t dropped_records() const { return dropped_; }
  // Kernels launched outside every annotated op (their time is in no op's self time).
  std::size_t unattributed_kernels() const { return unattributed_; }

 private:
  void parse(std::uint8_t* buffer, std::size_t valid_bytes, CorrelationLinks& links);
  void add(GpuActivity a);
  void count_dropped();
  std::string_view intern(const char* name);

  std::uint64_t origin_ns_ = 0;  // CUPTI clock at construction: start_s counts from here
  long step_ = -1;
  std::vector<OpOccurrence> occurrences_;
  std::vector<long> open_;   // indices of the open occurrences, innermost last
  std::vector<long> ended_;  // indices in the order they ended
  std::vector<GpuActivity> activities_;
  std::vector<DeviceWait> waits_;
  std::unordered_set<std::string> names_;  // kernel names: CUPTI's strings are not ours to keep
  std::unordered_set<std::uint32_t> streams_;
  std::vector<RecordedOp> events_;
  std::size_t dropped_ = 0;
  std::size_t unattributed_ = 0;
};

}  // namespace cc::profiler
