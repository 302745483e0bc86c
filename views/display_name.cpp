#include "views/display_name.hpp"

#include <QDir>
#include <QFileInfo>
#include <QSet>

#include <cstring>

namespace routescope::views {
namespace {

struct Identities {
    QHash<QString, QString> names;    ///< absolute path → name given
    QHash<QString, QString> sources;  ///< absolute path → absolute checkpoint of its model
    QHash<QString, int> colours;      ///< model key → colour slot
};

Identities& identities() {
    static Identities i;
    return i;
}

QString absolute(const QString& path) {
    return QFileInfo(path).absoluteFilePath();
}

// The name given to `path` or, failing that, to its model.
QString given_name(const QString& path) {
    const QString own = identities().names.value(absolute(path));
    if (!own.isEmpty()) return own;
    return identities().names.value(model_key(path));
}

}  // namespace

QString display_name(const QString& path) {
    const QString n = given_name(path);
    return n.isEmpty() ? QFileInfo(path).fileName() : n;
}

QString file_name_stem(const QString& path) {
    const QFileInfo info(path);
    QString n = info.fileName();
    for (const char* suffix : {".dump.h5", ".ckpt.h5", ".h5", ".rsproj"})
        if (n.size() > static_cast<qsizetype>(std::strlen(suffix)) && n.endsWith(suffix)) {
            n.chop(static_cast<qsizetype>(std::strlen(suffix)));
            return n;
        }
    return info.completeBaseName();
}

QString file_stem(const QString& path) {
    const QFileInfo info(path);
    const QString n = file_name_stem(path);
    if (n == QLatin1String("model") && !info.absoluteDir().dirName().isEmpty())
        return info.absoluteDir().dirName();
    return n;
}

QString display_stem(const QString& path) {
    const QString n = given_name(path);
    return n.isEmpty() ? file_stem(path) : n;
}

void set_display_name(const QString& path, const QString& name) {
    if (name.trimmed().isEmpty())
        identities().names.remove(absolute(path));
    else
        identities().names.insert(absolute(path), name.trimmed());
}

bool has_display_name(const QString& path) {
    return identities().names.contains(absolute(path));
}

void set_model_source(const QString& path, const QString& checkpoint) {
    const QString from = absolute(path), to = absolute(checkpoint);
    if (checkpoint.isEmpty() || from == to) {
        identities().sources.remove(from);
        return;
    }
    // A file first seen alone and coloured as its own model joins its checkpoint's colour.
    if (identities().colours.contains(from) && !identities().colours.contains(to))
        identities().colours.insert(to, identities().colours.value(from));
    identities().colours.remove(from);
    identities().sources.insert(from, to);
}

QString model_key(const QString& path) {
    const QString a = absolute(path);
    return identities().sources.value(a, a);
}

int model_colour_slot(const QString& path) {
    const QString key = model_key(path);
    auto& colours = identities().colours;
    if (const auto it = colours.constFind(key); it != colours.constEnd()) return it.value();
    QSet<int> taken;
    for (const int s : colours)
        taken.insert(s);
    int slot = 0;
    while (taken.contains(slot))
        ++slot;
    colours.insert(key, slot);
    return slot;
}

void set_model_colour_slot(const QString& path, int slot) {
    identities().colours.insert(model_key(path), std::max(0, slot));
}

void forget_model_identities() {
    identities() = Identities{};
}

}  // namespace routescope::views
