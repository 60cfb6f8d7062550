// The CUDA backend against the CPU backend, through the real binary started by mpirun: the
// same model, seed, data, dropout and layout must give the same per-step losses — to fp32
// rounding (different summation orders, FMA contraction) in fp32, and within bf16's
// precision in bf16 — and a GPU profile must time every op a CPU profile times, with every
// kernel attributed and no activity record dropped. Layouts that need several ranks run
// where the machine has that many GPUs (one rank per GPU) and skip, saying so, elsewhere.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../cli/mpi_runner.h"
#include "engine/cuda/cuda_check.h"

namespace cc {
namespace {

using cli_test::parse_train;
using cli_test::run_mpi;
using cli_test::TempDir;

int gpus() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

#define SKIP_WITHOUT_GPUS(needed)                                                                            \
  do {                                                                                                       \
    if (const std::string why = cuda::no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;                   \
    if (gpus() < (needed)) GTEST_SKIP() << "needs " << (needed) << " GPUs, this machine has " << gpus(); \
  } while (0)

struct Layout {
  const char* name;
  int ranks;
  std::vector<std::string> flags;
};

// Tiny GPT (4 layers), 4 steps of a 4-sequence batch with dropout, so masks, recomputation
// and every collective are exercised; validation at the end.
std::vector<std::string> train_args(const Layout& l, const std::string& backend, const std::string& precision) {
  std::vector<std::string> a = {"train", "--model", "tiny", "--steps", "4", "--global-batch-size", "4",
                                "--dropout", "0.1", "--eval-windows", "8", "--backend", backend,
                                "--precision", precision};
  a.insert(a.end(), l.flags.begin(), l.flags.end());
  return a;
}

// Per-step losses of both backends agree within `relative` (and the validation loss too).
void expect_same_losses(const Layout& l, const std::string& precision, double relative) {
  const auto cpu = run_mpi(l.ranks, train_args(l, "cpu", "fp32"), 600);
  const auto gpu = run_mpi(l.ranks, train_args(l, "cuda", precision), 600);
  ASSERT_EQ(cpu.exit_code, 0) << l.name << "\n" << cpu.err;
  ASSERT_EQ(gpu.exit_code, 0) << l.name << "\n" << gpu.err << gpu.out;
  const auto a = parse_train(cpu.out), b = parse_train(gpu.out);
  ASSERT_EQ(a.loss.size(), 4u) << cpu.out;
  ASSERT_EQ(b.loss.size(), 4u) << gpu.out;
  for (const auto& [step, loss] : a.loss) {
    const double x = std::stod(loss), y = std::stod(b.loss.at(step));
    EXPECT_NEAR(y, x, relative * std::abs(x)) << l.name << " " << precision << " step " << step;
  }
  ASSERT_FALSE(a.validation.empty());
  EXPECT_NEAR(std::stod(b.validation), std::stod(a.validation), relative * std::stod(a.validation)) << l.name;
  // Both engines note their activation peak at the same moments (after every forward pass and
  // every full-recompute rerun: engine::note_activation_peak), so in fp32, where both keep
  // the same tensors, the peak holds the same attention tensors and nearly the same bytes.
  if (precision == "fp32")
    for (const auto& [stage, bytes] : a.activation_bytes) {
      EXPECT_EQ(b.attention_scores.at(stage), a.attention_scores.at(stage)) << l.name << " stage " << stage;
      EXPECT_NEAR(static_cast<double>(b.activation_bytes.at(stage)), static_cast<double>(bytes), 0.01 * bytes)
          << l.name << " stage " << stage;
    }
}

const std::vector<Layout> kOneGpu = {
    {"no recompute, mb 2", 1, {"--micro-batch-size", "2"}},
    {"selective recompute", 1, {"--recompute-granularity", "selective"}},
    {"full recompute, uniform groups of 2", 1,
     {"--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "2"}},
    {"full recompute, block of 1", 1,
     {"--recompute-granularity", "full", "--recompute-method", "block", "--recompute-num-layers", "1"}},
};

const std::vector<Layout> kTwoGpus = {
    {"TP2", 2, {"--tp", "2"}},
    {"TP2 SP selective", 2, {"--tp", "2", "--sequence-parallel", "--recompute-granularity", "selective"}},
    {"PP2 1F1B", 2, {"--pp", "2"}},
    {"PP2 interleaved", 2, {"--pp", "2", "--num-layers-per-virtual-pipeline-stage", "1"}},
    {"DP2 distributed optimizer", 2, {"--use-distributed-optimizer"}},
};

TEST(GpuTraining, Fp32LossesMatchTheCpuBackendOnOneGpu) {
  SKIP_WITHOUT_GPUS(1);
  for (const Layout& l : kOneGpu) expect_same_losses(l, "fp32", 1e-3);
}

TEST(GpuTraining, Bf16LossesMatchTheCpuBackendWithinBf16Precision) {
  SKIP_WITHOUT_GPUS(1);
  // bf16 keeps 8 significant bits (relative step 2^-8 = 0.4%) in every stored activation;
  // fp32 master weights, gradients and reductions keep the loss within a few of those steps.
  for (const Layout& l : kOneGpu) expect_same_losses(l, "bf16", 2e-2);
}

TEST(GpuTraining, Fp32LossesMatchTheCpuBackendOnEveryTwoRankLayout) {
  SKIP_WITHOUT_GPUS(2);
  for (const Layout& l : kTwoGpus) expect_same_losses(l, "fp32", 1e-3);
}

// (name, phase) of every op record in a cost database.
std::set<std::pair<std::string, std::string>> op_names(const std::string& path) {
  std::ifstream in(path);
  const nlohmann::json db = nlohmann::json::parse(in);
  std::set<std::pair<std::string, std::string>> names;
  // emplace with explicit strings: insert({json, json}) picks set's initializer-list overload
  // and converts each json string to a pair (nlohmann type_error 302, seen on an H200).
  for (const auto& op : db.at("ops")) names.emplace(op.at("name").get<std::string>(), op.at("phase").get<std::string>());
  return names;
}

TEST(GpuProfile, TimesEveryOpTheCpuProfileTimesWithNothingDropped) {
  SKIP_WITHOUT_GPUS(1);
  TempDir dir;
  const std::vector<std::string> common = {"profile", "--model", "tiny", "--micro-batch-size", "2",
                                           "--recompute-granularity", "selective", "--warmup-steps", "1",
                                           "--steps", "2", "--no-collectives"};
  auto args = [&](const std::string& backend, const std::string& out) {
    std::vector<std::string> a = common;
    a.insert(a.end(), {"--backend", backend, "--out", dir.file(out)});
    return a;
  };
  const auto cpu = run_mpi(1, args("cpu", "cpu.json"), 600);
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  std::vector<std::string> gpu_args = args("cuda", "gpu.json");
  gpu_args.insert(gpu_args.end(), {"--trace-out", dir.file("gpu-trace.json")});
  const auto gpu = run_mpi(1, gpu_args, 600);
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err << gpu.out;
  EXPECT_EQ(gpu.out.find("dropped"), std::string::npos) << gpu.out;
  EXPECT_EQ(op_names(dir.file("gpu.json")), op_names(dir.file("cpu.json")));
  // Every annotated scope of the step ran device work: the step is covered, not idle.
  EXPECT_NE(gpu.out.find("annotated compute"), std::string::npos) << gpu.out;
  // The database prices a simulation with every op measured.
  const auto sim = run_mpi(1, {"simulate", "--costs", dir.file("gpu.json"), "--model", "tiny", "--gpus", "1",
                               "--micro-batch-size", "2", "--global-batch-size", "4", "--precision", "bf16",
                               "--recompute-granularity", "selective", "--json"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const nlohmann::json result = nlohmann::json::parse(sim.out);
  EXPECT_DOUBLE_EQ(result.at("measured_fraction").get<double>(), 1.0) << sim.out;
}

}  // namespace
}  // namespace cc
