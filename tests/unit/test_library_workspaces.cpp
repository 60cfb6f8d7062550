// The GEMM libraries' workspaces: each case is a hand count of the workspaces PyTorch and
// Transformer Engine allocate (library_workspaces.h gives the sources), compared with the
// memory model's resident bytes.
#include <gtest/gtest.h>

#include "sim/library_workspaces.h"
#include "sim/memory_model.h"
#include "sim/presets.h"
#include "sim/units.h"

namespace cc {
namespace {

ParallelConfig config_on(const std::string& framework, bool grouped_gemm) {
  ParallelConfig c;
  apply_framework(c, framework);
  c.moe.grouped_gemm = grouped_gemm;
  return c;
}

TEST(LibraryWorkspaces, HopperUnderTheFunctionalTestsStackWithGroupedGemm) {
  // Two PyTorch workspaces of CUBLAS_WORKSPACE_CONFIG :4096:8 (32 MiB), TE's 32 MiB one and
  // four more of 32 MiB for its grouped GEMM's streams.
  const ModelSpec moe = load_model("mixtral-8x7b");
  const GpuSpec h100 = load_cluster("dgx-h100").gpu;
  EXPECT_DOUBLE_EQ(library_workspace_bytes(h100, moe, config_on("megatron-core-ci", true)), (2 * 32 + 32 + 4 * 32) * kMiB);
  // Without grouped GEMM only the one TE workspace.
  EXPECT_DOUBLE_EQ(library_workspace_bytes(h100, moe, config_on("megatron-core-ci", false)), (2 * 32 + 32) * kMiB);
}

TEST(LibraryWorkspaces, AmpereTakesThePreHopperSizes) {
  // PyTorch's default before compute capability 9.0: 4096 KiB x 2 + 16 KiB x 8 per workspace;
  // TE's 4 MiB. A dense model has no grouped GEMM whatever the flag says.
  const ModelSpec dense = load_model("gpt3-1.3b");
  const GpuSpec a100 = load_cluster("dgx-a100-80gb").gpu;
  const double torch_default = 4096 * 1024.0 * 2 + 16 * 1024.0 * 8;
  EXPECT_DOUBLE_EQ(library_workspace_bytes(a100, dense, config_on("megatron-core", true)), 2 * torch_default + 4 * kMiB);
  // Megatron-LM 2021 ran on PyTorch without Transformer Engine.
  EXPECT_DOUBLE_EQ(library_workspace_bytes(a100, dense, config_on("megatron-2021", false)), 2 * torch_default);
}

TEST(LibraryWorkspaces, AnUnstatedComputeCapabilityTakesTheLargerSizes) {
  const ModelSpec dense = load_model("gpt3-1.3b");
  GpuSpec gpu = load_cluster("dgx-a100-80gb").gpu;
  gpu.compute_capability = 0;
  EXPECT_DOUBLE_EQ(library_workspace_bytes(gpu, dense, config_on("megatron-core", false)), (2 * 32 + 32) * kMiB);
}

TEST(LibraryWorkspaces, ClustercastsEngineHasNoneAndTheMemoryModelCountsThemAsResident) {
  const ModelSpec dense = load_model("gpt3-1.3b");
  const GpuSpec h100 = load_cluster("dgx-h100").gpu;
  EXPECT_EQ(library_workspace_bytes(h100, dense, config_on("clustercast-engine", false)), 0.0);

  const ParallelConfig c = config_on("megatron-core", false);
  const MemoryReport without_gpu = memory_model(dense, c);
  const MemoryReport on_h100 = memory_model(dense, c, {}, &h100);
  const MemoryBreakdown& a = without_gpu.peak();
  const MemoryBreakdown& b = on_h100.peak();
  EXPECT_EQ(a.workspaces, 0.0);
  EXPECT_DOUBLE_EQ(b.workspaces, (2 * 32 + 32) * kMiB);
  EXPECT_DOUBLE_EQ(b.resident() - a.resident(), b.workspaces);
  EXPECT_DOUBLE_EQ(b.total() - a.total(), b.workspaces);
}

}  // namespace
}  // namespace cc
