#include "cli/profile_command.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/common_options.h"
#include "cli/engine_commands.h"
#include "cli/mpi_job.h"
#include "cli/value_lists.h"
#include "profiler/machine_fingerprint.h"
#include "profiler/profile_session.h"
#ifdef CLUSTERCAST_HAVE_CUDA
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/gpu_trainer.h"
#include "engine/cuda/nccl_comm.h"
#include "profiler/cuda/cupti_recorder.h"
#include "profiler/cuda/gpu_fingerprint.h"
#include "profiler/cuda/nccl_transport.h"
#endif
#include "sim/atomic_file.h"
#include "sim/error.h"

namespace cc::cli {

namespace {

struct ProfileFlags {
  ModelFlags model;
  std::string tp = "1", micro_batch = "1", recompute = "none", backend = "cpu", precision;
  bool sequence_parallel = false, no_collectives = false, no_ops = false;
  std::string out, trace_out;
  std::optional<int> rounds;  // unset: by backend (add_profile_command's help)
  profiler::ProfileRequest request;
  std::string command;
  MpiJobOptions job;
};

#ifdef CLUSTERCAST_HAVE_CUDA
// Device time of every annotated scope, from CUPTI's activity records.
class CuptiTimer final : public profiler::ScopeTimer {
 public:
  engine::OpRecorder& recorder() override { return cupti_; }
  const std::vector<profiler::RecordedOp>& collect() override { return cupti_.flush(); }
  std::size_t dropped() const override { return cupti_.dropped_records(); }

