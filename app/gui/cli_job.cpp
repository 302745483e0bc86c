#include "app/gui/cli_job.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTimer>

#include <cmath>

#include "engine/io/stale_temporaries.hpp"

#ifdef Q_OS_UNIX
#include <signal.h>
#include <unistd.h>
#endif

namespace routescope::gui {
namespace {
constexpr int kLastLines = 40;  // enough for a configuration error and the lines before a crash
// routescope-cli's exit codes (docs/cli.md).
constexpr int kExitUsage = 2;
constexpr int kExitFailure = 3;
constexpr int kExitInterrupted = 130;
constexpr int kKillAfterMs = 3000;
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

CliJob::CliJob(CliJobSpec spec, QObject* parent)
    : QObject(parent),
      spec_(std::move(spec)),
      process_(new QProcess(this)),
      progress_timer_(new QTimer(this)) {
    progress_timer_->setSingleShot(true);
    progress_timer_->setInterval(kProgressMs);
    connect(progress_timer_, &QTimer::timeout, this,
            [this] { emit progressChanged(done_, total_, eta_); });
#ifdef Q_OS_UNIX
    // Runs in the child between fork and exec: only async-signal-safe calls.
    // Its own process group, so that a cancel reaches the commands it runs in turn (experiment).
    process_->setChildProcessModifier([] {
        (void)::nice(kRunNice);
        (void)::setpgid(0, 0);
    });
#endif
    connect(process_, &QProcess::readyReadStandardOutput, this,
            [this] { read(QProcess::StandardOutput); });
    connect(process_, &QProcess::readyReadStandardError, this,
            [this] { read(QProcess::StandardError); });
    connect(process_, &QProcess::finished, this, &CliJob::on_finished);
    connect(process_, &QProcess::errorOccurred, this, &CliJob::on_error);
}

CliJob::~CliJob() {
    // The window closing mid-job: stop the child rather than orphan it.
    if (process_->state() != QProcess::NotRunning) {
        process_->disconnect(this);
        terminate_group();
        if (!process_->waitForFinished(5000)) process_->kill();
        if (!spec_.outputs.isEmpty()) remove_partial_outputs();
    }
}

void CliJob::start() {
    for (const QString& out : spec_.outputs)
        if (QFileInfo::exists(out)) existed_ << out;
    state_ = State::Running;
    clock_.start();
    if (!spec_.working_dir.isEmpty()) process_->setWorkingDirectory(spec_.working_dir);
    process_->start(routescope_cli_path(), spec_.arguments);
}

void CliJob::cancel() {
    if (state_ != State::Running) return;
    cancel_requested_ = true;
    terminate_group();  // SIGTERM: train stops after the current step with a checkpoint
    // Only train has something to save: any other command still running after kKillAfterMs
    // (an experiment between its stages) is killed with what it runs.
    if (spec_.command != "train")
        QTimer::singleShot(kKillAfterMs, this, [this] {
            if (state_ != State::Running) return;
#ifdef Q_OS_UNIX
            const qint64 pid = process_->processId();
            if (pid > 0) ::kill(static_cast<pid_t>(-pid), SIGKILL);
#endif
            process_->kill();
        });
}

void CliJob::terminate_group() {
#ifdef Q_OS_UNIX
    const qint64 pid = process_->processId();
    if (pid > 0 && ::kill(static_cast<pid_t>(-pid), SIGTERM) == 0) return;
#endif
    process_->terminate();
}

void CliJob::keep_line(const QString& line) {
    last_output_ << line;
    while (last_output_.size() > kLastLines)
        last_output_.removeFirst();
}

void CliJob::set_progress(qint64 done, qint64 total, double eta, bool now) {
    done_ = done;
    total_ = total;
    if (eta < 0 && done > 0 && total > done)  // no estimate of the child's: from the elapsed time
        eta = clock_.elapsed() / 1000.0 * static_cast<double>(total - done) / done;
    eta_ = eta;
    if (now) {
        progress_timer_->stop();
        emit progressChanged(done_, total_, eta_);
    } else if (!progress_timer_->isActive()) {
        progress_timer_->start();
    }
}

void CliJob::read_line(const QByteArray& raw) {
    const QByteArray line = raw.trimmed();
    if (line.isEmpty()) return;
    keep_line(QString::fromUtf8(line));
    // "[2/3] STACK/SSM (stack_ssm): training 300 steps" (experiment): model 2 of 3 under way.
    static const QRegularExpression stage(QStringLiteral("^\\[(\\d+)/(\\d+)\\]"));
    if (const auto m = stage.match(QString::fromUtf8(line)); m.hasMatch()) {
        set_progress(m.captured(1).toLongLong() - 1, m.captured(2).toLongLong(), -1, true);
        return;
    }
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject()) return;
    const QJsonObject r = doc.object();
    records_ << r;
    const QString type = r.value("type").toString();
    const QString event = r.value("event").toString();
    if (type == "start") {  // train
        set_progress(r.value("step").toInteger(0), r.value("steps").toInteger(total_), -1, true);
    } else if (type == "step") {
        set_progress(r.value("step").toInteger(done_), total_, r.value("eta").toDouble(-1), false);
    } else if (event == "progress") {  // dump: {"event":"progress","done":n,"total":N}
        set_progress(r.value("done").toInteger(done_), r.value("total").toInteger(total_), -1,
                     false);
    }
    emit recordRead(r);
}

void CliJob::read(QProcess::ProcessChannel channel) {
    QByteArray& buffer = channel == QProcess::StandardOutput ? stdout_buffer_ : stderr_buffer_;
    buffer += channel == QProcess::StandardOutput ? process_->readAllStandardOutput()
                                                  : process_->readAllStandardError();
    qsizetype nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
        const QByteArray line = buffer.left(nl);
        buffer.remove(0, nl + 1);
        read_line(line);
    }
}

