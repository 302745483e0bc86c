#pragma once
// Runs a program to completion for a test (the CLI, a Python reference) and keeps its exit code
// and output; a program that does not finish in time is killed and reported as code -1.
#include <QProcess>
#include <QStringList>
#include <string>

namespace routescope::test_support {

struct Run {
    int code = -1;  ///< the exit code; -1 when it crashed or did not finish
    std::string out, err;
};

inline Run run_process(const QString& program, const QStringList& args, int timeout_ms) {
    QProcess p;
    p.start(program, args);
    Run r;
    if (!p.waitForStarted() || !p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        r.err = "did not finish";
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput().toStdString();
    r.err = p.readAllStandardError().toStdString();
    return r;
}

}  // namespace routescope::test_support
