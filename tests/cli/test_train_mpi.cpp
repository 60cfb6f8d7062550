// The training engine as users run it: `mpirun -np N clustercast train ...`. Every layout
// with TP, PP, DP in {1, 2} on up to 4 ranks, with and without sequence parallelism, under
// each recompute mode and with the distributed optimizer, and layouts with uneven first and
// last stages, must compute the serial run's losses and parameter updates (relative 1e-4,
// fp32, dropout off). Bad input ends every
// rank with one message; a hang fails through the timeout.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "mpi_runner.h"

namespace cc::cli_test {
namespace {

// `train` with the tests' defaults; `changes` replaces flags (value "" removes one) or adds.
std::vector<std::string> train_args(const std::map<std::string, std::string>& changes = {}) {
  std::map<std::string, std::string> flags = {{"--model", "tiny"}, {"--steps", "3"}, {"--micro-batch-size", "2"},
                                              {"--global-batch-size", "8"}, {"--seed", "5"}, {"--lr", "3e-3"},
                                              {"--warmup-steps", "1"}, {"--eval-windows", "0"},
                                              {"--dropout", "0"}};
  for (const auto& [flag, value] : changes) flags[flag] = value;
  std::vector<std::string> args = {"train"};
  for (const auto& [flag, value] : flags) {
    if (value == "-") continue;  // removed
    args.push_back(flag);
    if (!value.empty()) args.push_back(value);
  }
  return args;
}
std::vector<std::string> base_args() { return train_args(); }

const std::string& serial_output() {
  static const std::string out = [] {
    const RunResult r = run_mpi(1, base_args());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }();
  return out;
}
const TrainOutput& serial() {
  static const TrainOutput out = parse_train(serial_output());
  return out;
}

struct Layout {
  int tp, pp, dp;
  bool sp = false, distopt = false;
  std::string recompute = "none";
  std::string extra;  // e.g. interleaving or the recompute method
  std::string name() const {
    std::string n = "tp" + std::to_string(tp) + "_pp" + std::to_string(pp) + "_dp" + std::to_string(dp) +
                    (sp ? "_sp" : "") + "_" + recompute + (distopt ? "_distopt" : "");
    for (char c : extra) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return n;
  }
};

// gtest prints parameters through PrintTo: show names, not bytes.
void PrintTo(const Layout& l, std::ostream* os) { *os << l.name(); }

std::vector<Layout> layouts() {
  std::vector<Layout> all;
  for (int tp : {1, 2})
    for (int pp : {1, 2})
      for (int dp : {1, 2}) {
        if (tp * pp * dp > 4) continue;
        for (bool sp : {false, true}) {
          if (sp && tp == 1) continue;
          for (const char* recompute : {"none", "selective", "full"})
            for (bool distopt : {false, true}) {
              if (distopt && dp == 1) continue;
              all.push_back({tp, pp, dp, sp, distopt, recompute, ""});
            }
        }
      }
  all.push_back({1, 2, 1, false, false, "none", "--num-layers-per-virtual-pipeline-stage 1"});
  all.push_back({2, 2, 1, true, false, "selective", "--num-layers-per-virtual-pipeline-stage 1"});
  all.push_back({1, 1, 1, false, false, "full", "--recompute-method block --recompute-num-layers 2"});
  all.push_back({1, 2, 2, false, true, "full", "--recompute-method uniform --recompute-num-layers 2"});
  // Uneven stages (Megatron-Core's lighter first and last stages), tiny's 4 layers as 1, 2, 1;
  // as 3, 1 under TP and SP with one recomputed layer per stage; as 3, 1 over two replicas.
  all.push_back({1, 3, 1, false, false, "none",
                 "--decoder-first-pipeline-num-layers 1 --decoder-last-pipeline-num-layers 1"});
  all.push_back({2, 2, 1, true, false, "full",
                 "--decoder-first-pipeline-num-layers 3 --recompute-method block --recompute-num-layers 1"});
  all.push_back({1, 2, 2, false, true, "selective", "--decoder-last-pipeline-num-layers 1"});
  return all;
}

class ParallelLayouts : public ::testing::TestWithParam<Layout> {};

TEST_P(ParallelLayouts, MatchSerialLossesAndUpdates) {
  const Layout& l = GetParam();
  std::vector<std::string> args = train_args({{"--tp", std::to_string(l.tp)}, {"--pp", std::to_string(l.pp)},
                                              {"--recompute-granularity", l.recompute}});
  if (l.sp) args.push_back("--sequence-parallel");
  if (l.distopt) args.push_back("--use-distributed-optimizer");
  std::istringstream extra(l.extra);
  for (std::string w; extra >> w;) args.push_back(w);
  const RunResult r = run_mpi(l.tp * l.pp * l.dp, args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_matches_serial(parse_train(r.out), serial(), r.out);
}

INSTANTIATE_TEST_SUITE_P(Engine, ParallelLayouts, ::testing::ValuesIn(layouts()),
                         [](const auto& info) { return info.param.name(); });

TEST(TrainMpi, DropoutRunsRepeatExactly) {
  const auto args = train_args({{"--tp", "2"}, {"--sequence-parallel", ""}, {"--dropout", "0.1"}});
  const RunResult a = run_mpi(4, args), b = run_mpi(4, args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(parse_train(a.out).loss, parse_train(b.out).loss);
  EXPECT_EQ(parse_train(a.out).fingerprint, parse_train(b.out).fingerprint);
  EXPECT_NE(parse_train(a.out).loss, serial().loss);  // dropout really ran
}

// Without --dropout a run draws the model's masks (Megatron-LM's 0.1 for a model with dropout
// layers): the run simulate prices and a profile measures, not a run without masks.
TEST(TrainMpi, DropoutDefaultsToTheModels) {
  const RunResult plain = run_mpi(2, train_args({{"--tp", "2"}, {"--dropout", "-"}}));
  const RunResult stated = run_mpi(2, train_args({{"--tp", "2"}, {"--dropout", "0.1"}}));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(stated.exit_code, 0) << stated.err;
  EXPECT_EQ(parse_train(plain.out).loss, parse_train(stated.out).loss);
  EXPECT_NE(parse_train(plain.out).loss, serial().loss);
  EXPECT_NE(plain.out.find("ranks, dropout 0.1\n"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("note: --dropout"), std::string::npos) << plain.out;
  // Turned off on a model with dropout layers: the run says how to predict it.
  EXPECT_NE(serial_output().find("note: --dropout 0 on a model with dropout layers; predict this run with "
                                 "--hidden-dropout 0 --attention-dropout 0"),
            std::string::npos)
      << serial_output();
}

TEST(TrainMpi, ResumedRunContinuesBitIdentically) {
  TempDir dir;
  const std::map<std::string, std::string> six = {{"--steps", "6"}, {"--tp", "2"}, {"--pp", "2"}, {"--dropout", "0.1"}};
  const RunResult straight = run_mpi(4, train_args(six));
  ASSERT_EQ(straight.exit_code, 0) << straight.err;
  auto saving = six;
  saving["--save"] = dir.file("ckpt");
  saving["--save-every"] = "3";
  const RunResult first = run_mpi(4, train_args(saving));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto resuming = six;
  resuming["--resume"] = dir.file("ckpt/step-3");  // --save-every 3 wrote DIR/step-3
  const RunResult resumed = run_mpi(4, train_args(resuming));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const TrainOutput a = parse_train(straight.out), b = parse_train(resumed.out);
  for (int step = 4; step <= 6; ++step) EXPECT_EQ(a.loss.at(step), b.loss.at(step)) << step;
  EXPECT_EQ(b.loss.count(3), 0u);
  EXPECT_EQ(a.fingerprint.empty(), false);
  EXPECT_EQ(a.update_norm, b.update_norm);
}

TEST(TrainMpi, SaveKeepLeavesTheNewestStepsEachWithEveryRanksFile) {
  TempDir dir;
  const RunResult r = run_mpi(
      2, train_args({{"--steps", "5"}, {"--save", dir.file("ckpt")}, {"--save-every", "1"}, {"--save-keep", "2"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> steps;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("ckpt"))) steps.insert(e.path().filename());
  EXPECT_EQ(steps, (std::set<std::string>{"step-4", "step-5"}));  // nothing partial left either
  for (const char* step : {"step-4", "step-5"})
    for (const char* file : {"rank-0.ckpt", "rank-1.ckpt"})
      EXPECT_TRUE(std::filesystem::is_regular_file(dir.file("ckpt") + "/" + step + "/" + file)) << step << file;
  EXPECT_NE(r.out.find("saved checkpoint " + dir.file("ckpt") + "/step-5"), std::string::npos) << r.out;
}

TEST(TrainMpi, ACheckpointResumesOnlyTheLayerSplitThatWroteIt) {
  TempDir dir;
  const RunResult even = run_mpi(2, train_args({{"--pp", "2"}, {"--steps", "2"}, {"--save", dir.file("ckpt")}}));
  ASSERT_EQ(even.exit_code, 0) << even.err;
  // The even split holds layers 0-1 and 2-3; this one 0 and 1-3.
  const RunResult r = run_mpi(2, train_args({{"--pp", "2"}, {"--steps", "3"}, {"--resume", dir.file("ckpt/step-2")},
                                             {"--decoder-first-pipeline-num-layers", "1"}}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("first1 last0"), std::string::npos) << r.err;
}

TEST(TrainMpi, RecomputeChangesMemoryNotNumbers) {
  // With dropout on, as in Korthikanti et al.'s Table 2 (whose 5as/h term counts the
  // softmax, its dropout mask and the dropped probabilities).
  std::map<std::string, TrainOutput> runs;
  std::map<std::string, long> scores;
  for (const char* mode : {"none", "selective", "full"}) {
    const RunResult r = run_mpi(1, train_args({{"--recompute-granularity", mode}, {"--dropout", "0.1"}}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    runs[mode] = parse_train(r.out);
    scores[mode] = runs[mode].attention_scores.at(0);
  }
  EXPECT_EQ(runs["none"].loss, runs["selective"].loss);
  EXPECT_EQ(runs["none"].loss, runs["full"].loss);
  EXPECT_EQ(runs["none"].fingerprint, runs["full"].fingerprint);
  const long none = runs["none"].activation_bytes.at(0), selective = runs["selective"].activation_bytes.at(0),
             full = runs["full"].activation_bytes.at(0);
  // Selective frees exactly the attention core's S×S tensors: for tiny (a = 4 heads,
  // s = 128, micro batch 2, 4 layers) 4·2·128²·(4 B softmax + 1 B mask + 4 B dropped) per layer.
  EXPECT_EQ(scores["none"], 4L * 4 * 2 * 128 * 128 * 9);
  EXPECT_EQ(scores["selective"], 0);
  EXPECT_EQ(none - selective, scores["none"]);
  // Full keeps one input per layer plus the output layer's logits; its peak comes while one
  // recomputed layer's activations are back during backward (one of tiny's four layers), so
  // the peak holds exactly one layer's S×S tensors. The CUDA engine notes its peak at the same
  // moments (engine::note_activation_peak; tests/gpu/test_gpu_training.cpp checks it there).
  EXPECT_LT(full, selective / 2);
  EXPECT_EQ(scores["full"], scores["none"] / 4);
}

struct BadRun {
  const char* name;
  int ranks;
  std::vector<std::string> extra;
  const char* message;
};

void PrintTo(const BadRun& b, std::ostream* os) { *os << b.name; }

class TrainBadInput : public ::testing::TestWithParam<BadRun> {};

TEST_P(TrainBadInput, EveryRankExitsWithOneMessage) {
  const BadRun& b = GetParam();
  std::map<std::string, std::string> changes;
  for (std::size_t i = 0; i + 1 < b.extra.size(); i += 2) changes[b.extra[i]] = b.extra[i + 1];
  const RunResult r = run_mpi(b.ranks, train_args(changes), 60);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "timed out: a rank hung";
  EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err;
  // One rank reports; the others stay silent.
  std::size_t count = 0;
  for (std::size_t at = r.err.find("clustercast:"); at != std::string::npos; at = r.err.find("clustercast:", at + 1))
    ++count;
  EXPECT_EQ(count, 1u) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Engine, TrainBadInput,
    ::testing::Values(BadRun{"TpDoesNotDivideHeads", 3, {"--tp", "3"}, "--tensor-model-parallel-size 3 does not divide num_attention_heads 4"},
                      BadRun{"RanksDoNotMatch", 3, {"--tp", "2"}, "3 MPI ranks are not divisible by TP 2 x PP 1"},
                      BadRun{"MissingCorpus", 2, {"--tp", "2", "--data", "/nonexistent/corpus.txt"}, "/nonexistent/corpus.txt"},
                      BadRun{"GlobalBatchDoesNotDivide", 2, {"--global-batch-size", "7"}, "--global-batch-size 7"},
                      BadRun{"MissingCheckpoint", 2, {"--resume", "/nonexistent/ckpt"}, "/nonexistent/ckpt"},
                      BadRun{"Bf16OnTheCpu", 1, {"--precision", "bf16"}, "the CPU backend computes in fp32"},
                      // No GPU here (or no CUDA in this build): every rank stops, one says why.
                      BadRun{"CudaWithoutAGpu", 2, {"--backend", "cuda"}, "--backend cuda:"},
                      // Refused before any GPU is touched (or, without CUDA, for that).
                      BadRun{"CudaCheckpoints", 2, {"--backend", "cuda", "--save", "/tmp/never"}, "CUDA"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(TrainMpi, CorruptCheckpointOnOneRankStopsAll) {
  TempDir dir;
  ASSERT_EQ(run_mpi(2, train_args({{"--tp", "2"}, {"--steps", "2"}, {"--save", dir.file("ckpt")}})).exit_code, 0);
  const std::string victim = dir.file("ckpt/step-2/rank-1.ckpt");
  std::string bytes = read_file(victim);
  ASSERT_GT(bytes.size(), 100u);
  bytes[bytes.size() / 2] ^= 0x5a;
  write_file(victim, bytes);
  const RunResult r =
      run_mpi(2, train_args({{"--tp", "2"}, {"--steps", "4"}, {"--resume", dir.file("ckpt/step-2")}}), 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("rank-1.ckpt"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cc::cli_test
