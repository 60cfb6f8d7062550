// cupti_recorder.cpp — CUPTI Activity API plumbing for CuptiRecorder: buffer hand-off, record
// parsing, attribution of device work to annotated ops, and per-op device times.
//
// CUPTI fills activity buffers on its own and hands full ones back on a thread of its own, at
// times of its choosing. The callbacks below therefore only allocate and queue buffers (under
// a mutex); all parsing happens in flush(), on the recording thread, where the recorder's state
// lives without locks.
#include "profiler/cuda/cupti_recorder.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "engine/cuda/cuda_check.h"
#include "profiler/cuda/cupti_check.h"

namespace cc::profiler {

namespace {

// CUPTI's advice is a few MB per buffer; 8 MiB holds ~100k kernel records.
constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr CUpti_ExternalCorrelationKind kCorrelationKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

// What the recorder collects. DRIVER as well as RUNTIME: memcpy and memset records carry the
// correlation id of the driver call that issued them, and libraries (cuBLAS, NCCL) may launch
// kernels through the driver API; the external correlation records come per API record, so
// both kinds of API record are needed to tag all device work.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};

struct CompletedBuffer {
  std::uint8_t* data;
  std::size_t valid_bytes;
};

// Buffers CUPTI has filled and handed back, waiting for flush(). Allocated once and never
// destroyed: CUPTI's thread may still deliver while the process exits.
struct Handoff {
  std::mutex mutex;
  std::vector<CompletedBuffer> completed;
};
Handoff& handoff() {
  static Handoff* const h = new Handoff;
  return *h;
}

std::atomic<bool> recorder_alive{false};  // CUPTI's buffers are process-wide: one recorder at a time

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  // Activity records must be 8-byte aligned. A null buffer makes CUPTI drop (and count) records.
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid_bytes) {
  if (buffer == nullptr) return;
  try {
    Handoff& h = handoff();
    const std::lock_guard lock(h.mutex);
    h.completed.push_back({buffer, valid_bytes});
  } catch (...) {  // no exception may cross back into CUPTI; the records are lost
    std::free(buffer);
  }
}

std::vector<CompletedBuffer> take_completed() {
  Handoff& h = handoff();
  const std::lock_guard lock(h.mutex);
  return std::exchange(h.completed, {});
}

struct FreeBuffer {
  void operator()(std::uint8_t* p) const { std::free(p); }
};

void free_all(std::vector<CompletedBuffer>& buffers) {
  for (const auto& b : buffers) std::free(b.data);
  buffers.clear();
}

// The calling thread's current driver context, or nullptr; through the runtime's entry-point
// query, so this library needs no link against libcuda (which exists only where a driver does).
CUcontext current_context() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 4000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || fn == nullptr)
    return nullptr;
  CUcontext context = nullptr;
  if (reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(fn)(&context) != CUDA_SUCCESS) return nullptr;
  return context;
}

// The innermost occurrence open at host time t (-1: none). Occurrences are in begin order on
// one thread and nest, so: the last one begun by t, else its enclosing ones.
long open_at(const std::vector<OpOccurrence>& occurrences, std::uint64_t t) {
  const auto after = std::upper_bound(occurrences.begin(), occurrences.end(), t,
                                      [](std::uint64_t v, const OpOccurrence& o) { return v < o.host_begin_ns; });
  long i = static_cast<long>(after - occurrences.begin()) - 1;
  while (i >= 0 && occurrences[static_cast<std::size_t>(i)].host_end_ns < t)
    i = occurrences[static_cast<std::size_t>(i)].parent;
  return i;
}

// The occurrence an activity's correlation id(s) point to, or -1.
long tagged(const GpuActivity& a, const std::vector<OpOccurrence>& occurrences, const CorrelationLinks& links) {
  for (const std::uint32_t id : {a.correlation, a.runtime_correlation}) {
    if (id == 0) continue;
    if (const auto it = links.external.find(id); it != links.external.end() && it->second < occurrences.size())
      return static_cast<long>(it->second);
  }
  for (const std::uint32_t id : {a.correlation, a.runtime_correlation}) {
    if (id == 0) continue;
    if (const auto it = links.launch_ns.find(id); it != links.launch_ns.end()) return open_at(occurrences, it->second);
  }
  return -1;
}

}  // namespace

bool waits_for_device(std::string_view name) {
  if (name.find("Synchronize") != std::string_view::npos) return true;
  const bool copy = name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy");
  return copy && name.find("Async") == std::string_view::npos;
}

