// fold_cache.h — the leave-one-source-out fits kept between runs. Refitting the model once per
// source is nearly all of the cross-validation's time, and each of those fits is a function of
// the corpus, the fit's code and the simulator. fit-costs writes them to kFoldCachePath beside
// the shipped constants, each with what it was computed from: a hash of the corpus files and of
// the fit's source, the fit's options, and the fold's data cost (fit.h). A fold is reused only
// while all of these still match — its data cost recomputed under the kept constants to 1e-9, so a
// simulator that prices any row of the fold differently has it refitted. The fit on every source
// is never kept: the cross-validation test refits it and checks it against the shipped constants.
// With CLUSTERCAST_FULL_REFIT=1 in the environment the test refits every fold.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "accuracy/corpus.h"
#include "accuracy/fit.h"
#include "sim/calibration.h"

namespace cc::accuracy {

inline constexpr const char* kFoldCachePath = CLUSTERCAST_SOURCE_DIR "/tests/accuracy/fold-fits.json";

// The folds of the cache at `path` that still hold for the corpus in `corpus_folder` (read as
// `rows`), by source. `notes` gets one line per fold that does not, and why; a missing file is
// an empty cache, an unreadable one a SpecError.
std::map<std::string, Calibration> reusable_folds(const std::string& path, const std::string& corpus_folder,
                                                  const std::vector<CorpusRow>& rows, const FitOptions& options,
                                                  std::vector<std::string>* notes);

// The cache of `cv`'s folds, as JSON text for `path`.
std::string fold_cache_text(const std::string& corpus_folder, const std::vector<CorpusRow>& rows,
                            const CrossValidation& cv, const FitOptions& options);

}  // namespace cc::accuracy
