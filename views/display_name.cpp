#include "views/display_name.hpp"

#include <QFileInfo>
#include <QHash>

namespace routescope::views {
namespace {
QHash<QString, QString>& names() {
    static QHash<QString, QString> n;
    return n;
}
}  // namespace

QString display_name(const QString& path) {
    const QString n = names().value(QFileInfo(path).absoluteFilePath());
    return n.isEmpty() ? QFileInfo(path).fileName() : n;
}

QString display_stem(const QString& path) {
    const QString n = names().value(QFileInfo(path).absoluteFilePath());
    return n.isEmpty() ? QFileInfo(path).baseName() : n;
}

void set_display_name(const QString& path, const QString& name) {
    if (name.trimmed().isEmpty())
        names().remove(QFileInfo(path).absoluteFilePath());
    else
        names().insert(QFileInfo(path).absoluteFilePath(), name.trimmed());
}

bool has_display_name(const QString& path) {
    return names().contains(QFileInfo(path).absoluteFilePath());
}

}  // namespace routescope::views
