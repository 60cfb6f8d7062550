// fit-costs — fits the analytic model's constants to the measured corpus, cross-validates
// them leave-one-source-out, and writes the calibration file the simulator embeds and the
// accuracy report:
//   ./build/tests/fit-costs                # refit: traces/presets/calibration/analytic-params.json, docs/accuracy.md
//                                          # and the held-out fits the cross-validation test reuses (fold_cache.h)
//   ./build/tests/fit-costs --evaluate     # only predict the corpus (and the held-out rows) with the embedded constants
// Rebuild clustercast afterwards so the binary embeds the new constants.
#include <malloc.h>

#include <chrono>
#include <climits>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "accuracy/corpus.h"
#include "accuracy/fit.h"
#include "accuracy/fold_cache.h"
#include "accuracy/metrics.h"
#include "accuracy/report.h"
#include "sim/atomic_file.h"
#include "sim/calibration.h"
#include "sim/error.h"

using namespace cc;
using namespace cc::accuracy;

int main(int argc, char** argv) {
  // A fit simulates every row hundreds of times; glibc would hand each simulation's task
  // graph back to the kernel and fault it in again (a third of the run in page faults).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  CLI::App app{"Fit and cross-validate the analytic cost model on the measured corpus"};
  std::string corpus = CLUSTERCAST_SOURCE_DIR "/tests/reference/measured";
  std::string params_out = CLUSTERCAST_SOURCE_DIR "/traces/presets/calibration/analytic-params.json";
  std::string report_out = CLUSTERCAST_SOURCE_DIR "/docs/accuracy.md";
  std::string folds_out = kFoldCachePath;
  bool evaluate = false;
  std::string rows_out, hold_out;
  FitOptions options;
  app.add_option("--corpus", corpus, "Folder of corpus CSVs")->capture_default_str();
  app.add_option("--params-out", params_out, "Calibration file to write")->capture_default_str();
  app.add_option("--report", report_out, "Accuracy report to write")->capture_default_str();
  app.add_option("--folds-out", folds_out, "Held-out fits to keep for the cross-validation test")->capture_default_str();
  app.add_option("--threads", options.threads, "Worker threads (0 = every core)");
  app.add_flag("--evaluate", evaluate, "Only predict the corpus with the embedded constants and print the errors");
  app.add_option("--hold-out", hold_out,
                 "Only fit without this source ('none': on every source) and print the errors; writes nothing else");
  app.add_option("--rows", rows_out,
                 "With --evaluate or --hold-out: write every row's prediction and time breakdown to this CSV");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto start = std::chrono::steady_clock::now();
    std::vector<RefusedRow> refused;
    const std::vector<CorpusRow> rows = load_corpus(corpus, &refused);
    std::cerr << fmt::format("{} rows from {} sources; {} refused by the simulator\n", rows.size(),
                             sources_of(rows).size(), refused.size());
    for (const auto& r : refused) std::cerr << fmt::format("  refused {}: {}\n", r.id, r.reason);
    if (evaluate || !hold_out.empty()) {
      Calibration fitted;
      if (!hold_out.empty()) {
        const std::vector<CorpusRow> train = rows_without(rows, hold_out);
        if (train.size() == rows.size() && hold_out != "none") fail("--hold-out: no source '{}' in the corpus", hold_out);
        fitted = fit(train, options, [](const std::string& line) { std::cerr << line << "\n"; });
        nlohmann::json constants = calibration_to_json(fitted);
        for (const char* drop : {"format", "version", "provenance", "held_out_error"}) constants.erase(drop);
        std::cerr << "fitted constants: " << constants.dump() << "\n";
      }
      const Calibration& c = hold_out.empty() ? embedded_calibration() : fitted;
      if (evaluate) std::cout << held_out_report(load_held_out(corpus), c) << "\n";
      const auto pred = predict(rows, c, options.threads);
      if (!rows_out.empty()) write_file_atomically(rows_out, prediction_table(rows, c));
      for (const auto& [source, s] : summarize_by(rows, pred, [](const CorpusRow& r) { return r.source; }))
        std::cout << fmt::format("{:<28} {:>5} rows  mean {:5.1f}%  worst {:5.1f}%  signed {:+5.1f}%\n", source, s.rows,
                                 100 * s.mean_abs, 100 * s.worst_abs, 100 * s.signed_mean);
      std::cerr << fmt::format("{:.1f} s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      return 0;
    }
    CrossValidation cv = cross_validate(rows, options, [](const std::string& line) { std::cerr << line << "\n"; });
    Calibration out = cv.all;
    out.held_out = error_bands(rows, cv.held_out,
                               fmt::format("leave-one-source-out over {} published runs from {} sources (docs/accuracy.md)",
                                           rows.size(), sources_of(rows).size()));
    out.provenance["command"] = "./build/tests/fit-costs";
    out.provenance["corpus"] = "tests/reference/measured";
    out.provenance["corpus_rows"] = rows.size();
    out.provenance["sources"] = sources_of(rows);
    // Render all three before writing any, so a failure leaves none half-updated.
    const std::string params_text = calibration_to_json(out).dump(2) + "\n";
    const std::string report_text =
        accuracy_report(rows, refused, cv, load_held_out(corpus), "./build/tests/fit-costs");
    const std::string folds_text = fold_cache_text(corpus, rows, cv, options);
    write_file_atomically(params_out, params_text);
    write_file_atomically(report_out, report_text);
    write_file_atomically(folds_out, folds_text);
    std::cerr << fmt::format("wrote {}, {} and {} ({:.0f} s)\n", params_out, report_out, folds_out,
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return 0;
  } catch (const SpecError& e) {
    std::cerr << "fit-costs: " << e.what() << "\n";
    return 2;
  }
}
