// The GUI and `clustercast simulate` resolve one launch line through the same code
// (interop/resolver.h): the same prediction for every cost source, each also under a stack other
// than the default one, and the same refusal. Each case runs the real `clustercast` binary and
// the GUI's own path from its command line to a simulation.
#include <QProcess>
#include <QTest>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gui/launch_flags.h"
#include "gui/setup_panel.h"
#include "gui/simulation.h"
#include "tests/gui/gui_test_support.h"

using namespace cc;
using namespace cc::gui;

namespace {

const std::string kTraces = CLUSTERCAST_TRACES_DIR;

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

CliRun run_program(const QString& program, const std::vector<std::string>& args) {
  QStringList list;
  for (const auto& a : args) list << QString::fromStdString(a);
  QProcess p;
  p.start(program, list);
  CliRun r;
  if (!p.waitForFinished(120000)) return r;
  r.exit_code = p.exitCode();
  r.out = p.readAllStandardOutput().toStdString();
  r.err = p.readAllStandardError().toStdString();
  return r;
}

Project gui_project(const std::vector<std::string>& args) {
  CLI::App app;
  GuiFlags flags;
  flags.add_to(app);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  app.parse(reversed);
  return project_from_flags(flags, app);
}

// The GUI's reading of a command line: its flags, its resolver call, its simulation.
SimulationOutcome gui_simulation(const std::vector<std::string>& args) { return run_simulation(gui_project(args)); }

nlohmann::json simulate_json(const std::vector<std::string>& args, CliRun* run = nullptr) {
  std::vector<std::string> cli_args{"simulate"};
  cli_args.insert(cli_args.end(), args.begin(), args.end());
  cli_args.push_back("--json");
  const CliRun cli = run_program(CLUSTERCAST_BINARY, cli_args);
  if (run) *run = cli;
  if (cli.exit_code != 0) return nullptr;
  return nlohmann::json::parse(cli.out);
}

void expect_same_prediction(const std::vector<std::string>& args) {
  CliRun cli;
  const auto doc = simulate_json(args, &cli);
  QVERIFY2(cli.exit_code == 0, cli.err.c_str());
  const SimulationOutcome gui = gui_simulation(args);
  QVERIFY2(gui.ok(), gui.error.c_str());
  QCOMPARE(gui.result->config.framework, doc.at("config").at("framework").get<std::string>());
  QCOMPARE(gui.result->iteration_time_s, doc.at("iteration_time_s").get<double>());
  QCOMPARE(gui.result->peak_memory_gib, doc.at("peak_memory_gib").get<double>());
  // A warning the command line prints (a database from another GPU) the GUI shows too.
  for (const auto& warning : gui.warnings) QVERIFY2(cli.err.find(warning) != std::string::npos, cli.err.c_str());
  QCOMPARE(cli.err.find("warning:") != std::string::npos, !gui.warnings.empty());
}

const std::vector<std::string> kAnalytic{"--model", "gpt3-1.3b", "--cluster", "dgx-a100-80gb", "--gpus", "16",
                                         "--tp", "2", "--pp", "4", "--global-batch-size", "32"};
// The case the resolver was written for: the GUI priced a CPU database under Megatron-Core's
// stack, where simulate replays the engine's own (blocking sends), 21% apart.
const std::vector<std::string> kCpuDatabase{"--costs", kTraces + "/cpu-xeon-2core-small.json", "--model", "small",
                                            "--gpus", "2", "--pp", "2", "--global-batch-size", "8",
                                            "--precision", "fp32"};
const std::vector<std::string> kGpuDatabase{"--costs", kTraces + "/gpu-h200-gpt3-layers.json", "--model", "gpt3-6.7b",
                                            "--cluster", "h200", "--gpus", "64", "--tp", "8", "--pp", "4",
                                            "--sequence-parallel", "--recompute-granularity", "selective",
                                            "--global-batch-size", "64"};

// Context parallelism: Llama 3 70B at 32K tokens, TP 8 x CP 2 over 64 H100s (DP 4).
const std::vector<std::string> kContextParallel{"--model", "llama3-70b", "--cluster", "dgx-h100", "--gpus", "64",
                                                "--tp", "8", "--cp", "2", "--seq-length", "32768",
                                                "--sequence-parallel", "--global-batch-size", "32"};

// Pipeline splits: Llama 3.1 405B as Meta split it (Dubey et al. 2024, Sec. 3.3.2), one layer
// per model chunk, `E|(t|)*126L`: 128 chunks over PP 16, 8 per rank; 16,384 H100s at TP 8 x PP 16
// leave DP 128, and 2,048 sequences are 16 microbatches.
const std::vector<std::string> kPipelineLayout{
    "--model", "llama3-405b", "--cluster", "dgx-h100", "--gpus", "16384", "--tp", "8", "--pp", "16",
    "--pipeline-model-parallel-layout", "E|(t|)*126L", "--recompute-granularity", "full", "--micro-batch-size", "1",
    "--global-batch-size", "2048", "--seq-length", "8192", "--sequence-parallel", "--use-distributed-optimizer"};
// Mixture of experts: Mixtral-8x7B on 64 H100s, TP 2 x PP 4 (DP 8), EP 8 with ETP 1, the
// all-to-all dispatcher, grouped GEMM, a capacity factor and a stated load imbalance.
const std::vector<std::string> kMoe{"--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "64", "--tp", "2",
                                    "--pp", "4", "--ep", "8", "--etp", "1", "--sequence-parallel",
                                    "--use-distributed-optimizer", "--seq-length", "4096", "--global-batch-size", "256",
                                    "--recompute-granularity", "full", "--moe-token-dispatcher-type", "alltoall",
                                    "--moe-grouped-gemm", "--moe-expert-capacity-factor", "1.25",
                                    "--moe-load-imbalance", "1.1"};
// The embedding and the loss counted as layers: GPT-3 1.3B's 24 layers + 2 = 26 over PP 2 (13
// each); the embedding alone: 25 over PP 5.
const std::vector<std::string> kCountedSplit{"--model", "gpt3-1.3b", "--gpus", "16", "--tp", "2", "--pp", "2",
                                             "--account-for-embedding-in-pipeline-split",
                                             "--account-for-loss-in-pipeline-split", "--global-batch-size", "32"};
const std::vector<std::string> kEmbeddingCounted{"--model", "gpt3-1.3b", "--gpus", "20", "--tp", "2", "--pp", "5",
                                                 "--account-for-embedding-in-pipeline-split",
                                                 "--global-batch-size", "32"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

class TestLaunchParity : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { isolate_settings(); }

  // The whole window, setup panel included, shows what simulate prints for the same launch
  // line: 2 GPUs on 8-GPU nodes stay 2 GPUs (the panel counted whole nodes, 8), and CP 2
  // stays CP 2 (the panel once had no CP field, and ran CP 1 with twice the DP).
  void windowShowsWhatSimulatePrints() {
    for (const auto& args : {kCpuDatabase, kAnalytic, kContextParallel, kPipelineLayout,
                             with(kPipelineLayout, {"--microbatch-group-size-per-virtual-pipeline-stage", "16"}),
                             kCountedSplit, kEmbeddingCounted, kMoe}) {
      MainWindow w;
      w.set_project(gui_project(args));
      QVERIFY(wait_for_result(w));
      QVERIFY(w.result());
      const auto doc = simulate_json(args);
      QVERIFY(!doc.is_null());
      const auto& config = doc.at("config");
      QCOMPARE(w.result()->config.cp, config.value("context_parallel_size", 1));
      QCOMPARE(w.result()->config.gpus(), config.at("data_parallel_size").get<int>() *
                                              config.at("tensor_model_parallel_size").get<int>() *
                                              config.value("context_parallel_size", 1) *
                                              config.at("pipeline_model_parallel_size").get<int>());
      QCOMPARE(w.result()->iteration_time_s, doc.at("iteration_time_s").get<double>());
      QCOMPARE(w.setup()->project().gpus, gui_project(args).gpus);
    }
  }

  void analyticModel() { expect_same_prediction(kAnalytic); }
  void analyticModelOtherStack() { expect_same_prediction(with(kAnalytic, {"--framework", "megatron-deepspeed"})); }
  void cpuDatabase() { expect_same_prediction(kCpuDatabase); }

  // Megatron-LM switches a launch line sets that no setup field shows stay with the project — through
  // the setup panel and a saved project file — and are weighed against every layout the user then
  // sets: --use-tp-pp-dp-mapping is read on one node and refused, as simulate refuses it, once the
  // GPUs span two nodes with PP and DP both above 1.
  void megatronSwitchesStayWithTheProject() {
    const std::vector<std::string> line = {"--model", "gpt3-1.3b", "--cluster", "dgx-a100-80gb", "--gpus", "8",
                                           "--tp", "2", "--pp", "2", "--use-tp-pp-dp-mapping"};
    const Project p = gui_project(line);
    QVERIFY(p.switches.tp_pp_dp_rank_order);
    QVERIFY(run_simulation(p).ok());
    SetupPanel panel;
    panel.set_project(p);
    QVERIFY(panel.project().switches.tp_pp_dp_rank_order);
    const Project reopened = project_from_json(project_to_json(p), "test");
    QVERIFY(reopened.switches.tp_pp_dp_rank_order);
    QVERIFY(reopened == p);
    Project two_nodes = reopened;
    two_nodes.gpus = 16;
    const SimulationOutcome refused = run_simulation(two_nodes);
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error.find("--use-tp-pp-dp-mapping over 16 GPUs is not modelled") != std::string::npos,
             refused.error.c_str());
    CliRun cli;
    simulate_json({"--model", "gpt3-1.3b", "--cluster", "dgx-a100-80gb", "--gpus", "16", "--tp", "2", "--pp", "2",
                   "--use-tp-pp-dp-mapping"},
                  &cli);
    QCOMPARE(cli.exit_code, 2);
    QVERIFY2(cli.err.find("--use-tp-pp-dp-mapping over 16 GPUs is not modelled") != std::string::npos, cli.err.c_str());
  }

