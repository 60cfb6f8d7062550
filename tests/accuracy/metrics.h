// metrics.h — how predictions compare with the corpus: error summaries by any grouping,
// the source-weighted error band, and per-job ranking quality (Spearman, best-layout regret).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "accuracy/corpus.h"
#include "sim/cost_source.h"

namespace cc::accuracy {

// Signed relative error of one prediction: predicted / measured - 1 (negative = too fast).
double relative_error(double predicted, double measured);

struct ErrorSummary {
  std::size_t rows = 0;
  double mean_abs = 0, worst_abs = 0, signed_mean = 0;
};

ErrorSummary summarize(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                       const std::function<bool(const CorpusRow&)>& keep = {});
// One summary per key (source, GPU generation, framework, ...).
std::map<std::string, ErrorSummary> summarize_by(const std::vector<CorpusRow>& rows,
                                                 const std::vector<double>& predicted,
                                                 const std::function<std::string(const CorpusRow&)>& key);
// Every source counts once: the mean over sources of each source's summary.
ErrorSummary source_weighted(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted);

// Mean |error| of a layout relative to its job's common (geometric-mean) error, over jobs
// with at least `min_layouts` rows, each source weighted alike.
double within_job_error(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                        std::size_t min_layouts = 5);

// How often an interval built without a source contained that source's measurements
// (nested: the interval applied to source S comes from the other sources' errors), over the
// rows of one regime, the interval leaving `tail` of the weight out on each side (0.10: the
// central 80%; 0: every error of the other sources).
struct IntervalCoverage {
  double tail = 0.10;
  double sources_alike = 0;  // mean over sources of the share of its rows inside
  double rows = 0;           // share of all rows inside
  std::map<std::string, double> by_source;
};
inline constexpr double kNominalCoverage = 0.80;
IntervalCoverage nested_coverage(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                                 int min_gpus, int below_gpus, double tail);
// The tail the stated interval leaves out: 0.10 (the central 80%) where the nested coverage
// reaches 80% (sources alike), else the first percentile below that does, else 0.
double interval_tail(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted, int min_gpus,
                     int below_gpus);

// measured / predicted bounds leaving interval_tail() out on each side (each source weighted
// alike), with the source-weighted mean absolute error and the within-job error (the mean
// error where the rows form no job of five layouts), over the rows on at least `min_gpus`
// GPUs (and fewer than `below_gpus`, 0 = no bound).
ErrorBand error_band(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted, int min_gpus,
                     int below_gpus, std::string basis);
// The regimes clustercast states its error for: runs on fewer than 64 GPUs (host-bound
// harnesses, single nodes) and runs on 64 or more.
inline constexpr int kLargeRunGpus = 64;
std::vector<ErrorBand> error_bands(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                                   const std::string& basis);

// Memory the PyTorch allocator had allocated at its peak on the last pipeline stage (what
// Megatron-LM logs as mem-max-allocated-bytes from its last rank): weights, gradients,
// optimizer state, the GEMM libraries' workspaces and activations, without the CUDA context,
// NCCL buffers or fragmentation.
double predicted_allocated_gib(const CorpusRow& row);

struct JobRanking {
  std::string job;
  std::size_t layouts = 0;
  double spearman = 0;
  double regret = 0;  // measured time of the predicted best over the measured best, minus 1
};
// Jobs (CorpusRow::job) with at least `min_layouts` rows.
std::vector<JobRanking> rank_jobs(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted,
                                  std::size_t min_layouts = 5);

}  // namespace cc::accuracy
