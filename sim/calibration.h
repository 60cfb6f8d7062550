// calibration.h — the analytic model's fitted constants: a versioned parameter file
// (traces/presets/calibration/analytic-params.json, embedded in the binary) written by the
// fit (`build/tests/fit-costs`, tests/accuracy/) from the corpus of published runs in
// tests/reference/measured/. It holds the prior every constant starts from, per-GPU-
// generation and per-software-stack values the fit moved, and the cross-validated error
// that becomes every prediction's interval and the search's tie tolerance.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analytic_params.h"
#include "sim/cluster_spec.h"
#include "sim/cost_source.h"

namespace cc {

struct Calibration {
  static constexpr int kVersion = 1;
  AnalyticParams defaults;  // the prior: hand-derived values with their sources
  // Overrides by name (analytic_param_fields()), per GPU generation and per stack.
  std::map<std::string, std::map<std::string, double>> generations, frameworks;
  // Leave-one-source-out error of these constants' fit procedure, by regime (ascending
  // min_gpus): small host-bound runs miss differently from large ones.
  std::vector<ErrorBand> held_out;
  nlohmann::json provenance = nlohmann::json::object();  // command, corpus, date

  // defaults, then the generation's overrides, then the stack's.
  AnalyticParams params_for(const GpuSpec& gpu, const std::string& framework) const;
  // The band of the regime `gpus` falls in; none without cross-validation.
  std::optional<ErrorBand> band_for(int gpus) const;
};

// "ampere", "hopper", "volta", "blackwell" from the GPU's name; "other" when unknown (the
// defaults apply).
std::string gpu_generation(const GpuSpec& gpu);

Calibration calibration_from_json(const nlohmann::json& doc, const std::string& where);
nlohmann::json calibration_to_json(const Calibration& c);

// The embedded calibration file, parsed once.
const Calibration& embedded_calibration();

}  // namespace cc