  // A newly chosen model's attention starts at the default of the stack the run resolves to, as
  // `simulate` picks it: Megatron-Core's flash, our engine's unfused kernels where the cost
  // database is the engine's, and a stack the user names over the database's.
  void defaultAttentionIsTheResolvedStacks() {
    Project p = project_from_presets("gpt3-175b", "dgx-a100-80gb", 8);
    QVERIFY(default_attention(p, p.model) == AttentionKernel::Flash);
    p.costs_file = kTraces + "/cpu-xeon-2core-small.json";
    QVERIFY(default_attention(p, p.model) == AttentionKernel::Unfused);
    p.framework = "nemo";
    QVERIFY(default_attention(p, p.model) == AttentionKernel::Flash);
  }
  void cpuDatabaseOtherStack() { expect_same_prediction(with(kCpuDatabase, {"--framework", "megatron-core"})); }
  void gpuDatabase() { expect_same_prediction(kGpuDatabase); }
  void contextParallel() {
    expect_same_prediction(kContextParallel);
    expect_same_prediction(with(kContextParallel, {"--cp-comm-type", "allgather"}));
    expect_same_prediction(
        with(kContextParallel, {"--cp-comm-type", "a2a+p2p", "--hierarchical-context-parallel-sizes", "1", "2"}));
    const SimulationOutcome gui = gui_simulation(kContextParallel);
    QVERIFY2(gui.ok(), gui.error.c_str());
    QCOMPARE(gui.result->config.dp, 4);  // 64 / (8 x 2 x 1)
  }
  // The layout string, the group size and the counted embedding and loss mean one run in both.
  void pipelineSplits() {
    expect_same_prediction(kPipelineLayout);
    expect_same_prediction(with(kPipelineLayout, {"--microbatch-group-size-per-virtual-pipeline-stage", "16"}));
    expect_same_prediction(kCountedSplit);
    expect_same_prediction(kEmbeddingCounted);
    const SimulationOutcome gui = gui_simulation(kPipelineLayout);
    QVERIFY2(gui.ok(), gui.error.c_str());
    QCOMPARE(gui.result->config.virtual_stages, 8);  // 128 stages / PP 16
    QCOMPARE(gui.result->config.pipeline_layout, std::string("E|(t|)*126L"));
    const SimulationOutcome grouped =
        gui_simulation(with(kPipelineLayout, {"--microbatch-group-size-per-virtual-pipeline-stage", "16"}));
    QVERIFY2(grouped.ok(), grouped.error.c_str());
    QCOMPARE(grouped.result->config.microbatch_group_size, 16);
    const SimulationOutcome counted = gui_simulation(kCountedSplit);
    QVERIFY2(counted.ok(), counted.error.c_str());
    QVERIFY(counted.result->config.account_for_embedding && counted.result->config.account_for_loss);
  }
  // EP, ETP and the MoE switches mean one run in both, and the setup hands them back unchanged.
  void mixtureOfExperts() {
    expect_same_prediction(kMoe);
    expect_same_prediction(with(kMoe, {"--moe-pad-expert-input-to-capacity"}));
    const SimulationOutcome gui = gui_simulation(kMoe);
    QVERIFY2(gui.ok(), gui.error.c_str());
    QCOMPARE(gui.result->config.ep, 8);
    QCOMPARE(gui.result->config.expert_tp(), 1);
    QVERIFY(gui.result->config.moe.dispatcher == TokenDispatcher::AllToAll);
    QVERIFY(gui.result->breakdown.ep_comm > 0);
    MainWindow w;
    w.setup()->set_project(gui_project(kMoe));
    const Project shown = w.setup()->project(), given = gui_project(kMoe);
    QVERIFY(shown.config.moe == given.config.moe);
    QCOMPARE(shown.config.ep, given.config.ep);
    QCOMPARE(shown.config.etp, given.config.etp);
    QVERIFY(model_to_json(shown.model) == model_to_json(given.model));
  }
  void gpuDatabaseOtherStack() { expect_same_prediction(with(kGpuDatabase, {"--framework", "nemo"})); }
  // A database measured on an H200 priced for H100s: both warn, both predict the same.
  void gpuDatabaseOnAnotherGpuWarns() {
    std::vector<std::string> args = kGpuDatabase;
    args[5] = "dgx-h100";
    const SimulationOutcome gui = gui_simulation(args);
    QVERIFY2(gui.ok(), gui.error.c_str());
    QCOMPARE(gui.warnings.size(), std::size_t{1});
    QVERIFY(gui.warnings[0].find("NVIDIA H200") != std::string::npos);
    expect_same_prediction(args);
  }

