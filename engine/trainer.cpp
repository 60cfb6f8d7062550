#include "engine/trainer.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "engine/checkpoint_file.h"
#include "engine/checkpoint_folders.h"
#include "engine/data.h"
#include "engine/host_memory.h"
#include "engine/optimizer.h"
#include "engine/stall_watchdog.h"
#include "engine/training_loop.h"
#include "sim/error.h"
#include "sim/layout_validation.h"

namespace cc::engine {

namespace {

using Real = float;

// A checkpoint is a folder per saved step, one file per rank: DIR/step-N/rank-R.ckpt.
std::string checkpoint_path(const std::string& dir, int rank) { return fmt::format("{}/rank-{}.ckpt", dir, rank); }

// What a checkpoint must have been written by to resume: model, layout and seed. An uneven
// split (first/last stages, a layout string, the embedding or loss counted as a layer) is
// named too, after the summary, so an even run's string is what it always was: another split
// holds other layers on each rank.
std::string checkpoint_layout(const ModelSpec& model, const ParallelConfig& c, const TrainOptions& o) {
  std::string uneven;
  if (c.first_stage_layers || c.last_stage_layers)
    uneven = fmt::format(" first{} last{}", c.first_stage_layers, c.last_stage_layers);
  if (!c.pipeline_layout.empty()) uneven += fmt::format(" layout {}", c.pipeline_layout);
  if (c.account_for_embedding) uneven += " embedding-counted";
  if (c.account_for_loss) uneven += " loss-counted";
  return fmt::format("{} {}{} seed {}", model.name, c.summary(), uneven, o.seed);
}

}  // namespace

void validate_training(const ModelSpec& model, const ParallelConfig& c, const TrainOptions& o, int world_size) {
  validate_layout(c, model, 0);
  if (c.first_stage_layers < 0 || c.last_stage_layers < 0)
    fail("--decoder-first-pipeline-num-layers {} / --decoder-last-pipeline-num-layers {}: layer counts must be >= 0 "
         "(0: an even split)",
         c.first_stage_layers, c.last_stage_layers);
  if (c.attention == AttentionKernel::Flash) fail("the CPU engine has no flash-attention kernel; drop --use-flash-attn");
  if (c.precision != Precision::BF16 && c.precision != Precision::FP32)
    fail("the CPU engine trains in fp32; --precision {} is not available", to_string(c.precision));
  if (model.vocab_size % c.tp != 0)
    fail("vocab_size {} is not divisible by TP {} (the embedding is split by vocabulary rows)", model.vocab_size, c.tp);
  if (model.vocab_size > 256 && !o.any_vocabulary)
    fail("the engine trains on bytes (vocab 256); model '{}' has vocab_size {} — use --model tiny or small, or "
         "--vocab-size 256",
         model.name, model.vocab_size);
  if (model.activation != Activation::GeLU || model.normalization != Normalization::LayerNorm ||
      model.position_embedding != PositionEmbedding::Learned || !model.tied_embeddings ||
      model.num_query_groups != model.num_attention_heads)
    fail("the engine trains GPT-2-style models (GeLU, LayerNorm, learned positions, tied embeddings, multi-head "
         "attention); model '{}' is not one",
         model.name);
  if (!model.qkv_bias || !model.projection_bias || !model.dense_mlp_bias())
    fail("the engine trains GPT-2 layers with a bias on every linear; model '{}' has {} (drop --disable-bias-linear)",
         model.name, !model.dense_mlp_bias() ? "an MLP without biases" : "attention projections without biases");
  // The simulator prices these; the engine's layers are dense multi-head attention and MLP only.
  if (model.moe.enabled() || model.mla.enabled || model.mtp_num_layers > 0)
    fail("the engine trains dense layers only; model '{}' has {} — simulate or search it instead", model.name,
         model.moe.enabled() ? "mixture-of-experts layers"
         : model.mla.enabled ? "multi-latent attention"
                             : "multi-token prediction layers");
  if (world_size != c.gpus())
    fail("{} MPI ranks do not match TP {} x PP {} x DP {} = {}; run mpirun -np {} (DP = ranks / (TP x PP))", world_size,
         c.tp, c.pp, c.dp, c.gpus(), c.gpus());
  // Byte tokens index rows 0..255: a smaller vocabulary would read past the embedding.
  if (model.vocab_size < 256)
    fail("the engine trains on bytes (vocab 256); vocab_size {} has too few rows — use --vocab-size 256",
         model.vocab_size);
  if (o.steps < 1) fail("--steps is {}; it must be >= 1", o.steps);
  // Written as !(in range) so that NaN is refused too. An AdamW step above 1 or a decay
  // above 1 per unit of lr diverges at the first step: those are typos, not experiments.
  if (!(o.lr > 0 && o.lr <= 1)) fail("--lr is {}; it must be in (0, 1]", o.lr);
  if (!(o.weight_decay >= 0 && o.weight_decay <= 1)) fail("--weight-decay is {}; it must be in [0, 1]", o.weight_decay);
  if (!(o.clip_grad >= 0 && std::isfinite(o.clip_grad)))
    fail("--clip-grad is {}; it must be a finite norm >= 0 (0: off)", o.clip_grad);
  if (o.warmup_steps < 0) fail("--warmup-steps is {}; it must be >= 0", o.warmup_steps);
  if (!(o.dropout >= 0 && o.dropout < 1)) fail("--dropout is {}; it must be in [0, 1)", o.dropout);
  if (o.eval_windows < 0) fail("--eval-windows is {}; it must be >= 0", o.eval_windows);
  if (o.save_every < 0) fail("--save-every is {}; it must be >= 0 (0: only at the end)", o.save_every);
  if (o.save_keep < 0) fail("--save-keep is {}; it must be >= 0 (0: keep every checkpoint)", o.save_keep);
  if (o.save_keep > 0 && o.save_dir.empty())
    fail("--save-keep {} without --save: give the checkpoint folder whose older steps it removes", o.save_keep);
  if (o.log_every < 1) fail("--log-every is {}; it must be >= 1", o.log_every);
}

TrainReport train(const ModelSpec& model, const ParallelConfig& c, const TrainOptions& o, std::ostream& log) {
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  validate_training(model, c, o, world_size);
  const ProcessGroups groups = make_process_groups(c.tp, c.dp, c.pp);
  const bool root = groups.world_rank == 0;
  // Before allocating: every rank on this machine will hold its share at once.
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int ranks_on_host = 1;
  MPI_Comm_size(host, &ranks_on_host);
  MPI_Comm_free(&host);
  agree(groups.world, [&] { check_host_memory(model, c, ranks_on_host, available_host_bytes()); });
  const RankModel m = make_rank_model(model, c, groups.me.tp, groups.me.pp);
  const int S = model.seq_length, B = c.global_batch, mb = c.micro_batch;

  // Data: every rank reads the corpus (it is small) and derives its own samples.
  Corpus corpus;
  agree(groups.world, [&] { corpus = load_corpus(o.data.empty() ? default_corpus_path() : o.data, S); });
  mark_progress("loading the corpus");
  const WindowSampler sampler(corpus.train, S, o.seed);

  // Model and optimizer, from the seed or from a checkpoint.
  ModelWeights<Real> w = allocate_weights<Real>(m);
  initialise_weights(w, m, o.seed);
  ModelWeights<Real> initial = w;
  ModelWeights<Real> grads = allocate_weights<Real>(m);
  Optimizer<Real> optimizer(m, c, groups, w, AdamWConfig{o.lr, 0.9, 0.95, 1e-8, o.weight_decay}, o.clip_grad);
  const std::string layout = checkpoint_layout(model, c, o);
  // Which shard of the model a checkpoint holds: its world rank and grid coordinates.
  auto rank_meta = [&] { return shard_meta(groups.layout.grid(), groups.world_rank); };
  long start = 0;
  if (!o.resume_dir.empty()) {
    agree(groups.world, [&] {
      const std::string path = checkpoint_path(o.resume_dir, groups.world_rank);
      const CheckpointData ck = read_checkpoint_file(path);
      if (find_meta(ck, "layout", path) != layout)
        fail("checkpoint '{}' was written by '{}', not '{}': resume with the same model, layout and seed", path,
             find_meta(ck, "layout", path), layout);
      // The file must be this rank's own shard: a renamed or swapped rank-R.ckpt of the same
      // run has the right layout and sizes but another rank's weights.
      for (const auto& [key, value] : rank_meta())
        expect_meta(ck, key, value, path, "each rank resumes only from the file it saved (rank-R.ckpt)");
      start = std::stol(find_meta(ck, "step", path));
      std::vector<Real> flat = find_array(ck, "params", path);
      std::vector<Real> expected;
      pack(w, m, expected);
      if (flat.size() != expected.size() || find_array(ck, "adam_m", path).size() != optimizer.first_moment().size())
        fail("checkpoint '{}' holds {} parameters, this rank needs {}", path, flat.size(), expected.size());
      unpack(flat, w, m);
      optimizer.first_moment() = find_array(ck, "adam_m", path);
      optimizer.second_moment() = find_array(ck, "adam_v", path);
    });
    if (start >= o.steps) fail("checkpoint in '{}' is at step {}, not before --steps {}", o.resume_dir, start, o.steps);
  }
  mark_progress(o.resume_dir.empty() ? "initialising the weights" : "resuming from the checkpoint");
  double checkpoint_bytes = 0;  // every rank's file of one saved step
  if (!o.save_dir.empty()) {
    // Before the first step: the disk must hold every checkpoint the run keeps at once. Each
    // rank's file is its parameters and both AdamW moments in fp32, and a little metadata.
    checkpoint_bytes = static_cast<double>(sizeof(Real)) *
                           static_cast<double>(parameter_count(w, m) + optimizer.first_moment().size() +
                                               optimizer.second_moment().size()) +
                       4096.0;
    groups.world.all_reduce_sum(&checkpoint_bytes, 1, {"checkpoint_size", Phase::Forward, -1, -1, {}, true});
    agree(groups.world, [&] {
      if (!root) return;
      const long held = checkpoints_held(checkpoints_saved(start, o.steps, o.save_every), o.save_keep);
      check_checkpoint_space(o.save_dir, static_cast<std::uint64_t>(checkpoint_bytes), held,
                             available_disk_bytes(o.save_dir));
    });
  }
  // A step's folder appears whole or not at all: every rank writes under the partial name,
  // and rank 0 renames it once all have (checkpoint_folders.h).
  auto save = [&](long step) {
    agree(groups.world, [&] {
      if (!root) return;
      // The disk may have filled since the start: a step that cannot fit is not begun.
      check_checkpoint_space(o.save_dir, static_cast<std::uint64_t>(checkpoint_bytes), 1,
                             available_disk_bytes(o.save_dir));
      begin_step_folder(o.save_dir, step);
    });
    try {
      agree(groups.world, [&] {
        CheckpointData ck;
        ck.meta = rank_meta();
        ck.meta["layout"] = layout;
        ck.meta["step"] = std::to_string(step);
        std::vector<Real> flat;
        pack(w, m, flat);
        ck.arrays = {{"params", flat}, {"adam_m", optimizer.first_moment()}, {"adam_v", optimizer.second_moment()}};
        write_checkpoint_file(checkpoint_path(partial_step_folder(o.save_dir, step), groups.world_rank), ck);
      });
      agree(groups.world, [&] {
        if (!root) return;
        publish_step_folder(o.save_dir, step);
        prune_step_folders(o.save_dir, o.save_keep);
      });
    } catch (...) {
      if (root) discard_step_folder(o.save_dir, step);
      throw;
    }
  };

  PipelineRunner<Real> runner(m, c, groups);
  // The last stage's TP rank 0 of each replica holds the loss; sum it over the world.
  const bool holds_loss = groups.me.pp == c.pp - 1 && groups.me.tp == 0;
  auto global_mean = [&](double local_sum, double tokens) {
    double v = holds_loss ? local_sum : 0.0;
    groups.world.all_reduce_sum(&v, 1, {"loss_reduce", Phase::Forward, -1, -1, {}, true});
    return v / tokens;
  };

  TrainReport report;
  const auto t0 = std::chrono::steady_clock::now();
  for (long step = start + 1; step <= o.steps; ++step) {
    auto tokens = [&](int j) { return step_tokens(sampler, c, groups, S, step, j); };
    auto env = [&](int j) { return step_pass_env(model, c, o, groups, step, j); };
    // One iteration as a profiler sees it: every op inside is annotated; what is left
    // (data loading, the loss reduction) is the step's own time.
    const auto ts = std::chrono::steady_clock::now();
    double norm = 0, loss = 0;
    {
      ScopedOp iteration({"train_step", Phase::Forward, -1, -1, {step, 1, 1, 1}, false});
      const double loss_sum =
          runner.train(w, grads, tokens, env, 1.0 / (static_cast<double>(B) * S), report.activations);
      norm = optimizer.step(w, grads, step, learning_rate(o, step));
      loss = global_mean(loss_sum, static_cast<double>(B) * S);
    }
    report.losses.push_back(loss);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
    report.step_seconds.push_back(seconds);
    print_step(log, o, groups, step, loss, norm, B * S / seconds);
    mark_progress("step", step);
    if (!o.save_dir.empty() && ((o.save_every > 0 && step % o.save_every == 0) || step == o.steps)) {
      save(step);
      mark_progress("checkpoint of step", step);
      if (root) fmt::print(log, "saved checkpoint {}\n", step_folder(o.save_dir, step));
    }
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report.tokens_per_s = static_cast<double>(o.steps - start) * B * S / elapsed;

  // Validation: the first windows of the held-out tail, split over the DP replicas.
  if (o.eval_windows > 0) {
    const std::vector<MicrobatchTokens> windows = validation_microbatches(corpus, model, c, o, groups);
    if (!windows.empty()) {
      auto tokens = [&](int j) { return windows[static_cast<std::size_t>(j)]; };
      auto env = [&](int j) { return validation_pass_env(model, c, o, groups, j); };
      const double sum = runner.evaluate(w, static_cast<int>(windows.size()), tokens, env);
      const int count = static_cast<int>(windows.size()) * mb * c.dp;
      report.validation_loss = global_mean(sum, static_cast<double>(count) * S);
      if (root) fmt::print(log, "validation loss {:.4f} ({} windows)\n", report.validation_loss, count);
    }
  }

  report_stage_activations(report, c, groups, log);
  report_update(report, w, initial, m, groups, log);
  return report;
}

}  // namespace cc::engine
