#include "accuracy/fold_cache.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc::accuracy {
namespace {

constexpr const char* kFormat = "clustercast-fold-fits";
constexpr int kVersion = 1;
// Relative agreement of a recomputed data cost with the kept one: the shipped constants are
// checked against their refit to the same tolerance.
constexpr double kCostTolerance = 1e-9;

// The code a fold's fit runs besides the simulator (whose pricing the data cost checks): which
// rows are read and how, which constants are free and how they are fitted.
const char* const kFitCode[] = {"tests/accuracy/corpus.h", "tests/accuracy/corpus.cpp", "tests/accuracy/fit.h",
                                "tests/accuracy/fit.cpp"};

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read '{}'", path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// FNV-1a, 64 bits, over each file's name and bytes in order: a change to any of them, not a
// secure digest.
std::string hash_files(const std::vector<std::string>& paths, const std::string& root) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](const std::string& bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // separates one file's bytes from the next name
    h *= 1099511628211ull;
  };
  for (const auto& p : paths) {
    mix(std::filesystem::path(p).lexically_relative(root).generic_string());
    mix(file_text(p));
  }
  return fmt::format("{:016x}", h);
}

std::string corpus_hash(const std::string& folder) { return hash_files(corpus_files(folder), folder); }

std::string code_hash() {
  std::vector<std::string> files;
  for (const char* f : kFitCode) files.push_back(std::string(CLUSTERCAST_SOURCE_DIR) + "/" + f);
  return hash_files(files, CLUSTERCAST_SOURCE_DIR);
}

}  // namespace

std::map<std::string, Calibration> reusable_folds(const std::string& path, const std::string& corpus_folder,
                                                  const std::vector<CorpusRow>& rows, const FitOptions& options,
                                                  std::vector<std::string>* notes) {
  std::map<std::string, Calibration> out;
  auto note = [&](const std::string& line) {
    if (notes) notes->push_back(line);
  };
  if (!std::filesystem::exists(path)) {
    note(fmt::format("{}: no kept fits", path));
    return out;
  }
  const nlohmann::json doc = parse_json(file_text(path), path);
  const JsonFields f(doc, path);
  if (f.string("format") != kFormat) fail("{}: format '{}' is not '{}'", path, f.string("format"), kFormat);
  if (f.integer("version", 1) != kVersion) fail("{}: version {} is not {}", path, f.integer("version", 1), kVersion);
  const struct {
    const char* what;
    bool same;
  } keys[] = {
      {"the corpus files", f.string("corpus_hash") == corpus_hash(corpus_folder)},
      {"the fit's code", f.string("code_hash") == code_hash()},
      {"the fit's options", f.integer("max_iterations", 1) == options.max_iterations &&
                                f.integer("max_rows_per_source", 1) == static_cast<long long>(options.max_rows_per_source)},
  };
  for (const auto& k : keys)
    if (!k.same) {
      note(fmt::format("{}: {} changed since the fits were kept", path, k.what));
      return out;
    }
  const JsonFields folds = f.object("folds");
  for (const auto& source : sources_of(rows)) {
    if (!folds.has(source)) {
      note(fmt::format("{}: no kept fit without {}", path, source));
      continue;
    }
    const JsonFields fold = folds.object(source);
    const double kept_cost = fold.number("data_cost", 0.0);
    Calibration c = calibration_from_json(fold.raw("calibration"), path + " folds." + source);
    const double cost = data_cost(rows_without(rows, source), c, options);
    if (std::abs(cost - kept_cost) > kCostTolerance * std::max(1.0, std::abs(kept_cost))) {
      note(fmt::format("{}: the fit without {} prices its rows differently now (data cost {:.12g}, kept {:.12g})", path,
                       source, cost, kept_cost));
      continue;
    }
    out.emplace(source, std::move(c));
  }
  return out;
}

std::string fold_cache_text(const std::string& corpus_folder, const std::vector<CorpusRow>& rows,
                            const CrossValidation& cv, const FitOptions& options) {
  nlohmann::json doc;
  doc["format"] = kFormat;
  doc["version"] = kVersion;
  doc["command"] = "./build/tests/fit-costs";
  doc["corpus_hash"] = corpus_hash(corpus_folder);
  doc["code_hash"] = code_hash();
  doc["max_iterations"] = options.max_iterations;
  doc["max_rows_per_source"] = options.max_rows_per_source;
  doc["folds"] = nlohmann::json::object();
  for (const auto& [source, c] : cv.without) {
    doc["folds"][source]["data_cost"] = data_cost(rows_without(rows, source), c, options);
    doc["folds"][source]["calibration"] = calibration_to_json(c);
  }
  return doc.dump(1) + "\n";
}

}  // namespace cc::accuracy
