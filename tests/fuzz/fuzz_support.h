// fuzz_support.h — what every parser fuzz target shares: the input as text, the one
// exception a parser may throw on bad input, and how a broken invariant is reported.
//
// The contract under test: any input either parses or throws cc::SpecError (the CLI prints
// its message and exits 2). Anything else — another exception type, a crash, an ASan or
// UBSan report, a hang, a huge allocation — reaches libFuzzer and is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/error.h"

namespace cc::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `parse`; a SpecError is the refusal the contract allows. Nothing else is caught, so
// any other exception escapes LLVMFuzzerTestOneInput and libFuzzer reports it (uncaught
// exception: abort, with the input saved as crash-<sha1>).
template <typename Parse>
void parse_or_refuse(Parse&& parse) {
  try {
    parse();
  } catch (const cc::SpecError&) {
  }
}

// An input the parser accepted broke a promise it makes (e.g. a written spec reads back
// the same): abort so libFuzzer saves the input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

// A spec the parser accepted must read back from the JSON its writer made of it, as the same
// spec: exports embed models and clusters that `simulate --config` reads again. `read` turns
// the written JSON back into a spec; `write` is the writer.
template <typename Read, typename Write>
void expect_reads_back(const nlohmann::json& written, Read&& read, Write&& write, const std::string& what) {
  nlohmann::json again;
  try {
    again = write(read(written));
  } catch (const cc::SpecError& e) {
    finding("an accepted " + what + " does not read back from its own JSON: " + e.what());
  }
  if (again != written) finding("an accepted " + what + " reads back as another one: " + written.dump());
}

}  // namespace cc::fuzz
