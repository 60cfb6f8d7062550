#include "cli/train_command.h"

#include <mpi.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/common_options.h"
#include "cli/engine_commands.h"
#include "cli/mpi_job.h"
#include "engine/trainer.h"
#include "profiler/step_breakdown.h"
#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/json_fields.h"
#include "sim/layout_rules.h"

#ifdef CLUSTERCAST_HAVE_CUDA
#include "engine/cuda/gpu_trainer.h"
#endif

namespace cc::cli {

namespace {

struct TrainFlags {
  ModelFlags model;
  int tp = 1, pp = 1, micro_batch = 1;
  std::optional<int> global_batch, layers_per_virtual_stage, virtual_stages_per_rank, microbatch_group_size;
  int first_stage_layers = 0, last_stage_layers = 0;  // 0: an even split
  std::string pipeline_layout;                        // empty: the split follows the flags above
  bool account_for_embedding = false, account_for_loss = false;
  bool sequence_parallel = false, distributed_optimizer = false;
  std::string recompute = "none", recompute_method = "uniform";
  int recompute_num_layers = 1;
  std::string backend = "cpu", precision = "fp32";
  engine::TrainOptions options;
  // Unset: the model's (engine::megatron_dropout), the dropout the simulator prices and a
  // profile measures, so a plain run is the run a prediction describes.
  std::optional<double> dropout;
  std::string report_json;  // rank 0 writes what `validate` compares with its prediction
  int timed_from = 3;       // first step of the timed steps in that report (warm-up before)
  MpiJobOptions job;
};

ParallelConfig layout_of(const TrainFlags& f, const ModelSpec& m, int world) {
  ParallelConfig c;
  c.tp = f.tp;
  c.pp = f.pp;
  if (c.tp < 1 || c.pp < 1) fail("--tp {} and --pp {} must be >= 1", c.tp, c.pp);
  const std::optional<int> dp = data_parallel_size(world, c.tp, 1, c.pp);
  if (!dp)
    fail("{} MPI ranks are not divisible by TP {} x PP {}; DP = ranks / (TP x PP) must be whole", world, c.tp, c.pp);
  c.dp = *dp;
  c.sequence_parallel = f.sequence_parallel;
  c.micro_batch = f.micro_batch;
  c.global_batch = f.global_batch ? *f.global_batch : default_global_batch(f.micro_batch, c.dp);
  c.recompute = recompute_granularity_from(f.recompute, "--recompute-granularity");
  c.recompute_method = recompute_method_from(f.recompute_method, "--recompute-method");
  c.recompute_num_layers = f.recompute_num_layers;
  c.distributed_optimizer = f.distributed_optimizer;
  c.first_stage_layers = f.first_stage_layers;
  c.last_stage_layers = f.last_stage_layers;
  c.pipeline_layout = f.pipeline_layout;
  c.account_for_embedding = f.account_for_embedding;
  c.account_for_loss = f.account_for_loss;
  if (f.microbatch_group_size) c.microbatch_group_size = *f.microbatch_group_size;
  c.precision = f.precision == "bf16" ? Precision::BF16 : Precision::FP32;
  if (f.backend == "cpu" && c.precision != Precision::FP32)
    fail("--precision {}: the CPU backend computes in fp32; bf16 storage needs --backend cuda", f.precision);
  if (f.virtual_stages_per_rank) c.virtual_stages = *f.virtual_stages_per_rank;
  if (f.layers_per_virtual_stage)
    c.virtual_stages = virtual_stages_from_layers_per_stage(*f.layers_per_virtual_stage, m.num_layers, c, "");
  if (!f.pipeline_layout.empty()) c.virtual_stages = virtual_stages_from_layout(f.pipeline_layout, c.pp, "");
  return c;
}

// The measured run as `clustercast validate` reads it: every step's time on the slowest
// rank (a step ends for all ranks at its last collective, so the slowest rank is the
// iteration), the engine's own activation accounting per stage, and on the CPU backend
// where rank 0's timed steps went (profiler/step_breakdown.h).
nlohmann::json report_json(const ModelSpec& model, const ParallelConfig& config, const TrainFlags& f, int world,
                           const engine::TrainReport& report, const profiler::MeasuredBreakdown* breakdown) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& a : report.stage_activations)
    stages.push_back({{"peak_bytes", a.total}, {"attention_scores_bytes", a.scores}, {"in_flight", a.in_flight}});
  nlohmann::json j = {{"model", model_to_json(model)},
                      {"layout", config_to_json(config)},
                      {"ranks", world},
                      {"backend", f.backend},
                      {"first_timed_step", f.timed_from},
                      {"step_seconds", report.step_seconds},
                      {"stage_activations", stages}};
  if (breakdown) {
    const TimeBreakdown& t = breakdown->time;
    j["breakdown"] = {{"steps", breakdown->steps},   {"compute_s", t.compute},     {"recompute_s", t.recompute},
                      {"tp_comm_s", t.tp_comm},      {"pp_comm_s", t.pp_comm},     {"dp_comm_s", t.dp_comm},
                      {"optimizer_s", t.optimizer},  {"unannotated_s", breakdown->unannotated}};
  }
  return j;
}

