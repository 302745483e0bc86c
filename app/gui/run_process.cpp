#include "app/gui/run_process.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QStandardPaths>
#include <QTimer>

#include <cmath>

#ifdef Q_OS_UNIX
#include <unistd.h>
#endif

#include "engine/core/error.hpp"

namespace routescope::gui {
namespace {
constexpr int kLastLines = 40;  // enough for a configuration error and the lines before a crash
// routescope-cli's exit codes (docs/cli.md).
constexpr int kExitUsage = 2;
constexpr int kExitFailure = 3;
constexpr int kExitInterrupted = 130;
}  // namespace

QString routescope_cli_path() {
    const QString env = qEnvironmentVariable("ROUTESCOPE_CLI");
    if (!env.isEmpty()) return env;
    const QString beside = QDir(QCoreApplication::applicationDirPath()).filePath("routescope-cli");
    if (QFileInfo(beside).isExecutable()) return beside;
    const QString found = QStandardPaths::findExecutable("routescope-cli");
    return found.isEmpty() ? beside : found;
}

QString duration_text(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("?");
    const auto s = static_cast<qint64>(seconds + 0.5);
    if (s >= 3600)
        return QStringLiteral("%1:%2:%3")
            .arg(s / 3600)
            .arg(s / 60 % 60, 2, 10, QChar('0'))
            .arg(s % 60, 2, 10, QChar('0'));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}

RunProcess::RunProcess(RunSettings settings, QObject* parent)
    : QObject(parent),
      settings_(std::move(settings)),
      process_(new QProcess(this)),
      progress_timer_(new QTimer(this)) {
    steps_ = settings_.steps;
    progress_timer_->setSingleShot(true);
    progress_timer_->setInterval(kProgressMs);
    connect(progress_timer_, &QTimer::timeout, this,
            [this] { emit progressChanged(step_, steps_, eta_); });
#ifdef Q_OS_UNIX
    // Runs in the child between fork and exec: only async-signal-safe calls.
    process_->setChildProcessModifier([] { (void)::nice(kRunNice); });
#endif
    connect(process_, &QProcess::readyReadStandardOutput, this, &RunProcess::read_stdout);
    connect(process_, &QProcess::readyReadStandardError, this, &RunProcess::read_stderr);
    connect(process_, &QProcess::finished, this, &RunProcess::on_finished);
    connect(process_, &QProcess::errorOccurred, this, &RunProcess::on_error);
}

RunProcess::~RunProcess() {
    // The window closing mid-run: stop the child (it saves a checkpoint) rather than orphan it.
    if (process_->state() != QProcess::NotRunning) {
        process_->disconnect(this);
        process_->terminate();
        if (!process_->waitForFinished(5000)) process_->kill();
    }
}

QString RunProcess::config_path() const {
    return QDir(settings_.out_dir).filePath("run.json");
}
QString RunProcess::log_path() const {
    return QDir(settings_.out_dir).filePath("log.jsonl");
}
QString RunProcess::checkpoint_path() const {
    return QDir(settings_.out_dir).filePath("model.ckpt.h5");
}

void RunProcess::start() {
    if (!QDir().mkpath(settings_.out_dir))
        throw IoError("cannot create the run directory " + settings_.out_dir.toStdString());
    QFile f(config_path());
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        f.write(QByteArray::fromStdString(settings_.config().dump(2) + "\n")) < 0)
        throw IoError("cannot write the run configuration " + config_path().toStdString() + ": " +
                      f.errorString().toStdString());
    f.close();
    state_ = State::Running;
    process_->setWorkingDirectory(settings_.out_dir);
    process_->start(routescope_cli_path(), settings_.cli_arguments(config_path()));
}

void RunProcess::cancel() {
    if (state_ != State::Running) return;
    cancel_requested_ = true;
    process_->terminate();  // SIGTERM: the trainer stops after the current step with a checkpoint
}

void RunProcess::keep_line(const QString& line) {
    last_output_ << line;
    while (last_output_.size() > kLastLines)
        last_output_.removeFirst();
}

void RunProcess::read_stdout() {
    stdout_buffer_ += process_->readAllStandardOutput();
    qsizetype nl;
    while ((nl = stdout_buffer_.indexOf('\n')) >= 0) {
        const QByteArray line = stdout_buffer_.left(nl).trimmed();
        stdout_buffer_.remove(0, nl + 1);
        if (line.isEmpty()) continue;
        keep_line(QString::fromUtf8(line));
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &err);
        if (err.error != QJsonParseError::NoError || !doc.isObject()) continue;
        const QJsonObject r = doc.object();
        records_ << r;
        const QString type = r.value("type").toString();
        if (type == "start") {
            steps_ = r.value("steps").toInteger(steps_);
            step_ = r.value("step").toInteger(0);
            emit progressChanged(step_, steps_, -1);
        } else if (type == "step") {
            step_ = r.value("step").toInteger(step_);
            eta_ = r.value("eta").toDouble(-1);
            if (!progress_timer_->isActive()) progress_timer_->start();
        }
        emit recordRead(r);
    }
}

void RunProcess::read_stderr() {
    stderr_buffer_ += process_->readAllStandardError();
    qsizetype nl;
    while ((nl = stderr_buffer_.indexOf('\n')) >= 0) {
        const QByteArray line = stderr_buffer_.left(nl).trimmed();
        stderr_buffer_.remove(0, nl + 1);
        if (!line.isEmpty()) keep_line(QString::fromUtf8(line));
    }
}

void RunProcess::on_finished(int code, QProcess::ExitStatus status) {
    if (state_ != State::Running) return;
    read_stdout();
    read_stderr();
    if (progress_timer_->isActive()) {  // the last steps' progress, before the end
        progress_timer_->stop();
        emit progressChanged(step_, steps_, eta_);
    }
    for (QByteArray* rest : {&stdout_buffer_, &stderr_buffer_})
        if (!rest->trimmed().isEmpty()) keep_line(QString::fromUtf8(rest->trimmed()));
    if (status == QProcess::NormalExit && code == 0) {
        state_ = State::Finished;
    } else if ((status == QProcess::NormalExit && code == kExitInterrupted) ||
               (cancel_requested_ && status == QProcess::CrashExit)) {
        // 130: stopped by a signal after saving a checkpoint; a crash exit after our SIGTERM is a
        // run stopped before its handler was installed (still setting up: no checkpoint yet).
        state_ = State::Cancelled;
    } else {
        state_ = State::Failed;
        if (status == QProcess::CrashExit)
            failure_ = tr("routescope-cli train crashed (%1).").arg(process_->errorString());
        else if (code == kExitUsage)
            failure_ = tr("routescope-cli train exited with code %1: bad configuration or "
                          "unreadable input.")
                           .arg(code);
        else if (code == kExitFailure)
            failure_ = tr("routescope-cli train exited with code %1: the run failed.").arg(code);
        else
            failure_ = tr("routescope-cli train exited with code %1.").arg(code);
    }
    emit ended(state_);
}

void RunProcess::on_error(QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart || state_ != State::Running) return;
    state_ = State::Failed;
    failure_ = tr("Cannot start %1: %2. Set ROUTESCOPE_CLI to the routescope-cli binary.")
                   .arg(process_->program(), process_->errorString());
    emit ended(state_);
}

}  // namespace routescope::gui
