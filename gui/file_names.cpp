#include "gui/file_names.h"

#include <QFileInfo>

namespace cc::gui {

QString with_default_suffix(const QString& path, const QString& suffix) {
  return QFileInfo(path).suffix().isEmpty() ? path + '.' + suffix : path;
}

QString megatron_arguments_path(const QString& chosen) {
  if (chosen.endsWith(QStringLiteral(".sh"), Qt::CaseInsensitive)) return chosen.chopped(3);
  return with_default_suffix(chosen, QStringLiteral("txt"));
}

}  // namespace cc::gui
