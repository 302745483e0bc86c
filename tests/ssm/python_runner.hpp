#pragma once
// Runs a reference script of tests/ssm with the Python that has numpy (ROUTESCOPE_PYTHON) and
// returns its standard output as numbers, one per line.
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QtTest>

#include <string>
#include <vector>

namespace routescope::test {

/// The numbers the script prints; empty (with a QFAIL-worthy message in `error`) on failure.
inline std::vector<double> run_python_reference(const QString& script, const QStringList& args,
                                                const std::string& input, QString& error) {
    QProcess p;
    p.start(QStringLiteral(ROUTESCOPE_PYTHON),
            QStringList{QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/ssm/") + script} + args);
    if (!p.waitForStarted(10000)) {
        error = "could not start " ROUTESCOPE_PYTHON;
        return {};
    }
    p.write(input.data(), static_cast<qint64>(input.size()));
    p.closeWriteChannel();
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        error = script + " failed: " + QString::fromUtf8(p.readAllStandardError());
        return {};
    }
    std::vector<double> values;
    const QStringList lines =
        QString::fromUtf8(p.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
    for (const QString& line : lines) {
        bool ok = false;
        values.push_back(line.trimmed().toDouble(&ok));
        if (!ok) {
            error = script + " printed a non-number: " + line;
            return {};
        }
    }
    return values;
}

}  // namespace routescope::test
