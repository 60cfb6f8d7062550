#include "gui/chart_export.h"

#include <QBuffer>
#include <QPainter>
#include <QPixmap>
#include <QWidget>

#ifdef CLUSTERCAST_HAVE_QTSVG
#include <QSvgGenerator>
#endif

#include "sim/atomic_file.h"
#include "sim/error.h"

namespace cc::gui {

namespace {

void write(const QString& path, const QByteArray& bytes) {
  write_file_atomically(path.toStdString(), std::string(bytes.constData(), static_cast<std::size_t>(bytes.size())));
}

}  // namespace

bool svg_supported() {
#ifdef CLUSTERCAST_HAVE_QTSVG
  return true;
#else
  return false;
#endif
}

void save_widget_png(QWidget& widget, const QString& path) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!widget.grab().save(&buffer, "PNG")) fail("could not encode '{}' as PNG", path.toStdString());
  write(path, bytes);
}

void save_widget_svg([[maybe_unused]] QWidget& widget, const QString& path, [[maybe_unused]] const QString& title) {
#ifdef CLUSTERCAST_HAVE_QTSVG
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator svg;
  svg.setOutputDevice(&buffer);
  svg.setSize(widget.size());
  svg.setViewBox(QRect(QPoint(0, 0), widget.size()));
  svg.setTitle(title);
  svg.setDescription(QStringLiteral("clustercast-gui"));
  {
    QPainter painter(&svg);
    widget.render(&painter);
  }
  write(path, bytes);
#else
  fail("'{}': this build of clustercast-gui has no SVG support (QtSvg was not found)", path.toStdString());
#endif
}

}  // namespace cc::gui
