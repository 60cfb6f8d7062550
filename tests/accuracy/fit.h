// fit.h — fits the analytic model's free constants to the measured corpus and judges the
// fit by leave-one-source-out cross-validation. The constants are scale factors on the
// prior (hand-derived) values, per GPU generation (GEMM, memory, flash-attention and
// link efficiency) and per software stack (host launch, per-pass, per-iteration
// overhead); least squares on log time, each source weighted equally, with a weak
// log-normal prior that keeps a constant with no data at its prior value.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "accuracy/corpus.h"
#include "sim/calibration.h"
#include "sim/simulator.h"

namespace cc::accuracy {

// One fitted scale factor: every field in `fields` of group `group` (a GPU generation or a
// stack) is its prior value times exp(log_scale).
struct FreeParameter {
  // Shared: one value for every generation and stack (written to the defaults).
  // Generation: a GPU generation's own value. Stack: a factor on the shared value for one
  // software stack, so a stack with no rows in the fit keeps the shared value.
  enum class Scope { Shared, Generation, Stack } scope = Scope::Shared;
  std::string group;  // the generation or stack; empty for Shared
  std::vector<std::string> fields;
  double prior_sigma = 0.5;    // prior standard deviation of log_scale
};

// How many independent sources must measure a software stack before it gets constants of its
// own in the fit; a stack with fewer takes the shared values. Two is the aim (constants fitted
// to one source learn that source), but a stack's facts must first say what its constants now
// absorb: at two, the Megatron-LM CI harness's per-step logging and deterministic kernels
// moved into the shared host costs and vTrain's rows went from 27% to 108% held out (sources
// alike 13.8% to 20.4%; docs/accuracy-notes.md).
inline constexpr std::size_t kSourcesForStackConstants = 1;

// The prior: AnalyticParams' hand-derived defaults, and for each stack the overheads below,
// with their sources in sim/README.md.
Calibration prior_calibration();
// The parameters the fit frees, for the generations and stacks `rows` use.
std::vector<FreeParameter> free_parameters(const std::vector<CorpusRow>& rows);

struct FitOptions {
  int max_iterations = 25;
  std::size_t max_rows_per_source = 240;  // an even stride through larger sources
  int threads = 0;                        // 0: every core
};

// One row simulated under `c` (the calibrated analytic model at the row's GPU and stack), as
// measured or with another layout of the same run.
SimResult simulate_row(const CorpusRow& row, const Calibration& c);
SimResult simulate_row(const CorpusRow& row, const Calibration& c, const ParallelConfig& config);

// Predicted iteration time of every row under `c` (the calibrated analytic model).
std::vector<double> predict(const std::vector<CorpusRow>& rows, const Calibration& c, int threads = 0);

// The fit's data term under `c`: the squared weighted log errors of the rows a fit on `rows`
// uses. A fit kept from an earlier run still holds while this recomputes to what it was.
double data_cost(const std::vector<CorpusRow>& rows, const Calibration& c, const FitOptions& options = {});

// Fits on `rows`; returns the calibration (prior with the fitted values written in).
using FitProgress = std::function<void(const std::string&)>;
Calibration fit(const std::vector<CorpusRow>& rows, const FitOptions& options = {}, const FitProgress& progress = {});

struct CrossValidation {
  std::vector<double> in_sample;  // predictions of the fit on every row
  std::vector<double> held_out;   // each row predicted by the fit without its source
  // The same, with the row's stack left unnamed (the default, kDefaultFramework, as a user who
  // does not say gets): NaN where that stack refuses the row's layout.
  std::vector<double> held_out_default_stack;
  Calibration all;                // the fit on every row
  std::map<std::string, Calibration> without;  // per source: the fit on every other source
};
// `reused`: fits without a source, per source, taken as they are instead of refitted (fold_cache.h
// keeps them between runs and says which still hold).
CrossValidation cross_validate(const std::vector<CorpusRow>& rows, const FitOptions& options = {},
                               const FitProgress& progress = {},
                               const std::map<std::string, Calibration>& reused = {});

}  // namespace cc::accuracy
