// Megatron-LM's functional test cases reach clustercast twice: as argument files a user reads
// (tests/reference/megatron/functional/, `simulate --config`) and as measured corpus rows the fit
// learns from (tests/reference/measured/megatron_functional_tests.csv, converted from the same
// cases' configs and golden values by tools/megatron_functional.py). Read the user's way, each
// file must be the run its rows measured — same model, same layout, same prediction under the
// shipped constants — or what the fit learns is not what a user of that file is told.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "accuracy/corpus.h"
#include "accuracy/fit.h"
#include "interop/input_flags.h"
#include "interop/layout_files.h"
#include "interop/resolver.h"
#include "sim/calibration.h"
#include "sim/error.h"
#include "sim/simulator.h"

namespace cc::accuracy {
namespace {

const std::string kMeasured = CLUSTERCAST_SOURCE_DIR "/tests/reference/measured";
const std::string kFunctional = CLUSTERCAST_SOURCE_DIR "/tests/reference/megatron/functional/";


// The test case a row measured: its id is "mcore-ft-<case>-<dev|lts>-<platform>" (the converter's).
std::string test_case_of(const std::string& id) {
  const std::string prefix = "mcore-ft-";
  if (!id.starts_with(prefix)) return "";
  for (const char* branch : {"-dev-", "-lts-"})
    if (const auto at = id.rfind(branch); at != std::string::npos && at > prefix.size())
      return id.substr(prefix.size(), at - prefix.size());
  return "";
}

TEST(FunctionalFiles, EachReadTestCaseIsTheRunItsCorpusRowsMeasured) {
  int compared = 0, agree = 0;
  std::set<std::string> refused_at_simulate;
  std::vector<RefusedRow> refused;  // runs the simulator refuses: not the fit's, nor compared here
  for (const CorpusRow& row : load_corpus(kMeasured, &refused)) {
    if (row.source != "megatron-functional-tests") continue;
    const std::string test_case = test_case_of(row.id);
    ASSERT_FALSE(test_case.empty()) << row.id << " names no test case";
    const std::string path = kFunctional + test_case + ".args";
    if (!std::filesystem::exists(path)) continue;
    LayoutFile file;
    try {
      file = read_layout_file(path);
    } catch (const SpecError&) {
      continue;  // refused files: tests/unit/test_megatron_functional_args.cpp lists each with its reason
    }
    // The user's command: simulate --config FILE --framework <the row's stack> --cluster <its
    // cluster> --gpus <its count>.
    RunRequest request;
    request.model = file.model.value_or(ModelSpec{});
    request.cluster = row.cluster;
    request.gpus = row.config.gpus();
    LayoutFlags flags;
    flags.framework = row.config.framework;
    request.layout = flags.request(request.model, &file);
    std::optional<ResolvedRun> resolved;
    try {
      resolved = resolve_run(request);
    } catch (const SpecError& e) {
      refused_at_simulate.insert(test_case + ": " + e.what());
      continue;
    }
    ++compared;
    const ResolvedRun& run = *resolved;
    ModelSpec model = run.model;
    model.name = row.model.name;
    const std::string model_diff = model_to_json(model).dump() == model_to_json(row.model).dump() ? "" : "model";
    const std::string config_diff =
        config_to_json(run.config).dump() == config_to_json(row.config).dump() ? "" : "layout";
    const double file_s = simulate(run.model, run.cluster, run.config, *run.cost_source()).iteration_time_s;
    const double row_s = simulate_row(row, embedded_calibration()).iteration_time_s;
    const bool same = model_diff.empty() && config_diff.empty() && std::abs(file_s / row_s - 1) < 1e-9;
    agree += same;
    if (!same)
      ADD_FAILURE() << row.id << ": " << model_diff << " " << config_diff << " file " << file_s << " s, row " << row_s
                    << " s\n file model  " << model_to_json(model).dump() << "\n row model   "
                    << model_to_json(row.model).dump() << "\n file layout " << config_to_json(run.config).dump()
                    << "\n row layout  " << config_to_json(row.config).dump();
  }
  std::printf("%d corpus rows of read functional test cases compared, %d agree\n", compared, agree);
  RecordProperty("functional_rows_compared", compared);
  RecordProperty("functional_rows_agreeing", agree);
  // Of the 265 rows, those whose file is read (the rest: refused files, or CP rows held out); a
  // file that starts or stops being read moves these.
  EXPECT_EQ(compared, 231);
  EXPECT_EQ(agree, compared);
  // Read but refused at simulate: Megatron-Core's local layers without the fused scale-mask-softmax
  // (--no-masked-softmax-fusion under the unfused attention), which clustercast does not model. The
  // corpus has no column for it, so these cases' rows (4) are priced with the fused softmax their
  // runs turned off: a known mismatch (docs/megatron-flags.md) until the PyTorch softmax is modelled.
  std::set<std::string> cases;
  for (const std::string& why : refused_at_simulate) {
    EXPECT_NE(why.find("--no-masked-softmax-fusion with the unfused attention kernels is not modelled"),
              std::string::npos)
        << why;
    cases.insert(why.substr(0, why.find(':')));
  }
  EXPECT_EQ(cases, (std::set<std::string>{"gpt3_mcore_tp2_pp2_resume_torch_dist_uninstall_te",
                                          "gpt3_mcore_tp2_pp2_uninstall_te"}));
}

}  // namespace
}  // namespace cc::accuracy
