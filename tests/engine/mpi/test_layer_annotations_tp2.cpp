// The engine's annotations of one transformer layer equal the step plan's op list under
// TP 2, with and without sequence parallelism, under each recompute mode: the collectives
// (all-reduce, or all-gather and reduce-scatter under SP) and the split GEMM shapes too.
// Started by mpirun with 2 ranks (tests/CMakeLists.txt); every rank checks its own list.
#include <gtest/gtest.h>

#include <mpi.h>

#include "../layer_annotations.h"
#include "../micro_model.h"

namespace cc::engine {
namespace {

struct Layout {
  const char* name;
  bool sequence_parallel;
  RecomputeGranularity recompute;
};

void PrintTo(const Layout& l, std::ostream* os) { *os << l.name; }

class LayerAnnotationsTp2 : public ::testing::TestWithParam<Layout> {};

TEST_P(LayerAnnotationsTp2, EqualThePlansOpList) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  ASSERT_EQ(world, 2) << "run under mpirun -np 2";
  const ModelSpec model = micro_model(2);
  ParallelConfig c;
  c.tp = 2;
  c.sequence_parallel = GetParam().sequence_parallel;
  c.micro_batch = c.global_batch = 2;
  c.precision = Precision::FP32;  // what the CPU engine computes in: collective bytes count 4 per element
  c.recompute = GetParam().recompute;
  const ProcessGroups groups = make_process_groups(2, 1, 1);
  const StepPlan plan = step_plan(model, c);
  const LayerAnnotations want = planned_layer(plan, 1), got = engine_layer(model, c, groups, 1);
  const auto collectives = [](const std::vector<AnnotatedOp>& ops) {
    return std::count_if(ops.begin(), ops.end(), [](const AnnotatedOp& op) { return op.collective; });
  };
  ASSERT_GE(collectives(want.forward), 2);  // the two TP reductions at least: the test sees collectives
  EXPECT_EQ(got.forward, want.forward);
  EXPECT_EQ(got.backward, want.backward);
  EXPECT_EQ(got.recompute, want.recompute);
  // The embedding's ops open the model's forward and close its backward (the output layer's
  // differences: test_layer_annotations.cpp).
  const std::vector<AnnotatedOp> forward = annotated(plan.ops.embedding_forward),
                                 backward = annotated(plan.ops.embedding_backward);
  const LayerAnnotations ends = engine_layer(model, c, groups, -1);
  ASSERT_GE(collectives(forward), 1);
  EXPECT_EQ(first_rows(ends.forward, forward.size()), forward);
  EXPECT_EQ(last_rows(ends.backward, backward.size()), backward);
}

INSTANTIATE_TEST_SUITE_P(Engine, LayerAnnotationsTp2,
                         ::testing::Values(Layout{"none", false, RecomputeGranularity::None},
                                           Layout{"sp_none", true, RecomputeGranularity::None},
                                           Layout{"sp_selective", true, RecomputeGranularity::Selective},
                                           Layout{"full", false, RecomputeGranularity::Full},
                                           Layout{"sp_full", true, RecomputeGranularity::Full}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace cc::engine

// Each rank runs every test; the job fails if any rank's does.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
