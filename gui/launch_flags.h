// launch_flags.h — clustercast-gui's command line: `clustercast simulate`'s own flags
// (interop/input_flags.h), so a launch line opens as it is and means the same run, plus what only
// the GUI has. The project it opens comes from the same resolver as `simulate`'s prediction.
#pragma once

#include <string>
#include <vector>
#include <utility>

#include <CLI/CLI.hpp>

#include "gui/project.h"
#include "interop/input_flags.h"

namespace cc::gui {

struct GuiFlags {
  RunFlags run;
  bool every_rank = false;
  double train_tokens_b = 300;
  std::string project, screenshots;
  std::string window_size;  // "WxH"; empty: the saved geometry (1900x1080 for --screenshots)
  void add_to(CLI::App& app);
};

// --window-size's width and height; throws SpecError naming the flag on anything but WxH with
// both between 400 and 16384 pixels.
std::pair<int, int> window_size_from(const std::string& text);

// The first of `extras` (the arguments CLI11 left for Qt) that is not one of Qt's own options
// (-platform, -style, ... with one dash or two, and their values); empty when Qt takes them
// all. Checked before Qt starts, since without a display QApplication aborts before it could
// refuse an unknown option.
std::string first_non_qt_argument(const std::vector<std::string>& extras);

// The project the window opens: --project's file, or the flags resolved as `simulate` resolves
// them. With no model, cluster or layout given, the seed paper's run: GPT-3 175B over 1,024
// A100-80GB GPUs at TP 8 x PP 16 with sequence parallelism, selective recomputation and global
// batch 1,536; flags replace each part. Throws SpecError on what
// `simulate` would refuse.
Project project_from_flags(GuiFlags& flags, const CLI::App& app);

// A layout file the GUI or `search` exported (layout JSON, Megatron-LM arguments with their
// launch script, NeMo YAML), read as `simulate --config FILE` reads it, priced with `current`'s
// cost source and stack; `current`'s budget and every-rank mode stay. A model the file names
// only by its shape takes the file's base name ("llama3_8b.txt": llama3_8b). Throws SpecError.
Project project_from_layout_file(const std::string& path, const Project& current);

}  // namespace cc::gui
