// file_names.h — the names a save dialog's answer turns into: a project without an extension
// gets .ccproj, and a Megatron-LM export named after its launch script does not write NAME.sh.sh.
#pragma once

#include <QString>

namespace cc::gui {

// `path` as given when its file name has an extension, else with `.suffix` added.
QString with_default_suffix(const QString& path, const QString& suffix);

// The argument file of a Megatron-LM export whose launch script is the argument file's name plus
// ".sh" (megatron_script_path): a chosen name ending in .sh is the script's, so the arguments
// go beside it without it; a name without an extension gets .txt.
QString megatron_arguments_path(const QString& chosen);

}  // namespace cc::gui
