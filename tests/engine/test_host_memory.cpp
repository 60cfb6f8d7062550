// The host-memory check of the CPU engine: its estimate against what the engine really
// allocates, and the refusal of a run that cannot fit.
#include <gtest/gtest.h>

#include "engine/gpt_weights.h"
#include "engine/host_memory.h"
#include "sim/error.h"
#include "sim/memory_model.h"
#include "sim/presets.h"

namespace cc::engine {
namespace {

ParallelConfig layout(int tp) {
  ParallelConfig c;
  c.tp = tp;
  c.micro_batch = 2;
  c.global_batch = 4;
  c.precision = Precision::FP32;
  return c;
}

// Every element the engine allocates for one rank's weights (replicated tensors included).
double allocated_elements(const ModelSpec& spec, int tp) {
  const RankModel m = make_rank_model(spec, layout(tp), 0, 0);
  ModelWeights<float> w = allocate_weights<float>(m);
  double elements = 0;
  for_each_tensor(w, m, [&](const TensorInfo&, float*, std::int64_t rows, std::int64_t cols) {
    elements += static_cast<double>(rows) * static_cast<double>(cols);
  });
  return elements;
}

TEST(HostMemory, ModelStatesAreTwentyBytesForEveryFloatTheEngineAllocatesPerWeight) {
  const ModelSpec spec = load_model("small");
  for (int tp : {1, 2}) {
    const ParallelConfig c = layout(tp);
    // Weights, their initial copy, gradients and two AdamW moments: five floats per weight.
    const MemoryReport report = memory_model(spec, c);
    const double states = rank_peak_bytes(spec, c) - report.peak().activations;
    EXPECT_NEAR(states, 20.0 * allocated_elements(spec, tp), 1e-9 * states) << "tp " << tp;
  }
}

TEST(HostMemory, ARunThatDoesNotFitIsRefusedNamingBothFigures) {
  const ModelSpec big = load_model("gpt3-13b");
  const double gib = 1024.0 * 1024.0 * 1024.0;
  try {
    check_host_memory(big, layout(1), 2, 24 * gib);
    FAIL() << "13B parameters at 20 bytes each fit in 24 GiB";
  } catch (const SpecError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("model 'gpt3-13b'"), std::string::npos) << what;
    EXPECT_NE(what.find("for the 2 rank(s) on this machine"), std::string::npos) << what;
    EXPECT_NE(what.find("only 24.0 GiB is available"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(check_host_memory(load_model("tiny"), layout(1), 2, 24 * gib));
}

}  // namespace
}  // namespace cc::engine
