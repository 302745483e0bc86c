#pragma once
// Writes the small files the data tests read (UTF-8 text, TSV, JSONL), byte for byte.
#include <QDir>
#include <QFile>
#include <string>

inline std::string write_test_file(const QString& path, const std::string& bytes) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes.data(), static_cast<qint64>(bytes.size()));
    return path.toStdString();
}
