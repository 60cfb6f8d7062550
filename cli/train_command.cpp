#include "cli/train_command.h"

#include <iostream>
#include <memory>

#include "cli/common_options.h"
#include "cli/mpi_job.h"
#include "engine/trainer.h"
#include "sim/error.h"

#ifdef CLUSTERCAST_HAVE_CUDA
#include "engine/cuda/gpu_trainer.h"
#endif

namespace cc::cli {

namespace {

struct TrainFlags {
  ModelFlags model;
  int tp = 1, pp = 1, micro_batch = 1;
  std::optional<int> global_batch, layers_per_virtual_stage;
  bool sequence_parallel = false, distributed_optimizer = false;
  std::string recompute = "none", recompute_method = "uniform";
  int recompute_num_layers = 1;
  std::string backend = "cpu", precision = "fp32";
  engine::TrainOptions options;
};

ParallelConfig layout_of(const TrainFlags& f, const ModelSpec& m, int world) {
  ParallelConfig c;
  c.tp = f.tp;
  c.pp = f.pp;
  if (c.tp < 1 || c.pp < 1) fail("--tp {} and --pp {} must be >= 1", c.tp, c.pp);
  if (world % (c.tp * c.pp) != 0)
    fail("{} MPI ranks are not divisible by TP {} x PP {}; DP = ranks / (TP x PP) must be whole", world, c.tp, c.pp);
  c.dp = world / (c.tp * c.pp);
  c.sequence_parallel = f.sequence_parallel;
  c.micro_batch = f.micro_batch;
  c.global_batch = f.global_batch.value_or(f.micro_batch * c.dp);
  c.recompute = recompute_granularity_from(f.recompute, "--recompute-granularity");
  c.recompute_method = recompute_method_from(f.recompute_method, "--recompute-method");
  c.recompute_num_layers = f.recompute_num_layers;
  c.distributed_optimizer = f.distributed_optimizer;
  c.precision = f.precision == "bf16" ? Precision::BF16 : Precision::FP32;
  if (f.backend == "cpu" && c.precision != Precision::FP32)
    fail("--precision {}: the CPU backend computes in fp32; bf16 storage needs --backend cuda", f.precision);
  if (f.layers_per_virtual_stage) {
    const int per = *f.layers_per_virtual_stage;
    if (per < 1 || m.num_layers % (c.pp * per) != 0)
      fail("--num-layers-per-virtual-pipeline-stage {} does not divide num_layers {} / PP {}", per, m.num_layers, c.pp);
    c.virtual_stages = m.num_layers / (c.pp * per);
  }
  return c;
}

void run(const TrainFlags& f) {
  run_mpi_job([&](int rank, int world) {
    const ModelSpec model = f.model.resolve();
    const ParallelConfig config = layout_of(f, model, world);
    if (rank == 0)
      std::cout << "training " << model.name << " (" << model.total_parameters() << " parameters) with "
                << config.summary() << " on " << world << " ranks\n";
    if (f.backend == "cpu") {
      engine::train(model, config, f.options, std::cout);
      return;
    }
#ifdef CLUSTERCAST_HAVE_CUDA
    cuda::train_on_gpu(model, config, f.options, std::cout);
#else
    fail("--backend cuda: this clustercast was built without CUDA (no CUDA toolkit was found when it was built)");
#endif
  });
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  f->model.model = "tiny";
  CLI::App* sub = app.add_subcommand("train", "Train a GPT for real (one MPI rank; start with mpirun -np N)");
  f->model.add_to(*sub);
  const char* g = "Parallel layout (DP = ranks / (TP x PP))";
  sub->add_option("--tensor-model-parallel-size,--tp", f->tp, "Tensor-parallel size")->capture_default_str()->group(g);
  sub->add_option("--pipeline-model-parallel-size,--pp", f->pp, "Pipeline-parallel size")->capture_default_str()->group(g);
  sub->add_flag("--sequence-parallel", f->sequence_parallel, "Sequence parallelism")->group(g);
  sub->add_option("--micro-batch-size", f->micro_batch, "Micro batch size")->capture_default_str()->group(g);
  sub->add_option("--global-batch-size", f->global_batch, "Global batch size (default: micro batch x DP)")->group(g);
  sub->add_option("--num-layers-per-virtual-pipeline-stage", f->layers_per_virtual_stage, "Interleaved 1F1B")->group(g);
  sub->add_option("--recompute-granularity", f->recompute, "none, selective or full")->capture_default_str()->group(g);
  sub->add_option("--recompute-method", f->recompute_method, "uniform or block")->capture_default_str()->group(g);
  sub->add_option("--recompute-num-layers", f->recompute_num_layers, "Layers per group / recomputed layers")
      ->capture_default_str()->group(g);
  sub->add_flag("--use-distributed-optimizer", f->distributed_optimizer, "Shard optimizer state over DP")->group(g);
  sub->add_option("--backend", f->backend, "cpu (Eigen, MPI) or cuda (one GPU per rank: cuBLAS, own kernels, NCCL)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  sub->add_option("--precision", f->precision, "Storage of weights and activations: fp32, or bf16 (cuda only)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  engine::TrainOptions& o = f->options;
  const char* t = "Training";
  sub->add_option("--steps", o.steps, "Optimizer steps")->capture_default_str()->group(t);
  sub->add_option("--lr", o.lr, "Peak learning rate")->capture_default_str()->group(t);
  sub->add_option("--warmup-steps", o.warmup_steps, "Linear warm-up steps (then cosine decay)")->capture_default_str()->group(t);
  sub->add_option("--weight-decay", o.weight_decay, "AdamW weight decay")->capture_default_str()->group(t);
  sub->add_option("--clip-grad", o.clip_grad, "Gradient clipping by global norm (0: off)")->capture_default_str()->group(t);
  sub->add_option("--dropout", o.dropout, "Hidden and attention dropout")->capture_default_str()->group(t);
  sub->add_option("--seed", o.seed, "Seed of every random choice")->capture_default_str()->group(t);
  sub->add_option("--data", o.data, "Corpus (default: the shipped traces/data/kjv.txt)")->group(t);
  sub->add_option("--eval-windows", o.eval_windows, "Validation windows at the end")->capture_default_str()->group(t);
  sub->add_option("--save", o.save_dir, "Checkpoint folder (one file per rank)")->group(t);
  sub->add_option("--save-every", o.save_every, "Checkpoint every N steps (and at the end)")->group(t);
  sub->add_option("--resume", o.resume_dir, "Resume from a checkpoint folder")->group(t);
  sub->add_option("--log-every", o.log_every, "Print every N steps")->capture_default_str()->group(t);
  sub->callback([f] { run(*f); });
}

}  // namespace cc::cli
