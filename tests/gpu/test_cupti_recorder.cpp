// The GPU profiler: CuptiRecorder charges device work (memsets, cuBLAS and NCCL kernels) to the
// annotated ops that launched it and reports per-op device times in the CPU profiler's own
// RecordedOp; gpu_fingerprint reads the device and library versions. Those tests skip, saying
// why, without a GPU. The attribution and device-time logic is plain data in, plain data out,
// and is tested here without one (GpuAttribution, GpuVersionStrings).
//
// The recorder documents "construct before the first CUDA call"; in this binary other GPU tests
// create a context first, so these also check that CUPTI attaches to a running process.
#include <gtest/gtest.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/annotations.h"
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/device_buffer.h"
#include "profiler/cuda/cupti_recorder.h"
#include "profiler/cuda/gpu_fingerprint.h"
#include "profiler/host_recorder.h"

namespace cc::profiler {
namespace {

engine::OpAnnotation op(const char* name, bool collective = false, std::int64_t size = 1) {
  return {name, Phase::Forward, -1, -1, {size, 1, 1, 1}, collective};
}

const RecordedOp* find_event(const std::vector<RecordedOp>& events, const char* name) {
  for (const auto& e : events)
    if (std::strcmp(e.op.name, name) == 0) return &e;
  return nullptr;
}

long find_occurrence(const CuptiRecorder& r, const char* name) {
  const auto& o = r.occurrences();
  for (std::size_t i = 0; i < o.size(); ++i)
    if (std::strcmp(o[i].op.name, name) == 0) return static_cast<long>(i);
  return -1;
}

// "major.minor.patch", all digits.
bool is_dotted_version(const std::string& s) {
  int dots = 0;
  bool digit_before = false;
  for (const char c : s) {
    if (c == '.') {
      if (!digit_before) return false;
      ++dots;
      digit_before = false;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      digit_before = true;
    } else {
      return false;
    }
  }
  return dots == 2 && digit_before;
}

class CuptiRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = cuda::no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
    recorder_ = std::make_unique<CuptiRecorder>();  // before this test's own CUDA work
  }
  std::unique_ptr<CuptiRecorder> recorder_;
};

constexpr int kN = 512;  // GEMM size: a few microseconds of device work

void sgemm(const cuda::CublasHandle& blas, const float* a, const float* b, float* c) {
  const float one = 1.0f, zero = 0.0f;
  CC_CUBLAS(cublasSgemm(blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, a, kN, b, kN, &zero, c, kN));
}

TEST_F(CuptiRecorderTest, ChargesMemsetsAndGemmKernelsToTheirOps) {
  const std::size_t n = std::size_t{kN} * kN;
  cuda::DeviceBuffer<float> a(n), b(n), c(n);
  cuda::Stream stream;
  cuda::CublasHandle blas;
  CC_CUBLAS(cublasSetStream(blas.get(), stream.get()));
  {
    const RecorderInstalled installed(*recorder_);
    {
      const engine::ScopedOp fill(op("fill"));
      for (auto* buffer : {&a, &b, &c}) CC_CUDA(cudaMemsetAsync(buffer->data(), 0, n * sizeof(float), stream.get()));
    }
    {
      const engine::ScopedOp gemm(op("gemm"));
      sgemm(blas, a.data(), b.data(), c.data());
    }
  }
  stream.synchronize();
  const std::vector<RecordedOp>& events = recorder_->flush();

  EXPECT_EQ(recorder_->dropped_records(), 0u);
  const RecordedOp* fill = find_event(events, "fill");
  const RecordedOp* gemm = find_event(events, "gemm");
  ASSERT_NE(fill, nullptr);
  ASSERT_NE(gemm, nullptr);
  EXPECT_GT(fill->self_s, 0);
  EXPECT_GT(gemm->self_s, 0);
  EXPECT_GT(gemm->duration_s, 0);

  const long fill_at = find_occurrence(*recorder_, "fill"), gemm_at = find_occurrence(*recorder_, "gemm");
  int memsets = 0, kernels = 0;
  std::uint64_t fill_last_end = 0, gemm_first_start = UINT64_MAX;
  for (const GpuActivity& x : recorder_->activities()) {
    EXPECT_GT(x.start_ns, 0u);
    EXPECT_GE(x.end_ns, x.start_ns);
    if (x.occurrence == fill_at) {
      EXPECT_EQ(x.kind, GpuActivity::Kind::Memset) << x.name;
      ++memsets;
      fill_last_end = std::max(fill_last_end, x.end_ns);
    } else if (x.occurrence == gemm_at) {
      EXPECT_EQ(x.kind, GpuActivity::Kind::Kernel) << x.name;
      ++kernels;
      gemm_first_start = std::min(gemm_first_start, x.start_ns);
    }
  }
  EXPECT_EQ(memsets, 3);
  EXPECT_GE(kernels, 1);
  // One stream: the device ran the GEMM after the memsets, and the timestamps say so.
  EXPECT_LE(fill_last_end, gemm_first_start);
  EXPECT_LE(fill->start_s + fill->duration_s, gemm->start_s + 1e-9);
}

