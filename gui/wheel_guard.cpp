#include "gui/wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QObject>
#include <QWidget>

namespace cc::gui {

namespace {

class WheelGuard : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Wheel) return false;
    const auto* field = qobject_cast<QWidget*>(watched);
    if (!field || field->hasFocus()) return false;
    // Handed to the scroll area around the form, so the form scrolls under the cursor; Qt would
    // pass on an ignored event only when it came from the window system.
    for (QWidget* parent = field->parentWidget(); parent; parent = parent->parentWidget()) {
      if (auto* area = qobject_cast<QAbstractScrollArea*>(parent)) {
        QCoreApplication::sendEvent(area->viewport(), event);
        return true;
      }
    }
    event->ignore();  // no scroll area: the parent gets it
    return true;
  }
};

}  // namespace

void guard_wheel(QWidget* root) {
  auto* guard = new WheelGuard(root);
  auto protect = [guard](QWidget* field) {
    field->setFocusPolicy(Qt::StrongFocus);  // no focus from the wheel itself
    field->installEventFilter(guard);
  };
  for (QAbstractSpinBox* box : root->findChildren<QAbstractSpinBox*>()) protect(box);
  for (QComboBox* box : root->findChildren<QComboBox*>()) protect(box);
}

}  // namespace cc::gui
