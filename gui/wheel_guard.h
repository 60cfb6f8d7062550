// wheel_guard.h — the mouse wheel over a form scrolls the form. Qt's spin boxes and combo
// boxes take the wheel even unfocused, so rolling it down a long panel silently changed
// whichever field passed under the cursor; guarded fields take the wheel only once the user has
// clicked or tabbed into them.
#pragma once

class QWidget;

namespace cc::gui {

// Every spin box and combo box under `root` (call it once they exist) takes focus by click or Tab
// only, and passes the wheel to its parent while unfocused.
void guard_wheel(QWidget* root);

}  // namespace cc::gui
