// The generated bad-input campaign: every number option of every command, read from the real
// binary's own --help (so a new option joins the campaign by existing), given values no option
// accepts — empty, not a number, a fraction or a float's overflow for an integer, beyond 64
// bits, hex, NaN and infinity, a decimal comma, a negative count for an unsigned one — on an
// otherwise valid command line whose outputs go to a fresh folder. And every key of shipped
// model and cluster files (traces/presets), each file changed in one place: the key misspelt,
// a number given as text, negative, beyond any size or as a boolean, a boolean as text or a
// number, a name as a number or a name no one uses. Each case must meet the bad-input contract
// (bad_input_contract.h): exit 2, nothing on stdout, one "clustercast:" line naming the option
// or key and the value, no file left. (A key set to null reads as absent, as in HuggingFace
// files; the free-text "sources" of a preset are not read.)
//
// CI runs a fixed sample (every 8th case, in a stable order that spreads it over the commands and
// kinds of value); `CLUSTERCAST_CAMPAIGN=all` runs every case (scripts/bad-input-campaign.sh).
#include <gtest/gtest.h>

#include <cstdlib>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "bad_input_contract.h"
#include "cli_runner.h"

namespace cc::cli_test {
namespace {

struct NumberOption {
  std::string command, name, type;  // type: INT, UINT or FLOAT, as CLI11's help names it
};

struct Case {
  NumberOption option;
  std::string value;
  // A file case: the changed file's text, the flag that reads it, and the key the message names.
  std::string file_text, file_flag, key;
};

// A valid command line per command, its outputs in DIR (replaced by the case's folder). An
// option the case gives itself is left out of it (CLI11 refuses an option given twice).
const std::vector<std::pair<std::string, std::vector<std::string>>>& base_lines() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> lines = {
      {"simulate", {"--model", "tiny", "--gpus", "8", "--trace-out", "DIR/trace.json"}},
      {"search", {"--model", "gpt3-1.3b", "--gpus", "64", "--global-batch-size", "512", "--export", "DIR/e.json"}},
      {"train", {"--model", "tiny", "--steps", "2", "--eval-windows", "0", "--save", "DIR/ckpt"}},
      {"profile", {"--model", "tiny", "--out", "DIR/db.json", "--no-collectives"}},
      {"validate", {"--model", "tiny", "--report", "DIR/report.md"}},
  };
  return lines;
}

// The number options of `command`, from lines like "  --tensor-model-parallel-size,--tp INT"
// or "  --steps INT=5  Timed steps" of its --help.
std::vector<NumberOption> number_options(const std::string& command) {
  const RunResult help = run_command({CLUSTERCAST_BINARY, command, "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  std::vector<NumberOption> options;
  std::istringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string names, type;
    if (!(words >> names >> type) || names.rfind("--", 0) != 0) continue;
    type = type.substr(0, type.find('='));
    if (type != "INT" && type != "UINT" && type != "FLOAT") continue;
    options.push_back({command, names.substr(0, names.find(',')), type});
  }
  return options;
}

std::vector<std::string> bad_values(const std::string& type) {
  std::vector<std::string> values = {"", "twelve", "0x10", "nan", "inf", "1,5"};
  if (type == "FLOAT") {
    values.insert(values.end(), {"-inf", "1e999"});  // 1e999: beyond a double
  } else {
    values.insert(values.end(), {"1.5", "1e308", "99999999999999999999999", "-99999999999999999999999"});
    if (type == "UINT") values.push_back("-1");
  }
  return values;
}

bool is_moe_option(const std::string& name) {
  return name.rfind("--moe-", 0) == 0 || name == "--num-experts" || name.rfind("--expert-", 0) == 0;
}

// Options a command refuses whatever their value, naming the option: the training engine
// has one --dropout and dense layers only, so its commands refuse the MoE options of a dense
// model (the simulator's are tried on an MoE model instead, where their values are read).
bool refused_whatever_the_value(const NumberOption& o) {
  const bool engine = o.command == "train" || o.command == "profile" || o.command == "validate";
  return (engine && is_moe_option(o.name)) ||
         (o.command == "train" && (o.name == "--hidden-dropout" || o.name == "--attention-dropout"));
}

// Every way of changing one leaf of `json` (at `pointer`) that no reader of the file accepts.
void changed_files(const nlohmann::json& root, const nlohmann::json::json_pointer& pointer, const std::string& flag,
                   std::vector<Case>& cases) {
  const nlohmann::json& here = root.at(pointer);
  const std::string key = pointer.empty() ? "" : pointer.back();
  if (key == "sources" || key == "name" || key == "description" || key == "source") return;
  if (here.is_object()) {
    for (const auto& [child, value] : here.items()) changed_files(root, pointer / child, flag, cases);
    return;
  }
  auto add = [&](const nlohmann::json& changed, const std::string& named, const std::string& what) {
    Case c;
    c.option = {"simulate", flag, "FILE"};
    c.value = what;
    c.file_text = changed.dump(2);
    c.file_flag = flag;
    c.key = named;
    cases.push_back(std::move(c));
  };
  nlohmann::json misspelt = root;
  misspelt.at(pointer.parent_pointer()).erase(key);
  misspelt.at(pointer.parent_pointer())[key + "x"] = here;
  add(misspelt, key + "x", "misspelt");
  std::vector<nlohmann::json> values;
  if (here.is_boolean()) values = {"yes", 2};
  else if (here.is_number()) values = {"abc", -1, 1e308, true};
  else if (here.is_string()) values = {7, "no-such-value"};
  for (const nlohmann::json& v : values) {
    nlohmann::json changed = root;
    changed.at(pointer) = v;
    add(changed, key, v.dump());
  }
}

std::vector<Case> campaign() {
  std::vector<Case> cases;
  for (const auto& [command, base] : base_lines())
    for (const NumberOption& option : number_options(command))
      for (const std::string& value : bad_values(option.type)) cases.push_back({option, value, "", "", ""});
  const std::string presets = std::string(CLUSTERCAST_SOURCE_DIR) + "/traces/presets/";
  for (const char* model : {"tiny", "mixtral-8x7b", "deepseek-v3"})
    changed_files(nlohmann::json::parse(read_file(presets + "models/" + model + ".json")), nlohmann::json::json_pointer(), "--model", cases);
  for (const char* cluster : {"dgx-h100", "gb200-nvl72"})
    changed_files(nlohmann::json::parse(read_file(presets + "clusters/" + cluster + ".json")), nlohmann::json::json_pointer(),
                  "--cluster", cases);
  return cases;
}

std::vector<std::string> command_line(const Case& c, const std::string& dir) {
  std::vector<std::string> full{"/usr/bin/timeout", "--kill-after=5", "120", CLUSTERCAST_BINARY, c.option.command};
  if (!c.file_flag.empty()) {
    const std::string file = dir + "/changed.json";
    write_file(file, c.file_text);
    // A model file on the cluster that fits it, a cluster file under a small model.
    if (c.file_flag == "--model")
      full.insert(full.end(), {"--model", file, "--gpus", "64", "--trace-out", dir + "/trace.json"});
    else
      full.insert(full.end(), {"--model", "tiny", "--gpus", "8", "--cluster", file, "--trace-out", dir + "/trace.json"});
    return full;
  }
  for (const auto& [command, base] : base_lines()) {
    if (command != c.option.command) continue;
    for (std::size_t i = 0; i < base.size(); ++i) {
      if (base[i] == c.option.name) {
        ++i;  // its value too
        continue;
      }
      std::string word = base[i];
      if (word.rfind("DIR/", 0) == 0) word = dir + word.substr(3);
      if (i > 0 && base[i - 1] == "--model" && is_moe_option(c.option.name) && !refused_whatever_the_value(c.option))
        word = "mixtral-8x7b";
      full.push_back(word);
    }
  }
  full.push_back(c.option.name);
  full.push_back(c.value);
  return full;
}

// "" when the case meets the contract, else what broke it.
std::string run_case(const Case& c) {
  const TempDir dir;
  const std::vector<std::string> line = command_line(c, dir.path().string());
  const std::set<std::string> before = dir.entries();  // the changed file, for a file case
  const RunResult r = run_command(line);
  std::vector<std::string> fragments = {c.file_flag.empty() ? c.option.name : c.key};
  if (c.file_flag.empty() && !c.value.empty() && !refused_whatever_the_value(c.option)) fragments.push_back(c.value);
  return breach_of_contract(r, 2, fragments, before, dir.entries());
}

TEST(BadInputCampaign, EveryNumberOptionRefusesValuesNoOptionAccepts) {
  const std::vector<Case> cases = campaign();
  // Five commands, each with dozens of number options, and five files of dozens of keys: a
  // shrinking campaign means --help, the presets or this reader of them changed.
  ASSERT_GE(cases.size(), 2000u);
  const char* all = std::getenv("CLUSTERCAST_CAMPAIGN");
  const bool everything = all != nullptr && std::string(all) == "all";
  std::vector<const Case*> chosen;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (everything || i % 8 == 0) chosen.push_back(&cases[i]);

  std::mutex mutex;
  std::vector<std::string> breaches;
  std::size_t next = 0;
  auto worker = [&] {
    for (;;) {
      const Case* c = nullptr;
      {
        const std::lock_guard<std::mutex> lock(mutex);
        if (next == chosen.size()) return;
        c = chosen[next++];
      }
      const std::string why = run_case(*c);
      if (!why.empty()) {
        const std::lock_guard<std::mutex> lock(mutex);
        breaches.push_back(c->option.command + " " + c->option.name + " " +
                           (c->key.empty() ? "" : c->key + " ") + "'" + c->value + "': " + why);
      }
    }
  };
  std::vector<std::future<void>> workers;
  for (int w = 0; w < 4; ++w) workers.push_back(std::async(std::launch::async, worker));
  for (auto& w : workers) w.get();

  std::cout << "bad-input campaign: " << cases.size() << " cases generated, " << chosen.size() << " run, "
            << chosen.size() - breaches.size() << " met the contract\n";
  for (const std::string& b : breaches) ADD_FAILURE() << b;
}

}  // namespace
}  // namespace cc::cli_test
