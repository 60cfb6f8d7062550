// The engine's annotations of one transformer layer are the step plan's op list for a
// layer (sim/step_plan.h): the same names, phases and shapes in the same order, forward,
// backward and what recomputation reruns. The profiler files what it measures under these
// names and shapes and the simulator looks them up under the plan's; a drift would price
// the op as "scaled" or "analytic" without a word. TP 1 here; TP 2 with and without
// sequence parallelism runs under mpirun (mpi/test_layer_annotations_tp2.cpp).
#include <gtest/gtest.h>

#include "ensure_mpi.h"
#include "layer_annotations.h"
#include "micro_model.h"

namespace cc::engine {
namespace {

struct Recompute {
  const char* name;
  RecomputeGranularity granularity;
  RecomputeMethod method = RecomputeMethod::Uniform;
  int layers = 1;
};

void PrintTo(const Recompute& r, std::ostream* os) { *os << r.name; }

class LayerAnnotationsTp1 : public ::testing::TestWithParam<Recompute> {};

TEST_P(LayerAnnotationsTp1, EqualThePlansOpList) {
  ensure_mpi();
  const ModelSpec model = micro_model(2);
  ParallelConfig c;
  c.micro_batch = c.global_batch = 2;
  c.precision = Precision::FP32;  // what the CPU engine computes in: collective bytes count 4 per element
  c.recompute = GetParam().granularity;
  c.recompute_method = GetParam().method;
  c.recompute_num_layers = GetParam().layers;
  const ProcessGroups groups = make_process_groups(1, 1, 1);
  const StepPlan plan = step_plan(model, c);
  // Both layers: under full uniform (2) the first and second of one group; under block (1)
  // one recomputed layer and one that keeps everything.
  for (int layer : {0, 1}) {
    const LayerAnnotations want = planned_layer(plan, layer);
    const LayerAnnotations got = engine_layer(model, c, groups, layer);
    ASSERT_FALSE(want.forward.empty());
    EXPECT_EQ(got.forward, want.forward) << "layer " << layer;
    EXPECT_EQ(got.backward, want.backward) << "layer " << layer;
    EXPECT_EQ(got.recompute, want.recompute) << "layer " << layer;
  }
  const bool block = c.recompute_method == RecomputeMethod::Block;
  EXPECT_EQ(planned_layer(plan, 1).recompute.empty(), c.recompute == RecomputeGranularity::None || block);
}

// The embedding's ops open the model's forward and close its backward, as the plan lists
// them. (The output layer is not compared: the engine all-reduces the cross-entropy's three
// row vectors one by one, as Megatron-LM does, where the plan prices one all-reduce of all
// three; and under SP it re-gathers the final norm's output for the logits' weight gradient,
// which the plan does not list.)
TEST(EmbeddingAnnotationsTp1, EqualThePlansOpList) {
  ensure_mpi();
  const ModelSpec model = micro_model(2);
  ParallelConfig c;
  c.micro_batch = c.global_batch = 2;
  c.precision = Precision::FP32;
  const StepPlan plan = step_plan(model, c);
  const std::vector<AnnotatedOp> forward = annotated(plan.ops.embedding_forward),
                                 backward = annotated(plan.ops.embedding_backward);
  const LayerAnnotations got = engine_layer(model, c, make_process_groups(1, 1, 1), -1);
  ASSERT_FALSE(forward.empty());
  EXPECT_EQ(first_rows(got.forward, forward.size()), forward);
  EXPECT_EQ(last_rows(got.backward, backward.size()), backward);
}

INSTANTIATE_TEST_SUITE_P(Engine, LayerAnnotationsTp1,
                         ::testing::Values(Recompute{"none", RecomputeGranularity::None},
                                           Recompute{"selective", RecomputeGranularity::Selective},
                                           Recompute{"full_uniform2", RecomputeGranularity::Full,
                                                     RecomputeMethod::Uniform, 2},
                                           Recompute{"full_block1", RecomputeGranularity::Full, RecomputeMethod::Block,
                                                     1}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace cc::engine