TEST_F(CuptiRecorderTest, NestedOpsSplitSelfTimeFromSpanWithinTheStep) {
  const std::size_t n = std::size_t{kN} * kN;
  cuda::DeviceBuffer<float> a(n), b(n), c(n);
  cuda::Stream stream;
  cuda::CublasHandle blas;
  CC_CUBLAS(cublasSetStream(blas.get(), stream.get()));
  {
    const RecorderInstalled installed(*recorder_);
    const engine::ScopedOp step({kStepScope, Phase::Forward, -1, -1, {7, 1, 1, 1}, false});
    const engine::ScopedOp outer(op("outer"));
    CC_CUDA(cudaMemsetAsync(a.data(), 0, n * sizeof(float), stream.get()));
    {
      const engine::ScopedOp inner(op("inner"));
      sgemm(blas, a.data(), b.data(), c.data());
    }
  }
  const std::vector<RecordedOp>& events = recorder_->flush();
  EXPECT_EQ(recorder_->dropped_records(), 0u);
  ASSERT_EQ(events.size(), 3u);
  // Emitted as they ended, as HostRecorder does.
  EXPECT_STREQ(events[0].op.name, "inner");
  EXPECT_STREQ(events[1].op.name, "outer");
  EXPECT_STREQ(events[2].op.name, kStepScope);
  const RecordedOp &inner = events[0], &outer = events[1], &step = events[2];
  for (const auto& e : events) EXPECT_EQ(e.step, 7);
  EXPECT_GT(inner.self_s, 0);
  EXPECT_GT(outer.self_s, 0);                      // the memset only
  EXPECT_GE(outer.duration_s, inner.duration_s);   // its span covers the nested GEMM
  EXPECT_GE(outer.duration_s, outer.self_s + inner.self_s - 1e-9);
  EXPECT_EQ(step.self_s, 0);                       // nothing launched directly in the step
  EXPECT_GE(step.duration_s, outer.duration_s);
}

TEST_F(CuptiRecorderTest, CountsKernelsOutsideEveryOp) {
  const std::size_t n = std::size_t{kN} * kN;
  cuda::DeviceBuffer<float> a(n), b(n), c(n);
  cuda::CublasHandle blas;
  {
    const RecorderInstalled installed(*recorder_);
    sgemm(blas, a.data(), b.data(), c.data());  // no ScopedOp around it
  }
  const std::vector<RecordedOp>& events = recorder_->flush();
  EXPECT_TRUE(events.empty());
  EXPECT_GE(recorder_->unattributed_kernels(), 1u);
  EXPECT_EQ(recorder_->dropped_records(), 0u);
}

