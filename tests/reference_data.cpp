#include "reference_data.h"

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace cc::test {

namespace {

// A CSV with a header row; fields here never contain commas except the last (source).
std::vector<std::map<std::string, std::string>> read_csv(const std::string& name) {
  const std::string path = std::string(CLUSTERCAST_REFERENCE_DIR) + "/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string f; std::getline(hs, f, ',');) header.push_back(f);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::map<std::string, std::string> row;
    std::stringstream ls(line);
    for (std::size_t i = 0; i < header.size(); ++i) {
      std::string f;
      if (i + 1 == header.size()) std::getline(ls, f);
      else std::getline(ls, f, ',');
      row[header[i]] = f;
    }
    rows.push_back(row);
  }
  return rows;
}

std::string preset_for(const std::string& model) { return model == "gpt-175b" ? "gpt3-175b" : model; }

}  // namespace

std::vector<ReferenceRun> korthikanti_runs() {
  std::vector<ReferenceRun> runs;
  for (const auto& row : read_csv("korthikanti2022.csv")) {
    ReferenceRun r;
    r.model_preset = preset_for(row.at("model"));
    ParallelConfig& c = r.config;
    c.tp = std::stoi(row.at("tp"));
    c.pp = std::stoi(row.at("pp"));
    c.dp = std::stoi(row.at("dp"));
    c.sequence_parallel = row.at("sequence_parallel") == "1";
    c.recompute = recompute_granularity_from(row.at("recompute"), "reference");
    c.micro_batch = std::stoi(row.at("micro_batch"));
    c.global_batch = std::stoi(row.at("global_batch"));
    c.virtual_stages = std::stoi(row.at("virtual_stages"));
    // Selene's Megatron-LM of 2022: unfused attention, every pipeline exchange waited on.
    c.framework = "megatron-2022";
    c.attention = AttentionKernel::Unfused;
    r.iteration_time_s = std::stod(row.at("iteration_time_s"));
    if (!row.at("mfu").empty()) r.mfu = std::stod(row.at("mfu"));
    if (!row.at("hfu").empty()) r.hfu = std::stod(row.at("hfu"));
    runs.push_back(r);
  }
  return runs;
}

std::vector<ReferenceLayer> korthikanti_layers() {
  std::vector<ReferenceLayer> layers;
  for (const auto& row : read_csv("korthikanti2022_layer.csv")) {
    ReferenceLayer l;
    l.variant = row.at("variant");
    l.config.tp = std::stoi(row.at("tp"));
    l.config.micro_batch = std::stoi(row.at("micro_batch"));
    l.config.global_batch = l.config.micro_batch;
    l.config.sequence_parallel = row.at("sequence_parallel") == "1";
    l.config.recompute = recompute_granularity_from(row.at("recompute"), "reference");
    l.forward_ms = std::stod(row.at("forward_ms"));
    l.backward_ms = std::stod(row.at("backward_ms"));
    layers.push_back(l);
  }
  return layers;
}

}  // namespace cc::test
