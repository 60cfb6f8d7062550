// The bad-input corpus (tests/bad-input/cases.txt): every command line in it runs through
// the real binary and must exit with its stated code, say one "clustercast:" line that holds
// the stated fragment (the offending value), print nothing on stdout, and leave no file
// behind — not an output, not a temporary — in the folder its outputs were aimed at.
//
// One test walks the whole corpus so a new case is one line in the data file; every failing
// case is reported with its line number.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

#include "bad_input_contract.h"
#include "cli_runner.h"

namespace cc::cli_test {
namespace {

struct CorpusCase {
  int line = 0;
  int exit_code = 0;
  std::string fragment;
  std::vector<std::string> args;
};

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::string substitute(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// "EXIT | FRAGMENT | ARGS..." per line; '#' starts a comment line; "@define NAME ARGS..."
// names a common prefix that "@NAME" in later arguments expands to.
std::vector<CorpusCase> read_corpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<CorpusCase> cases;
  std::map<std::string, std::vector<std::string>> defines;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    if (line.rfind("@define ", 0) == 0) {
      std::vector<std::string> words = words_of(line.substr(8));
      if (words.empty()) throw std::runtime_error(path + ":" + std::to_string(number) + ": empty @define");
      const std::string name = "@" + words.front();
      defines[name] = std::vector<std::string>(words.begin() + 1, words.end());
      continue;
    }
    const auto a = line.find(" | "), b = line.find(" | ", a == std::string::npos ? 0 : a + 3);
    if (a == std::string::npos || b == std::string::npos)
      throw std::runtime_error(path + ":" + std::to_string(number) + ": not 'EXIT | FRAGMENT | ARGS'");
    CorpusCase c;
    c.line = number;
    c.exit_code = std::stoi(line.substr(0, a));
    c.fragment = trim(line.substr(a + 3, b - a - 3));
    for (const std::string& w : words_of(line.substr(b + 3))) {
      if (w[0] != '@') {
        c.args.push_back(w);
        continue;
      }
      const auto d = defines.find(w);
      if (d == defines.end()) throw std::runtime_error(path + ":" + std::to_string(number) + ": no @define " + w);
      c.args.insert(c.args.end(), d->second.begin(), d->second.end());
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// Under the sanitizers every case costs about a second (the instrumented binary's start-up,
// and mpirun's for the train cases), a sixth of the sanitized suite for error paths the plain
// build runs in full: there a fixed third runs, spread over the file's sections.
#ifdef __SANITIZE_ADDRESS__
constexpr std::size_t kCaseStride = 3;
#else
constexpr std::size_t kCaseStride = 1;
#endif

TEST(BadInputCorpus, EveryCaseExitsWithItsCodeNamesTheValueAndLeavesNoFile) {
  const std::string root = CLUSTERCAST_SOURCE_DIR;
  const std::string inputs = root + "/tests/bad-input/inputs";
  const std::vector<CorpusCase> cases = read_corpus(root + "/tests/bad-input/cases.txt");
  // The issue asked for the cases it names and 100 more; a shrinking corpus is a regression.
  EXPECT_GE(cases.size(), 100u);
  for (std::size_t i = 0; i < cases.size(); i += kCaseStride) {
    const CorpusCase& c = cases[i];
    SCOPED_TRACE("cases.txt:" + std::to_string(c.line));
    const TempDir dir;
    // Non-regular inputs the corpus names: a FIFO (reading it would block forever) and a folder.
    ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0644), 0);
    std::filesystem::create_directory(dir.path() / "folder");
    const std::set<std::string> prepared = dir.entries();
    auto expand = [&](std::string s) {
      s = substitute(s, "{in}", inputs);
      s = substitute(s, "{dir}", dir.path().string());
      return s;
    };
    std::vector<std::string> full{"/usr/bin/timeout", "--kill-after=5", "60", CLUSTERCAST_BINARY};
    for (const auto& a : c.args) full.push_back(expand(a));
    const RunResult r = run_command(full);
    const std::string fragment = expand(c.fragment);

    EXPECT_EQ(breach_of_contract(r, c.exit_code, {fragment}, prepared, dir.entries()), "");
  }
}

}  // namespace
}  // namespace cc::cli_test