// NCCL launches kernels only with two or more ranks (a one-rank all-reduce is a copy): on a
// machine with two GPUs this drives both ranks from one thread and requires every NCCL
// kernel to be charged to the collective, even though a compute scope is open inside it.
// With one GPU it checks the weaker claim: the collective's work lands under it.
TEST_F(CuptiRecorderTest, ChargesNcclWorkToTheCollective) {
  int devices = 0;
  CC_CUDA(cudaGetDeviceCount(&devices));
  const int ranks = devices >= 2 ? 2 : 1;
  struct Comms {
    std::vector<ncclComm_t> comms;
    ~Comms() {
      for (ncclComm_t c : comms) ncclCommDestroy(c);
    }
  } nccl;
  nccl.comms.resize(static_cast<std::size_t>(ranks));
  std::vector<int> ids(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) ids[static_cast<std::size_t>(r)] = r;
  CC_NCCL(ncclCommInitAll(nccl.comms.data(), ranks, ids.data()));
  const std::size_t n = 1 << 20;
  std::vector<std::unique_ptr<cuda::DeviceBuffer<float>>> send, recv;
  std::vector<std::unique_ptr<cuda::Stream>> streams;
  for (int r = 0; r < ranks; ++r) {
    CC_CUDA(cudaSetDevice(r));
    send.push_back(std::make_unique<cuda::DeviceBuffer<float>>(n));
    recv.push_back(std::make_unique<cuda::DeviceBuffer<float>>(n));
    streams.push_back(std::make_unique<cuda::Stream>());
  }
  {
    const RecorderInstalled installed(*recorder_);
    const engine::ScopedOp collective(op("allreduce", true, static_cast<std::int64_t>(n * sizeof(float))));
    const engine::ScopedOp helper(op("pack"));  // a compute scope around the launch
    CC_NCCL(ncclGroupStart());
    for (int r = 0; r < ranks; ++r)
      CC_NCCL(ncclAllReduce(send[static_cast<std::size_t>(r)]->data(), recv[static_cast<std::size_t>(r)]->data(), n,
                            ncclFloat, ncclSum, nccl.comms[static_cast<std::size_t>(r)],
                            streams[static_cast<std::size_t>(r)]->get()));
    CC_NCCL(ncclGroupEnd());
  }
  CC_CUDA(cudaSetDevice(0));
  const std::vector<RecordedOp>& events = recorder_->flush();
  EXPECT_EQ(recorder_->dropped_records(), 0u);
  const RecordedOp* allreduce = find_event(events, "allreduce");
  ASSERT_NE(allreduce, nullptr);
  EXPECT_GT(allreduce->duration_s, 0);
  const long collective_at = find_occurrence(*recorder_, "allreduce");
  int nccl_kernels = 0;
  for (const GpuActivity& x : recorder_->activities()) {
    if (x.kind == GpuActivity::Kind::Kernel && x.name.find("nccl") != std::string_view::npos) {
      ++nccl_kernels;
      EXPECT_EQ(x.occurrence, collective_at) << x.name;
    }
  }
  if (ranks >= 2) {
    EXPECT_GE(nccl_kernels, ranks);  // one per rank at least
  }
}