std::size_t attribute_activities(std::span<GpuActivity> activities, const std::vector<OpOccurrence>& occurrences,
                                 const CorrelationLinks& links) {
  std::size_t unattributed = 0;
  for (GpuActivity& a : activities) {
    a.occurrence = tagged(a, occurrences, links);
    // NCCL kernels may be launched from inside a helper scope of the collective (or the op
    // that wraps it); their time is the collective's.
    if (a.kind == GpuActivity::Kind::Kernel && a.name.find("nccl") != std::string_view::npos) {
      long c = a.occurrence;
      while (c >= 0 && !occurrences[static_cast<std::size_t>(c)].op.collective)
        c = occurrences[static_cast<std::size_t>(c)].parent;
      if (c >= 0) a.occurrence = c;
    }
    if (a.occurrence < 0 && a.kind == GpuActivity::Kind::Kernel) ++unattributed;
  }
  return unattributed;
}

std::vector<RecordedOp> device_times(const std::vector<OpOccurrence>& occurrences, const std::vector<long>& ended,
                                     std::span<const GpuActivity> activities, std::uint64_t origin_ns,
                                     std::span<const DeviceWait> waits) {
  constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
  const std::size_t n = occurrences.size();
  std::vector<std::uint64_t> own_ns(n, 0), first_ns(n, none), last_ns(n, 0);
  for (const GpuActivity& a : activities) {
    if (a.occurrence < 0 || static_cast<std::size_t>(a.occurrence) >= n) continue;
    const auto i = static_cast<std::size_t>(a.occurrence);
    own_ns[i] += a.end_ns - a.start_ns;
    first_ns[i] = std::min(first_ns[i], a.start_ns);
    last_ns[i] = std::max(last_ns[i], a.end_ns);
  }
  // A parent begins before its children, so one backward pass carries every span upward.
  for (std::size_t i = n; i-- > 0;) {
    const long p = occurrences[i].parent;
    if (p < 0) continue;
    first_ns[static_cast<std::size_t>(p)] = std::min(first_ns[static_cast<std::size_t>(p)], first_ns[i]);
    last_ns[static_cast<std::size_t>(p)] = std::max(last_ns[static_cast<std::size_t>(p)], last_ns[i]);
  }
  // Host: each ended occurrence's span, less its ended children's spans and its own waits.
  std::vector<double> host_ns(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const OpOccurrence& o = occurrences[i];
    if (o.host_end_ns == none || o.host_end_ns < o.host_begin_ns) continue;  // still open
    const double span = static_cast<double>(o.host_end_ns - o.host_begin_ns);
    host_ns[i] += span;
    if (o.parent >= 0) host_ns[static_cast<std::size_t>(o.parent)] -= span;
  }
  for (const DeviceWait& w : waits) {
    const long at = open_at(occurrences, w.begin_ns);
    if (at >= 0 && w.end_ns > w.begin_ns) host_ns[static_cast<std::size_t>(at)] -= static_cast<double>(w.end_ns - w.begin_ns);
  }
  const auto seconds_since_origin = [origin_ns](std::uint64_t t) {
    return static_cast<double>(static_cast<std::int64_t>(t - origin_ns)) * 1e-9;
  };
  std::vector<RecordedOp> events;
  events.reserve(ended.size());
  for (const long e : ended) {
    const auto i = static_cast<std::size_t>(e);
    const OpOccurrence& o = occurrences[i];
    RecordedOp r{o.op, o.step};
    r.host_self_s = std::max(0.0, host_ns[i]) * 1e-9;
    if (first_ns[i] != none) {
      r.start_s = seconds_since_origin(first_ns[i]);
      r.duration_s = static_cast<double>(last_ns[i] - first_ns[i]) * 1e-9;
      r.self_s = static_cast<double>(own_ns[i]) * 1e-9;
    } else {
      r.start_s = seconds_since_origin(o.host_begin_ns);  // no device work: a point on the timeline
    }
    events.push_back(r);
  }
  return events;
}

CuptiRecorder::CuptiRecorder() {
  if (recorder_alive.exchange(true)) throw std::logic_error("CuptiRecorder: only one recorder may exist at a time");
  try {
    // Registered once per process: the callbacks are plain functions feeding the hand-off queue.
    static std::once_flag registered;
    std::call_once(registered, [] { CC_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)); });
    auto stale = take_completed();  // delivered after an earlier recorder had gone
    free_all(stale);
    for (const CUpti_ActivityKind kind : kKinds) CC_CUPTI(cuptiActivityEnable(kind));
    CC_CUPTI(cuptiGetTimestamp(&origin_ns_));
  } catch (...) {
    for (const CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
    recorder_alive = false;
    throw;
  }
}

