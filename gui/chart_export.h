// chart_export.h — writes a widget (a chart, the timeline) as PNG or SVG, atomically.
#pragma once

#include <QString>

class QWidget;

namespace cc::gui {

// Throws SpecError naming the path when it cannot be written. SVG needs QtSvg at build
// time; without it the call fails with a message saying so.
void save_widget_png(QWidget& widget, const QString& path);
void save_widget_svg(QWidget& widget, const QString& path, const QString& title);
bool svg_supported();

}  // namespace cc::gui