 private:
  profiler::CuptiRecorder cupti_;
};
#endif

void run(const ProfileFlags& f) {
  run_mpi_job(f.job, [&](int rank, int) {
    std::ostringstream quiet;
    std::ostream& log = rank == 0 ? std::cout : quiet;
    if (f.out.empty()) fail("--out is required: the cost database to write (e.g. traces/cpu-small.json)");
    check_outputs_apart({{f.out, "--out"}, {f.trace_out, "--trace-out"}}, {{f.model.model, "--model"}});
    check_output_folder(f.out, "--out");
    if (!f.trace_out.empty()) check_output_folder(f.trace_out, "--trace-out");
    profiler::ProfileRequest r = f.request;
    r.model = f.model.resolve();
    r.tp_sizes = parse_int_list(f.tp, "--tensor-model-parallel-size");
    r.micro_batches = parse_int_list(f.micro_batch, "--micro-batch-size");
    r.sequence_parallel = f.sequence_parallel;
    r.recompute = recompute_granularity_from(f.recompute, "--recompute-granularity");
    r.sweep = !f.no_collectives;
    r.ops = !f.no_ops;
    r.keep_timeline = !f.trace_out.empty();
    // Megatron-LM trains GPT in bf16 on GPUs; the CPU engine computes in fp32.
    const std::string precision = !f.precision.empty() ? f.precision : f.backend == "cuda" ? "bf16" : "fp32";
    r.precision = precision == "bf16" ? Precision::BF16 : Precision::FP32;
    r.command = f.command;
    r.rounds = f.rounds.value_or(f.backend == "cuda" ? 1 : 3);
    profiler::MpiTransport mpi;
    profiler::ProfileBackend backend{profiler::cpu_fingerprint(), &mpi};
#ifdef CLUSTERCAST_HAVE_CUDA
    profiler::NcclTransport nccl;
    std::unique_ptr<CuptiTimer> cupti;
    if (f.backend == "cuda") {
      if (const std::string why = cuda::no_gpu_reason(); !why.empty()) fail("--backend cuda: {}", why);
      // CUPTI first: it must see the context created by the first CUDA call after it.
      if (r.ops) cupti = std::make_unique<CuptiTimer>();
      const int device = cuda::select_device_for_rank(MPI_COMM_WORLD);
      backend.machine = profiler::with_gpu(profiler::cpu_fingerprint(), profiler::gpu_fingerprint(device));
      backend.transport = &nccl;
      backend.train = cuda::train_on_gpu;
      backend.timer = cupti.get();
      backend.gpu = true;
    }
#else
    if (f.backend == "cuda")
      fail("--backend cuda: this clustercast was built without CUDA (no CUDA toolkit was found when it was built)");
#endif
    const profiler::ProfileOutcome outcome = profiler::run_profile(r, backend, log);
    if (rank != 0) return;
    // Both outputs or neither: a failed --trace-out leaves no database behind.
    OutputSet files;
    files.add(f.out, cost_database_to_text(outcome.database), "--out");
    if (!f.trace_out.empty()) files.add(f.trace_out, outcome.chrome_trace, "--trace-out");
    files.commit();
    std::cout << "wrote " << f.out << " (" << outcome.database.ops.size() << " op records, "
              << outcome.database.collectives.size() << " collective curves)";
    if (!f.trace_out.empty()) std::cout << " and " << f.trace_out;
    std::cout << "\n";
  });
}

}  // namespace

void add_profile_command(CLI::App& app, int argc, char** argv) {
  auto f = std::make_shared<ProfileFlags>();
  f->model.model = "small";
  for (int i = 0; i < argc; ++i) f->command += (i ? " " : "") + std::string(argv[i]);
  CLI::App* sub = app.add_subcommand("profile", engine_command_summary("profile"));
  f->model.add_to(*sub);
  profiler::ProfileRequest& r = f->request;
  const char* g = "Runs (one per TP size x micro batch size; DP = ranks / TP)";
  sub->add_option("--backend", f->backend, "cpu (MPI ranks) or cuda (one GPU per rank, NCCL)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  sub->add_option("--precision", f->precision, "fp32 or bf16 storage (default: bf16 with --backend cuda, else fp32)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  sub->add_flag("--no-ops", f->no_ops, "Skip the engine runs: measure the collectives only");
  sub->add_option("--tensor-model-parallel-size,--tp", f->tp, "TP sizes, e.g. 1,2")->capture_default_str()->group(g);
  sub->add_option("--micro-batch-size", f->micro_batch, "Micro batch sizes, e.g. 1,2")->capture_default_str()->group(g);
  sub->add_option("--microbatches-per-step", r.microbatches_per_step, "Microbatches per step and replica")
      ->capture_default_str()->group(g);
  sub->add_flag("--sequence-parallel", f->sequence_parallel, "Sequence parallelism where TP > 1")->group(g);
  sub->add_option("--recompute-granularity", f->recompute, "none, selective or full")->capture_default_str()->group(g);
  sub->add_option("--warmup-steps", r.warmup_steps, "Untimed steps first")->capture_default_str()->group(g);
  sub->add_option("--steps", r.timed_steps, "Timed steps")->capture_default_str()->group(g);
  sub->add_option("--rounds", f->rounds,
                  "Run every TP size x micro batch this many times, in turn, and keep each op's median over them "
                  "(default 3 on the cpu backend, whose shared cores slow down for seconds at a time; 1 with "
                  "--backend cuda, whose ops are timed on the device)")
      ->group(g);
  sub->add_option("--seed", r.seed, "Seed of the weights and data order")->capture_default_str()->group(g);
  const char* c = "Collective sweep (nccl-tests style, over MPI; needs >= 2 ranks)";
  sub->add_flag("--no-collectives", f->no_collectives, "Skip the collective sweep")->group(c);
  sub->add_option("--sweep-min-bytes", r.sweep_options.min_bytes, "Smallest message")->capture_default_str()->group(c);
  sub->add_option("--sweep-max-bytes", r.sweep_options.max_bytes, "Largest message")->capture_default_str()->group(c);
  sub->add_option("--sweep-size-factor", r.sweep_options.size_factor, "Next size = size x factor")
      ->capture_default_str()->group(c);
  sub->add_option("--out", f->out, "Cost database to write (JSON, schema in traces/README.md)")->required();
  sub->add_option("--trace-out", f->trace_out, "Also write the profiled runs as a Chrome trace / Perfetto JSON");
  add_mpi_job_options(*sub, f->job);
  sub->callback([f] { run(*f); });
}

}  // namespace cc::cli