TEST(GpuFingerprint, FillsDeviceAndVersions) {
  if (const std::string why = cuda::no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
  const MachineFingerprint m = gpu_fingerprint(0);
  EXPECT_EQ(m.backend, "cuda");
  EXPECT_FALSE(m.gpu_name.empty());
  EXPECT_GT(m.gpu_sms, 0);
  EXPECT_GT(m.gpu_clock_mhz, 100);
  for (const std::string* v : {&m.driver_version, &m.cuda_version, &m.nccl_version, &m.cublas_version})
    EXPECT_TRUE(is_dotted_version(*v)) << *v;

  MachineFingerprint cpu;
  cpu.backend = "cpu";
  cpu.cpu_model = "some CPU";
  const MachineFingerprint merged = with_gpu(cpu, m);
  EXPECT_EQ(merged.backend, "cuda");
  EXPECT_EQ(merged.cpu_model, "some CPU");
  EXPECT_EQ(merged.gpu_name, m.gpu_name);
}

// ---- Without a GPU: attribution and device times on hand-made records. ----

// train_step(0) [0, 1000] > fwd(1) [100, 400] > pack(2) [150, 200]; coll(3) [500, 900] collective
// > glue(4) [600, 700]. Times in ns on CUPTI's clock.
std::vector<OpOccurrence> sample_occurrences() {
  return {
      {{kStepScope, Phase::Forward, -1, -1, {3, 1, 1, 1}, false}, 3, -1, 0, 1000},
      {op("fwd"), 3, 0, 100, 400},
      {op("pack"), 3, 1, 150, 200},
      {op("coll", true), 3, 0, 500, 900},
      {op("glue"), 3, 3, 600, 700},
  };
}

GpuActivity kernel(const char* name, std::uint32_t correlation, std::uint64_t start, std::uint64_t end) {
  GpuActivity a;
  a.name = name;
  a.correlation = correlation;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

TEST(GpuAttribution, TaggedWorkGoesToTheInnermostOpAndNcclToItsCollective) {
  const auto occurrences = sample_occurrences();
  CorrelationLinks links;
  links.external = {{1, 2}, {2, 1}, {3, 4}, {4, 0}};
  std::vector<GpuActivity> acts = {kernel("gemm", 1, 10, 20), kernel("gelu", 2, 30, 40),
                                   kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 3, 50, 90),
                                   kernel("glue_kernel", 3, 95, 99), kernel("loss", 4, 100, 110)};
  EXPECT_EQ(attribute_activities(acts, occurrences, links), 0u);
  EXPECT_EQ(acts[0].occurrence, 2);
  EXPECT_EQ(acts[1].occurrence, 1);
  EXPECT_EQ(acts[2].occurrence, 3);  // launched inside "glue", charged to the collective around it
  EXPECT_EQ(acts[3].occurrence, 4);  // not an NCCL kernel: stays with the innermost op
  EXPECT_EQ(acts[4].occurrence, 0);
}

TEST(GpuAttribution, UntaggedWorkFallsBackToTheLaunchTime) {
  const auto occurrences = sample_occurrences();
  CorrelationLinks links;
  links.launch_ns = {{1, 170}, {2, 300}, {3, 450}, {4, 950}, {5, 1500}};
  std::vector<GpuActivity> acts = {kernel("a", 1, 1, 2), kernel("b", 2, 3, 4), kernel("c", 3, 5, 6),
                                   kernel("d", 4, 7, 8), kernel("e", 5, 9, 10), kernel("f", 6, 11, 12)};
  acts.push_back(kernel("memset", 0, 13, 14));
  acts.back().kind = GpuActivity::Kind::Memset;
  acts.back().runtime_correlation = 2;  // found through its second id
  EXPECT_EQ(attribute_activities(acts, occurrences, links), 2u);  // e (after the step) and f (no link)
  EXPECT_EQ(acts[0].occurrence, 2);   // inside pack
  EXPECT_EQ(acts[1].occurrence, 1);   // pack had ended: fwd
  EXPECT_EQ(acts[2].occurrence, 0);   // between fwd and coll: the step itself
  EXPECT_EQ(acts[3].occurrence, 0);
  EXPECT_EQ(acts[4].occurrence, -1);
  EXPECT_EQ(acts[5].occurrence, -1);
  EXPECT_EQ(acts[6].occurrence, 1);
}

TEST(GpuAttribution, DeviceTimesSplitSelfTimeFromSpan) {
  const auto occurrences = sample_occurrences();
  std::vector<GpuActivity> acts = {kernel("gemm", 0, 2000, 2100), kernel("gemm", 0, 2150, 2200),
                                   kernel("bias", 0, 2300, 2320), kernel("nccl", 0, 2400, 2600),
                                   kernel("step_glue", 0, 2700, 2710)};
  acts[0].occurrence = 2;
  acts[1].occurrence = 2;
  acts[2].occurrence = 1;
  acts[3].occurrence = 3;
  acts[4].occurrence = 0;
  const std::vector<long> ended = {2, 1, 4, 3, 0};
  const std::vector<RecordedOp> events = device_times(occurrences, ended, acts, 1000);
  ASSERT_EQ(events.size(), 5u);
  const auto near = [](double a, double b) { return std::abs(a - b) < 1e-15; };
  // pack: two kernels, 150 ns of device time over a 200 ns span.
  EXPECT_STREQ(events[0].op.name, "pack");
  EXPECT_TRUE(near(events[0].self_s, 150e-9));
  EXPECT_TRUE(near(events[0].duration_s, 200e-9));
  EXPECT_TRUE(near(events[0].start_s, 1000e-9));
  // fwd: its own 20 ns; its span covers pack.
  EXPECT_TRUE(near(events[1].self_s, 20e-9));
  EXPECT_TRUE(near(events[1].duration_s, 320e-9));
  // glue launched nothing: zero times at its host begin.
  EXPECT_STREQ(events[2].op.name, "glue");
  EXPECT_EQ(events[2].self_s, 0);
  EXPECT_EQ(events[2].duration_s, 0);
  EXPECT_TRUE(near(events[2].start_s, -400e-9));
  // The step: its own glue kernel as self time, everything as its span.
  EXPECT_TRUE(near(events[4].self_s, 10e-9));
  EXPECT_TRUE(near(events[4].duration_s, 710e-9));
  // What step_coverage (profiler/op_statistics.cpp) sums: the self times split compute /
  // collective / the step's own, without double counting the nested spans.
  EXPECT_STREQ(events[3].op.name, "coll");
  EXPECT_TRUE(near(events[3].self_s, 200e-9));
  EXPECT_TRUE(near(events[0].self_s + events[1].self_s + events[2].self_s, 170e-9));
}

TEST(GpuAttribution, HostSelfTimeIsTheScopesOwnLessNestedScopesAndDeviceWaits) {
  const auto occurrences = sample_occurrences();
  const std::vector<long> ended = {2, 1, 4, 3, 0};
  // A blocking copy inside pack (160-190) and a synchronize in fwd after pack ended (250-350).
  const std::vector<DeviceWait> waits = {{160, 190}, {250, 350}};
  const std::vector<RecordedOp> events = device_times(occurrences, ended, {}, 0, waits);
  ASSERT_EQ(events.size(), 5u);
  const auto near = [](double a, double b) { return std::abs(a - b) < 1e-15; };
  EXPECT_TRUE(near(events[0].host_self_s, (50 - 30) * 1e-9));         // pack [150, 200], 30 ns waiting
  EXPECT_TRUE(near(events[1].host_self_s, (300 - 50 - 100) * 1e-9));  // fwd [100, 400] less pack and its wait
  EXPECT_TRUE(near(events[2].host_self_s, 100e-9));                   // glue [600, 700]
  EXPECT_TRUE(near(events[3].host_self_s, (400 - 100) * 1e-9));       // coll [500, 900] less glue
  EXPECT_TRUE(near(events[4].host_self_s, (1000 - 300 - 400) * 1e-9));  // the step less fwd and coll
  // Without waits the scopes' own spans add up to the step's host span.
  double sum = 0;
  for (const RecordedOp& e : device_times(occurrences, ended, {}, 0)) sum += e.host_self_s;
  EXPECT_TRUE(near(sum, 1000e-9));
}

TEST(GpuAttribution, OnlyCallsThatWaitForTheDeviceAreWaits) {
  for (const char* name : {"cudaDeviceSynchronize_v3020", "cudaStreamSynchronize_v3020", "cudaEventSynchronize_v3020",
                           "cudaMemcpy_v3020", "cuCtxSynchronize", "cuMemcpyDtoH_v2"})
    EXPECT_TRUE(waits_for_device(name)) << name;
  for (const char* name : {"cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cuLaunchKernel", "cuMemcpyDtoHAsync_v2",
                           "cudaEventRecord_v3020", "cudaMalloc_v3020"})
    EXPECT_FALSE(waits_for_device(name)) << name;
}

TEST(GpuVersionStrings, FormatsCudaAndNcclCodes) {
  EXPECT_EQ(cuda_version_string(13000), "13.0.0");
  EXPECT_EQ(cuda_version_string(12040), "12.4.0");
  EXPECT_EQ(nccl_version_string(22809), "2.28.9");
  EXPECT_EQ(nccl_version_string(2804), "2.8.4");
}

}  // namespace
}  // namespace cc::profiler
