// held_out.h — measured runs kept out of the fit (tests/reference/measured/excluded/): the
// context-parallel runs and Llama 3's Table 4, predicted with the constants fitted to the
// corpus, which never saw them; and the mixture-of-experts runs (measured/moe/,
// accuracy/moe_accuracy.h).
#pragma once

#include <string>
#include <vector>

#include "accuracy/corpus.h"
#include "accuracy/moe_accuracy.h"
#include "sim/calibration.h"

namespace cc::accuracy {

struct HeldOutRows {
  std::vector<CorpusRow> rows;
  std::vector<RefusedRow> refused;  // well-formed runs whose layout the simulator does not model
  MoeRows moe;
};

// The excluded/ and moe/ folders under the corpus folder.
HeldOutRows load_held_out(const std::string& corpus_folder);

// The report's sections on them ("Context parallelism (held out)", "Llama 3 Table 4 (held
// out)"), predicted with `fitted`.
std::string held_out_report(const HeldOutRows& held_out, const Calibration& fitted);

}  // namespace cc::accuracy