void run(const TrainFlags& f) {
  run_mpi_job(f.job, [&](int rank, int world) {
    // The engine draws its masks from --dropout alone; Megatron's pair would be ignored.
    if (f.model.hidden_dropout || f.model.attention_dropout)
      fail("--hidden-dropout / --attention-dropout: the training engine has one --dropout for both; give --dropout");
    const ModelSpec model = f.model.resolve();
    const ParallelConfig config = layout_of(f, model, world);
    engine::TrainOptions options = f.options;
    options.dropout = f.dropout.value_or(engine::megatron_dropout(model));
    check_outputs_apart({{f.report_json, "--report-json"}}, {{f.model.model, "--model"}, {options.data, "--data"}});
    if (!f.report_json.empty()) check_output_folder(f.report_json, "--report-json");
    if (!f.report_json.empty() && (f.timed_from < 1 || f.timed_from > options.steps))
      fail("--timed-from {}: the first timed step must be in 1..--steps {}", f.timed_from, options.steps);
    // Every option is checked before the first line of output, so bad input prints nothing.
    engine::validate_training(model, config, options, world);
    if (!options.data.empty()) check_regular_file(options.data, "corpus");
    if (!options.save_dir.empty()) check_folder_can_be_made(options.save_dir, "--save");
    if (!options.resume_dir.empty() && !std::filesystem::is_directory(options.resume_dir))
      fail("--resume '{}' is not a folder; give a checkpoint folder DIR/step-N written by --save",
           options.resume_dir);
    if (rank == 0) {
      std::cout << "training " << model.name << " (" << model.total_parameters() << " parameters) with "
                << config.summary() << " on " << world << " ranks, dropout " << options.dropout << "\n";
      // simulate prices the dropout masks by the model: a run without them (or with them on a
      // model that has none) is not the run it predicts.
      if ((options.dropout > 0) != model.dropout)
        std::cout << "note: --dropout " << options.dropout << " on a model "
                  << (model.dropout ? "with dropout layers; predict this run with --hidden-dropout 0 --attention-dropout 0"
                                    : "without dropout layers; predictions of this model price no dropout masks")
                  << "\n";
    }
    engine::TrainReport report;
    std::optional<profiler::MeasuredBreakdown> breakdown;
    if (f.backend == "cpu") {
      profiler::HostRecorder recorder;
      if (f.report_json.empty()) {
        report = engine::train(model, config, options, std::cout);
      } else {
        {
          const profiler::RecorderInstalled installed(recorder);
          report = engine::train(model, config, options, std::cout);
        }
        breakdown = profiler::step_breakdown(recorder.events(), f.timed_from);
      }
    } else {
#ifdef CLUSTERCAST_HAVE_CUDA
      report = cuda::train_on_gpu(model, config, options, std::cout);
#else
      fail("--backend cuda: this clustercast was built without CUDA (no CUDA toolkit was found when it was built)");
#endif
    }
    if (f.report_json.empty()) return;
    std::vector<double> slowest = report.step_seconds;
    MPI_Allreduce(MPI_IN_PLACE, slowest.data(), static_cast<int>(slowest.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    report.step_seconds = slowest;
    if (rank == 0)
      write_file_atomically(f.report_json,
                            report_json(model, config, f, world, report, breakdown ? &*breakdown : nullptr).dump(1) + "\n");
  });
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  f->model.model = "tiny";
  CLI::App* sub = app.add_subcommand("train", engine_command_summary("train"));
  f->model.add_to(*sub);
  const char* g = "Parallel layout (DP = ranks / (TP x PP))";
  sub->add_option("--tensor-model-parallel-size,--tp", f->tp, "Tensor-parallel size")->capture_default_str()->group(g);
  sub->add_option("--pipeline-model-parallel-size,--pp", f->pp, "Pipeline-parallel size")->capture_default_str()->group(g);
  sub->add_flag("--sequence-parallel", f->sequence_parallel, "Sequence parallelism")->group(g);
  sub->add_option("--micro-batch-size", f->micro_batch, "Micro batch size")->capture_default_str()->group(g);
  sub->add_option("--global-batch-size", f->global_batch, "Global batch size (default: micro batch x DP)")->group(g);
  // Megatron-LM takes one of the three ways to give the interleave depth.
  CLI::Option* per_stage =
      sub->add_option("--num-layers-per-virtual-pipeline-stage", f->layers_per_virtual_stage, "Interleaved 1F1B")
          ->group(g);
  CLI::Option* per_rank = sub->add_option("--num-virtual-stages-per-pipeline-rank", f->virtual_stages_per_rank,
                                          "Interleaved 1F1B: model chunks per pipeline rank")
                              ->check(CLI::PositiveNumber)
                              ->excludes(per_stage)
                              ->group(g);
  sub->add_option("--pipeline-model-parallel-layout", f->pipeline_layout,
                  "Every virtual stage's layers, e.g. \"E|tt|t|tL\": E embedding, t a transformer layer, L the "
                  "loss, | between stages, *N repeats")
      ->excludes(per_stage)
      ->excludes(per_rank)
      ->group(g);
  sub->add_flag("--account-for-embedding-in-pipeline-split", f->account_for_embedding,
                "The embedding counts as one layer when layers are split over stages")
      ->group(g);
  sub->add_flag("--account-for-loss-in-pipeline-split", f->account_for_loss,
                "The loss counts as one layer when layers are split over stages")
      ->group(g);
  sub->add_option("--microbatch-group-size-per-virtual-pipeline-stage", f->microbatch_group_size,
                  "Interleaved 1F1B: microbatches run on one chunk before the next (default PP)")
      ->check(CLI::PositiveNumber)
      ->group(g);
  sub->add_option("--decoder-first-pipeline-num-layers", f->first_stage_layers, "Layers on the first stage (uneven split)")
      ->group(g);
  sub->add_option("--decoder-last-pipeline-num-layers", f->last_stage_layers, "Layers on the last stage (uneven split)")
      ->group(g);
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
  sub->add_option("--dropout", f->dropout,
                  "Hidden and attention dropout (default: the model's, as Megatron-LM's: 0.1 where it has dropout "
                  "layers, else 0)")
      ->group(t);
  sub->add_option("--seed", o.seed, "Seed of every random choice")->capture_default_str()->group(t);
  sub->add_option("--data", o.data, "Corpus (default: the shipped traces/data/kjv.txt)")->group(t);
  sub->add_option("--eval-windows", o.eval_windows, "Validation windows at the end")->capture_default_str()->group(t);
  sub->add_option("--save", o.save_dir, "Checkpoint folder (one file per rank)")->group(t);
  sub->add_option("--save-every", o.save_every, "Checkpoint every N steps (and at the end)")->group(t);
  sub->add_option("--save-keep", o.save_keep, "Keep only the newest N checkpoints in --save (default 0: keep all)")
      ->group(t);
  sub->add_option("--resume", o.resume_dir, "Resume from a checkpoint folder")->group(t);
  sub->add_option("--log-every", o.log_every, "Print every N steps")->capture_default_str()->group(t);
  sub->add_option("--report-json", f->report_json,
                  "Write step times, activation bytes per stage and (cpu) rank 0's time breakdown as JSON")
      ->group(t);
  sub->add_option("--timed-from", f->timed_from, "First step the --report-json breakdown counts (warm-up before it)")
      ->capture_default_str()->group(t);
  add_mpi_job_options(*sub, f->job);
  sub->callback([f] { run(*f); });
}

}  // namespace cc::cli