  // A project that switches to a measured database runs that database's stack, as --costs
  // without --framework does; naming a stack keeps it.
  void projectFollowsTheDatabaseStackUnlessOneIsNamed() {
    const SimulationOutcome launched = gui_simulation(kCpuDatabase);
    QVERIFY2(launched.ok(), launched.error.c_str());
    CLI::App app;
    GuiFlags flags;
    flags.add_to(app);
    std::vector<std::string> analytic(kCpuDatabase.begin() + 2, kCpuDatabase.end());
    std::vector<std::string> reversed(analytic.rbegin(), analytic.rend());
    app.parse(reversed);
    Project p = project_from_flags(flags, app);
    QCOMPARE(p.resolved_config().framework, std::string(kDefaultFramework));
    p.costs_file = kCpuDatabase[1];
    QCOMPARE(p.resolved_config().framework, launched.result->config.framework);
    QVERIFY(p.resolved_config().framework != std::string(kDefaultFramework));
    p.framework = "megatron-core";
    QCOMPARE(p.resolved_config().framework, std::string("megatron-core"));
  }

  // Bad values end the GUI before any window with the message simulate prints, exit 2.
  void badLayoutFlagsExitTwoWithTheSimulatorsMessage() {
    for (const std::vector<std::string>& bad :
         {std::vector<std::string>{"--model", "gpt3-175b", "--tp", "0"}, {"--tp", "abc"}, {"--tp", "0"},
          {"--model", "gpt3-175b", "--tp", "5"},
          {"--model", "gpt3-175b", "--gpus", "100", "--tp", "8", "--pp", "16"},
          // Llama 3 70B's one KV head per TP rank does not split over an all-to-all of 2.
          with(kContextParallel, {"--cp-comm-type", "a2a"}),
          // 2 x CP 2 x TP 8 = 32 does not divide 32760 tokens.
          {"--model", "llama3-70b", "--cluster", "dgx-h100", "--gpus", "64", "--tp", "8", "--cp", "2", "--seq-length",
           "32760", "--sequence-parallel"},
          // 125 transformer layers placed for a model of 126.
          {"--model", "llama3-405b", "--cluster", "dgx-h100", "--gpus", "16384", "--tp", "8", "--pp", "16",
           "--pipeline-model-parallel-layout", "E|(t|)*125L"},
          // A group of 8 microbatches, fewer than PP 16.
          with(kPipelineLayout, {"--microbatch-group-size-per-virtual-pipeline-stage", "8"}),
          // A cost database that is not there: refused, never replaced by the analytic model.
          {"--model", "gpt3-1.3b", "--gpus", "8", "--costs", "/nonexistent/costs.json"}}) {
      std::vector<std::string> simulate{"simulate"};
      simulate.insert(simulate.end(), bad.begin(), bad.end());
      const CliRun cli = run_program(CLUSTERCAST_BINARY, simulate);
      const CliRun gui = run_program(CLUSTERCAST_GUI_BINARY, bad);
      QCOMPARE(cli.exit_code, 2);
      QCOMPARE(gui.exit_code, 2);
      const std::string cli_message = cli.err.substr(cli.err.find(": ") + 2);
      const std::string gui_message = gui.err.substr(gui.err.find(": ") + 2);
      QVERIFY2(cli.err.starts_with("clustercast: "), cli.err.c_str());
      QVERIFY2(gui.err.starts_with("clustercast-gui: "), gui.err.c_str());
      QCOMPARE(gui_message, cli_message);
    }
  }

