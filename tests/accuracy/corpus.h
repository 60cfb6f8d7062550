// corpus.h — the calibration corpus: published, measured training runs, one CSV per source
// in tests/reference/measured/ (schema and sources in its README), read into the specs the
// simulator takes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster_spec.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::accuracy {

struct CorpusRow {
  std::string id, source;
  ModelSpec model;
  ClusterSpec cluster;
  ParallelConfig config;
  double measured_s = 0;
  std::optional<double> measured_peak_gib;
  // Memory resident between steps (weights, gradients, optimizer state), where the source logs
  // it: Megatron-LM's mem-allocated-bytes after warm-up (the MoE rows' allocated_memory_gib).
  std::optional<double> measured_resident_gib;
  std::vector<std::string> assumed;  // columns the source does not state
  std::string note;

  bool fully_stated() const { return assumed.empty(); }
  bool assumes(const std::string& column) const;
  // Rows of one model, cluster, GPU count and batch: layouts that compete for one job.
  std::string job() const;
};

// A well-formed measured run that the simulator refuses (a layout it does not model).
struct RefusedRow {
  std::string id, source, reason;
  std::string field;  // the flag or column the refusal names (SpecError::field), for counting by reason
  int cp = 1;  // its context-parallel size, for reports that single out CP runs
};

// Every *.csv under `folder`, in file-name then row order. A malformed row is a SpecError
// naming the file, row and column. A run the simulator refuses goes to `refused` when
// given (else it is a SpecError too).
std::vector<CorpusRow> load_corpus(const std::string& folder, std::vector<RefusedRow>* refused = nullptr);

// The mixture-of-experts runs in `folder` (tests/reference/measured/moe/, schema in
// tools/schema_moe.py): the dense columns read as above, the MoE columns into the model's
// MoeSpec / MlaSpec and the layout's EP, ETP and MoeRunOptions. What a row states that the
// simulator does not model (a feature, an FP8 recipe, a dispatcher, MLA or MTP while they are
// refused) sends it to `refused` with the reason.
std::vector<CorpusRow> load_moe_corpus(const std::string& folder, std::vector<RefusedRow>* refused = nullptr);

// The files load_corpus (and load_moe_corpus) read: every *.csv directly in `folder`, in
// file-name order.
std::vector<std::string> corpus_files(const std::string& folder);

std::vector<std::string> sources_of(const std::vector<CorpusRow>& rows);
// `rows` without those of `source` (a fit that holds it out).
std::vector<CorpusRow> rows_without(const std::vector<CorpusRow>& rows, const std::string& source);

}  // namespace cc::accuracy
