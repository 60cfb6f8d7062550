// report.h — docs/accuracy.md: the corpus, the fitted constants and how well they predict,
// in-sample and held out by source, down to every row.
#pragma once

#include <string>
#include <vector>

#include "accuracy/corpus.h"
#include "accuracy/fit.h"
#include "accuracy/held_out.h"

namespace cc::accuracy {

std::string accuracy_report(const std::vector<CorpusRow>& rows, const std::vector<RefusedRow>& refused,
                            const CrossValidation& cv, const HeldOutRows& held_out, const std::string& command);

}  // namespace cc::accuracy

namespace cc::accuracy {

// Every row's prediction under `c` with the simulated time breakdown, as CSV (for looking
// at where the misses sit: `fit-costs --evaluate --rows FILE`).
// `text` as one Markdown table cell: a layout string's stage separators ('|') would end the cell.
std::string markdown_cell(std::string text);

std::string prediction_table(const std::vector<CorpusRow>& rows, const Calibration& c);

}  // namespace cc::accuracy