  // Numbers read as simulate reads them: 010 is ten (as Megatron-LM's argparse reads it; octal
  // would be 8, which does not divide 20 layers), and an empty value is refused.
  void numbersAreDecimalAndNeverEmpty() {
    const SimulationOutcome ten = gui_simulation({"--num-layers", "20", "--hidden-size", "1280",
                                                  "--num-attention-heads", "20", "--gpus", "10", "--pp", "010"});
    QVERIFY2(ten.ok(), ten.error.c_str());
    QCOMPARE(ten.result->config.pp, 10);
    const CliRun empty = run_program(CLUSTERCAST_GUI_BINARY, {"--model", "gpt3-175b", "--tp", ""});
    QCOMPARE(empty.exit_code, 2);
    QVERIFY2(empty.err.find("--tensor-model-parallel-size") != std::string::npos, empty.err.c_str());
  }

  // Each refusal lands beside the setup field that edits what it names, from the error's own
  // field (SpecError::field), not from its wording.
  void errorsLandBesideTheirField() {
    CLI::App app;
    GuiFlags flags;
    flags.add_to(app);
    std::vector<std::string> args(kAnalytic.rbegin(), kAnalytic.rend());
    app.parse(args);
    const Project good = project_from_flags(flags, app);
    auto field_of = [](const Project& p) { return run_simulation(p).error_field; };
    Project p = good;
    p.gpus = 12;  // TP 2 x PP 4 does not divide 12 GPUs
    QCOMPARE(field_of(p), std::string("gpus"));
    p = good;
    p.config.tp = 4;  // over 4 stages of 16 GPUs: DP 1; TP 4 does not divide an FFN of 8190
    p.model.ffn_hidden_size = 8190;
    QCOMPARE(field_of(p), std::string("tp"));
    p = good;
    p.config.global_batch = 33;
    QCOMPARE(field_of(p), std::string("global_batch"));
    p = good;
    p.config.tp_comm_overlap = true;  // needs sequence parallelism
    QCOMPARE(field_of(p), std::string("tp_comm_overlap"));
    p = good;
    p.model.hidden_size = 0;
    QCOMPARE(field_of(p), std::string("model"));
    p = good;
    p.cluster.gpus_per_node = 0;
    QCOMPARE(field_of(p), std::string("cluster"));
    p = good;
    p.costs_file = "/nonexistent/costs.json";
    QCOMPARE(field_of(p), std::string("costs"));
    p = good;
    p.config.pipeline_layout = "Et*12|t*12L";  // 2 stages over PP 4
    QCOMPARE(field_of(p), std::string("pipeline_layout"));
    p = good;
    p.config.microbatch_group_size = 4;  // no interleaving to group
    QCOMPARE(field_of(p), std::string("microbatch_group_size"));
    p = good;
    p.config.account_for_embedding = true;  // 24 + 1 = 25 layers over PP 4
    QCOMPARE(field_of(p), std::string("pp"));
    p.config.first_stage_layers = 3;  // beside uneven stages Megatron-Core counts no embedding
    QCOMPARE(field_of(p), std::string("account_for_embedding"));
    p = good;
    p.config.last_stage_layers = 5;  // 24 - 5 = 19 over 3 stages
    QCOMPARE(field_of(p), std::string("last_stage_layers"));
  }

