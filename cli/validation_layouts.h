// validation_layouts.h — the layouts `clustercast validate` trains and predicts, written
// as a short list: "pp=2,mbs=2; pp=2,recompute=full; pp=2,vpp=3; tp=2,sp,recompute=selective;
// dp=2,distopt". Each item becomes a checked ParallelConfig on the given number of ranks
// and the `clustercast train` flags that run exactly it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::cli {

// Default microbatches per DP replica when an item gives no gbs= (enough to fill a
// two-stage 1F1B pipeline and to make interleaving divide).
inline constexpr int kValidationMicrobatches = 4;

struct ValidationLayout {
  std::string text;               // the item as written, trimmed
  ParallelConfig config;          // DP = ranks / (TP x PP)
  std::optional<int> seq_length;  // seq=N: the model at another sequence length
  std::optional<int> num_layers;  // layers=N: the model at another depth
  ModelSpec model_for(const ModelSpec& base) const;
  // `clustercast train` flags for this layout (model, steps and backend are the caller's).
  std::vector<std::string> train_flags(const ModelSpec& base) const;
};

// Throws SpecError naming the item and the key on anything it does not understand, and on
// a layout that does not divide `ranks` or the model.
std::vector<ValidationLayout> parse_validation_layouts(const std::string& text, const ModelSpec& model, int ranks,
                                                       Precision precision);

}  // namespace cc::cli