void CliJob::remove_partial_outputs() {
    for (const QString& out : spec_.outputs) {
        if (existed_.contains(out)) continue;
        const QFileInfo info(out);
        if (info.isDir())
            QDir(out).removeRecursively();
        else
            QFile::remove(out);
        // The CLI writes under a hidden temporary name beside the output ("." + its stem + ...,
        // engine/io/stale_temporaries.hpp): a child stopped by the signal may leave it. Matched
        // as a prefix, not a wildcard pattern: an output's name may hold '[' or '*'.
        QDir dir = info.absoluteDir();
        const QString prefix =
            "." + QString::fromStdString(temporary_stem(info.fileName().toStdString()));
        for (const QString& tmp : dir.entryList(QDir::Files | QDir::Hidden))
            if (tmp.startsWith(prefix)) dir.remove(tmp);
    }
}

void CliJob::on_finished(int code, QProcess::ExitStatus status) {
    if (state_ != State::Running) return;
    read(QProcess::StandardOutput);
    read(QProcess::StandardError);
    for (QByteArray* rest : {&stdout_buffer_, &stderr_buffer_}) {
        read_line(*rest);
        rest->clear();
    }
    if (status == QProcess::NormalExit && code == 0) {
        if (total_ > 0 && done_ < total_ && spec_.command != "train") done_ = total_;
        state_ = State::Finished;
    } else if ((status == QProcess::NormalExit && code == kExitInterrupted) || cancel_requested_) {
        // 130: stopped by a signal (train saves a checkpoint first); any other end after our
        // SIGTERM is a child stopped before its handler was installed, without one, or one that
        // reports its interrupted stage as a failure (experiment).
        state_ = State::Cancelled;
    } else {
        state_ = State::Failed;
        const QString what = QStringLiteral("routescope-cli %1").arg(spec_.command);
        if (status == QProcess::CrashExit)
            failure_ = tr("%1 crashed (%2).").arg(what, process_->errorString());
        else if (code == kExitUsage)
            failure_ = tr("%1 exited with code %2: bad configuration or unreadable input.")
                           .arg(what)
                           .arg(code);
        else if (code == kExitFailure)
            failure_ = tr("%1 exited with code %2: the command failed.").arg(what).arg(code);
        else
            failure_ = tr("%1 exited with code %2.").arg(what).arg(code);
    }
    if (state_ != State::Finished) remove_partial_outputs();
    progress_timer_->stop();
    emit progressChanged(done_, total_, state_ == State::Finished ? 0 : eta_);
    emit ended(state_);
}

void CliJob::on_error(QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart || state_ != State::Running) return;
    state_ = State::Failed;
    failure_ = tr("Cannot start %1: %2. Set ROUTESCOPE_CLI to the routescope-cli binary.")
                   .arg(process_->program(), process_->errorString());
    emit ended(state_);
}

}  // namespace routescope::gui
