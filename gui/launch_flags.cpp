#include "gui/launch_flags.h"

#include <set>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "interop/layout_files.h"
#include "interop/resolver.h"
#include "interop/strict_numbers.h"
#include "sim/error.h"
#include "sim/numbers.h"
#include "sim/presets.h"

namespace cc::gui {

void GuiFlags::add_to(CLI::App& app) {
  run.add_to(app);
  app.add_flag("--every-rank", every_rank, "Simulate every DP replica");
  app.add_option("--train-tokens-b", train_tokens_b, "Token budget in billions (default 300)");
  app.add_option("--project", project, "Open a project file (no other run flags beside it)");
  app.add_option("--screenshots", screenshots, "Save a PNG of each tab to DIR and quit");
  app.add_option("--window-size", window_size, "Open the window at WxH pixels, e.g. 1280x800 (screenshots: 1900x1080)");
  interop::read_numbers_strictly(app);  // every number as simulate reads it: 010 is 10, '' refused
}

namespace {

bool gui_only(const std::string& option) {
  return option == "--every-rank" || option == "--train-tokens-b" || option == "--project" ||
         option == "--screenshots" || option == "--window-size";
}

// With no run flag at all, the window opens on the seed paper's run (Korthikanti et al. 2022):
// GPT-3 175B over 1,024 A100-80GB GPUs (simulate's default cluster) at TP 8 x PP 16 with sequence
// parallelism, selective recomputation and global batch 1,536. Any run flag makes the command line a launch line, read
// exactly as `simulate` reads it (its defaults, its refusals).
void apply_first_screen(RunFlags& r) {
  r.model.model = "gpt3-175b";
  r.cluster.gpus = 1024;
  r.layout.tp = 8;
  r.layout.pp = 16;
  r.layout.recompute_granularity = "selective";
  r.layout.sequence_parallel = true;
  r.layout.global_batch = 1536;
}

std::string preset_or_empty(const std::string& name, const std::vector<std::string>& presets) {
  return std::find(presets.begin(), presets.end(), name) != presets.end() ? name : std::string();
}

}  // namespace

std::pair<int, int> window_size_from(const std::string& text) {
  const auto x = text.find('x');
  const auto w = parse_integer(std::string_view(text).substr(0, x));
  const auto h = x == std::string::npos ? std::nullopt : parse_integer(std::string_view(text).substr(x + 1));
  if (!w || !h || *w < 400 || *w > 16384 || *h < 400 || *h > 16384)
    fail_at("--window-size", "--window-size '{}' is not WIDTHxHEIGHT in pixels, each 400 to 16384 (e.g. 1280x800)",
            text);
  return {static_cast<int>(*w), static_cast<int>(*h)};
}

std::string first_non_qt_argument(const std::vector<std::string>& extras) {
  // QGuiApplication's and QApplication's command-line options (Qt 6 documentation).
  static const std::set<std::string> with_value = {
      "platform", "platformpluginpath", "platformtheme", "plugin", "qwindowgeometry", "qwindowicon",
      "qwindowtitle", "session", "style", "stylesheet", "display", "geometry", "title", "name",
      "visual", "ncols", "cmap", "qmljsdebugger"};
  static const std::set<std::string> switches = {"reverse", "widgetcount", "nograb", "dograb", "sync"};
  for (std::size_t i = 0; i < extras.size(); ++i) {
    const std::string& a = extras[i];
    if (a.size() < 2 || a[0] != '-') return a;
    std::string name = a.substr(a[1] == '-' ? 2 : 1);
    const bool inline_value = name.find('=') != std::string::npos;
    name = name.substr(0, name.find('='));
    if (switches.count(name) && !inline_value) continue;
    if (!with_value.count(name)) return a;
    if (!inline_value) ++i;  // its value
  }
  return "";
}

Project project_from_flags(GuiFlags& f, const CLI::App& app) {
  bool launch_line = false;
  for (const CLI::Option* o : app.get_options()) {
    if (o->count() == 0 || gui_only(o->get_name())) continue;
    if (!f.project.empty())
      fail("{} cannot be given beside --project: the project file holds the whole setup", o->get_name());
    launch_line = true;
  }
  if (!f.project.empty()) return load_project(f.project);
  if (!launch_line) apply_first_screen(f.run);
  if (!(f.train_tokens_b >= 0 && f.train_tokens_b <= 1e7))  // also refuses NaN; 1e7 B = --train-tokens' 1e16
    fail("--train-tokens-b is {}; it must be between 0 and 10000000 (billions of tokens)", f.train_tokens_b);
  const RunRequest request = f.run.request();
  const ResolvedRun run = resolve_run(request);
  Project p;
  p.model_preset = preset_or_empty(f.run.model.model, model_preset_names());
  p.model = run.model;
  p.cluster_preset = preset_or_empty(f.run.cluster.cluster.empty() ? run.cluster.name : f.run.cluster.cluster,
                                     cluster_preset_names());
  p.cluster = run.cluster;
  p.gpus = run.config.gpus();
  p.auto_dp = !f.run.layout.dp;
  p.costs_file = run.costs_file;
  p.framework = f.run.layout.framework;
  p.config = run.config;
  p.reserve = run.reserve;
  p.train_tokens = f.train_tokens_b * 1e9;
  p.every_rank = f.every_rank;
  p.switches = request.layout.switches;
  return p;
}

Project project_from_layout_file(const std::string& path, const Project& current) {
  // The same flags and resolver as a launch line `clustercast-gui --config FILE`, so the file
  // means here what it means to `simulate --config FILE`.
  std::vector<std::string> args{"clustercast-gui", "--config", path};
  if (!current.costs_file.empty()) args.insert(args.end(), {"--costs", current.costs_file});
  if (current.framework) args.insert(args.end(), {"--framework", *current.framework});
  CLI::App cli;
  GuiFlags flags;
  flags.add_to(cli);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  try {
    cli.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    fail("layout file '{}': {}", path, e.what());
  }
  Project p = project_from_flags(flags, cli);
  // A file that names no model gives it a placeholder; its own name tells the user where it came from.
  if (p.model.name == kLayoutFileModelName) p.model.name = std::filesystem::path(path).stem().string();
  p.train_tokens = current.train_tokens;
  p.every_rank = current.every_rank;
  return p;
}

}  // namespace cc::gui
