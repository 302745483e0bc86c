#include "app/gui/form_buddies.hpp"

#include <QFormLayout>
#include <QLabel>
#include <QLayout>
#include <QWidget>

namespace routescope::gui {
namespace {

QWidget* first_focusable(QLayoutItem* item) {
    if (!item) return nullptr;
    if (QWidget* w = item->widget()) return w->focusPolicy() != Qt::NoFocus ? w : nullptr;
    if (QLayout* l = item->layout())
        for (int i = 0; i < l->count(); ++i)
            if (QWidget* w = first_focusable(l->itemAt(i))) return w;
    return nullptr;
}

}  // namespace

void set_form_buddies(QFormLayout* form) {
    for (int row = 0; row < form->rowCount(); ++row) {
        auto* label_item = form->itemAt(row, QFormLayout::LabelRole);
        auto* label = label_item ? qobject_cast<QLabel*>(label_item->widget()) : nullptr;
        if (!label || label->buddy()) continue;
        if (QWidget* field = first_focusable(form->itemAt(row, QFormLayout::FieldRole)))
            label->setBuddy(field);
    }
}

}  // namespace routescope::gui
