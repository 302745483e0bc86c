#pragma once
// A QFormLayout row whose field is a layout (a line edit with its Browse… button) gets a label
// without a buddy, and such a label shows its mnemonic as a literal ampersand ("Training &data").
// set_form_buddies gives every such label the first focusable widget of its field, so the
// mnemonic is underlined and Alt+letter moves the focus there.
class QFormLayout;

namespace routescope::gui {

void set_form_buddies(QFormLayout* form);

}  // namespace routescope::gui