  // --window-size is WIDTHxHEIGHT in whole pixels; anything else exits 2 naming the flag.
  void windowSizeIsWidthByHeight() {
    QCOMPARE(window_size_from("1280x800"), (std::pair<int, int>{1280, 800}));
    for (const char* bad : {"1280", "1280x", "x800", "1280x800x2", "1280X800", "100x800", "1280x-800", ""}) {
      try {
        window_size_from(bad);
        QFAIL(bad);
      } catch (const SpecError& e) {
        QCOMPARE(e.field(), std::string("--window-size"));
      }
    }
    const CliRun gui = run_program(CLUSTERCAST_GUI_BINARY, {"--window-size", "1280x8OO"});
    QCOMPARE(gui.exit_code, 2);
    QVERIFY2(gui.err.find("--window-size '1280x8OO'") != std::string::npos, gui.err.c_str());
  }

  // With no run option the window opens on the seed paper's run (Korthikanti et al. 2022; the
  // README): GPT-3 175B on 1,024 A100-80GB, TP 8 x PP 16, sequence parallel, selective
  // recomputation, global batch 1,536; `simulate` given those flags predicts the same.
  void firstScreenIsThePapersRun() {
    const Project p = gui_project({});
    QCOMPARE(p.model_preset, std::string("gpt3-175b"));
    QCOMPARE(p.cluster_preset, std::string("dgx-a100-80gb"));
    QCOMPARE(p.gpus, 1024);
    QCOMPARE(p.config.tp, 8);
    QCOMPARE(p.config.pp, 16);
    QCOMPARE(p.config.dp, 8);
    QVERIFY(p.config.sequence_parallel);
    QVERIFY(p.config.recompute == RecomputeGranularity::Selective);
    QCOMPARE(p.config.global_batch, 1536);
    const auto doc = simulate_json({"--model", "gpt3-175b", "--cluster", "dgx-a100-80gb", "--gpus", "1024", "--tp", "8",
                                    "--pp", "16", "--sequence-parallel", "--recompute-granularity", "selective",
                                    "--global-batch-size", "1536"});
    QVERIFY(!doc.is_null());
    const SimulationOutcome gui = run_simulation(p);
    QVERIFY2(gui.ok(), gui.error.c_str());
    QCOMPARE(gui.result->iteration_time_s, doc.at("iteration_time_s").get<double>());
    QCOMPARE(gui.result->peak_memory_gib, doc.at("peak_memory_gib").get<double>());
  }

  void unknownOptionExitsTwo() {
    const CliRun gui = run_program(CLUSTERCAST_GUI_BINARY, {"--frobnicate"});
    QCOMPARE(gui.exit_code, 2);
    QVERIFY2(gui.err.find("--frobnicate") != std::string::npos, gui.err.c_str());
    // Refused before Qt starts: without any display QApplication would abort first.
    const CliRun bare = run_program("/usr/bin/env", {"-u", "QT_QPA_PLATFORM", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY",
                                                     CLUSTERCAST_GUI_BINARY, "--frobnicate"});
    QCOMPARE(bare.exit_code, 2);
    QVERIFY2(bare.err.find("'--frobnicate' is not an option") != std::string::npos, bare.err.c_str());
    // Qt's own options, with one dash or two and their values, are not refused.
    QCOMPARE(cc::gui::first_non_qt_argument({"-platform", "offscreen", "--style=fusion", "-reverse"}), std::string());
    QCOMPARE(cc::gui::first_non_qt_argument({"-style", "fusion", "stray"}), std::string("stray"));
  }
};

QTEST_MAIN(TestLaunchParity)
#include "test_launch_parity.moc"
