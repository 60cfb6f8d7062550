// moe_accuracy.h — the mixture-of-experts runs (tests/reference/measured/moe/), predicted and
// never fitted: their time and peak memory against the calibrated model, by source and cluster,
// with every row the simulator refuses counted by reason.
#pragma once

#include <string>
#include <vector>

#include "accuracy/corpus.h"
#include "sim/calibration.h"

namespace cc::accuracy {

struct MoeRows {
  std::vector<CorpusRow> rows;
  std::vector<RefusedRow> refused;
};

// The moe/ folder under the corpus folder.
MoeRows load_moe_rows(const std::string& corpus_folder);

// Peak memory compared as the dense corpus compares it: Megatron-LM's `mem-max-allocated-bytes`
// of the last rank against the memory model's last stage without its reserve
// (predicted_allocated_gib), on the rows that state a peak and say what it measures.
struct MemoryComparison {
  std::size_t rows = 0;
  double median_abs = 0, mean_abs = 0, within_10 = 0;  // within_10: fraction of rows within 10%
};
MemoryComparison compare_peak_memory(const std::vector<CorpusRow>& rows);

// The peak split where a row also logs what stays resident between steps: the memory model's
// weights, gradients and optimizer state of the last stage against mem-allocated-bytes
// (`resident`), and its activations against the peak less that (`transient`). Signed medians
// (predicted / measured - 1): which half of the peak a miss sits in.
struct PeakSplit {
  std::size_t rows = 0;
  double resident_median = 0, transient_median = 0;
};
PeakSplit split_peak_memory(const std::vector<CorpusRow>& rows);

struct TimeComparison {
  std::size_t rows = 0;
  double mean_abs = 0, median_abs = 0, within_10 = 0;
  double predicted_over_measured = 0;  // mean of predicted / measured
};
TimeComparison compare_time(const std::vector<CorpusRow>& rows, const std::vector<double>& predicted);

// The report's "Mixture of experts (held out)" section. `fitted` is the calibration fitted to
// the dense corpus; `dense` is that corpus, whose peak-memory figure stands beside the MoE one.
std::string moe_report(const MoeRows& moe, const Calibration& fitted, const std::vector<CorpusRow>& dense);

}  // namespace cc::accuracy