CuptiRecorder::~CuptiRecorder() {
  // Scopes still open (an exception unwound past them with the recorder gone): leave the
  // thread's correlation and NVTX stacks as we found them.
  for (std::size_t i = 0; i < open_.size(); ++i) {
    cuptiActivityPopExternalCorrelationId(kCorrelationKind, nullptr);
    nvtxRangePop();
  }
  for (const CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  auto rest = take_completed();
  free_all(rest);
  recorder_alive = false;
}

void CuptiRecorder::begin(const engine::OpAnnotation& op) {
  if (std::strcmp(op.name, kStepScope) == 0) step_ = static_cast<long>(op.shape[0]);
  const long index = static_cast<long>(occurrences_.size());
  OpOccurrence o{op, step_, open_.empty() ? -1 : open_.back()};
  CC_CUPTI(cuptiGetTimestamp(&o.host_begin_ns));
  // Tag first: if CUPTI refuses, the scope never opened and end() will not be called for it.
  CC_CUPTI(cuptiActivityPushExternalCorrelationId(kCorrelationKind, static_cast<std::uint64_t>(index)));
  occurrences_.push_back(o);
  open_.push_back(index);
  nvtxRangePushA(op.name);
}

void CuptiRecorder::end(const engine::OpAnnotation& op) {
  if (open_.empty() || std::strcmp(occurrences_[static_cast<std::size_t>(open_.back())].op.name, op.name) != 0)
    throw std::logic_error(std::string("CuptiRecorder: scope '") + op.name + "' ended out of order");
  nvtxRangePop();
  CC_CUPTI(cuptiActivityPopExternalCorrelationId(kCorrelationKind, nullptr));
  const long index = open_.back();
  open_.pop_back();
  CC_CUPTI(cuptiGetTimestamp(&occurrences_[static_cast<std::size_t>(index)].host_end_ns));
  ended_.push_back(index);
  if (std::strcmp(op.name, kStepScope) == 0) step_ = -1;
}

const std::vector<RecordedOp>& CuptiRecorder::flush() {
  // A forced flush also returns records still missing their timestamps; waiting for the device
  // first means every launched activity has them.
  CC_CUDA(cudaDeviceSynchronize());
  CC_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::vector<CompletedBuffer> buffers = take_completed();
  // Owned from here, so a parse error frees every buffer.
  std::vector<std::unique_ptr<std::uint8_t, FreeBuffer>> owned;
  owned.reserve(buffers.size());
  for (const auto& b : buffers) owned.emplace_back(b.data);

  CorrelationLinks links;
  const std::size_t first_new = activities_.size();
  for (const auto& b : buffers) parse(b.data, b.valid_bytes, links);
  // Everything launched before this flush has its records in now, so the links are complete
  // for the new activities and need not outlive the flush.
  unattributed_ += attribute_activities(std::span(activities_).subspan(first_new), occurrences_, links);
  waits_.insert(waits_.end(), links.waits.begin(), links.waits.end());
  count_dropped();
  events_ = device_times(occurrences_, ended_, activities_, origin_ns_, waits_);
  return events_;
}

void CuptiRecorder::parse(std::uint8_t* buffer, std::size_t valid_bytes, CorrelationLinks& links) {
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_bytes, &record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) return;  // end of the buffer
    if (status == CUPTI_ERROR_INVALID_KIND) {             // an incomplete record ends what can be read
      ++dropped_;
      return;
    }
    CC_CUPTI(status);
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        add({GpuActivity::Kind::Kernel, intern(k->name), k->start, k->end, k->deviceId, k->streamId, k->correlationId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        add({GpuActivity::Kind::Memcpy, "memcpy", m->start, m->end, m->deviceId, m->streamId, m->correlationId,
             m->runtimeCorrelationId, m->bytes});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        add({GpuActivity::Kind::Memset, "memset", m->start, m->end, m->deviceId, m->streamId, m->correlationId, 0,
             m->bytes});
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(record);
        links.launch_ns[api->correlationId] = api->start;
        const char* name = nullptr;
        const CUpti_CallbackDomain domain =
            record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
        if (cuptiGetCallbackName(domain, api->cbid, &name) == CUPTI_SUCCESS && name != nullptr &&
            waits_for_device(name))
          links.waits.push_back({api->start, api->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (x->externalKind == kCorrelationKind) links.external[x->correlationId] = x->externalId;
        break;
      }
      default:
        break;
    }
  }
}

void CuptiRecorder::add(GpuActivity a) {
  // CUPTI leaves timestamps at 0 when it had no device memory to take them: the work ran but
  // its time is lost, which is as good as a dropped record.
  if (a.start_ns == 0 || a.end_ns < a.start_ns) {
    ++dropped_;
    return;
  }
  streams_.insert(a.stream);
  activities_.push_back(a);
}

void CuptiRecorder::count_dropped() {
  std::size_t dropped = 0;
  CC_CUPTI(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));  // the global queue
  dropped_ += dropped;
  // And the per-context/stream queues of this thread's context (the engine drives one device
  // per process); each call also resets its count. Since CUDA 6 CUPTI keeps its buffers global,
  // so these are a belt to the braces above: a stream CUPTI does not know here (another
  // device's) is no error worth failing a profile for, only one with nothing to count.
  if (CUcontext context = current_context()) {
    streams_.insert(0);
    for (const std::uint32_t stream : streams_) {
      dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) dropped_ += dropped;
    }
  }
}

std::string_view CuptiRecorder::intern(const char* name) {
  if (name == nullptr) return "kernel";
  return *names_.insert(name).first;
}

}  // namespace cc::profiler
