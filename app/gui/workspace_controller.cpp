#include "app/gui/workspace_controller.hpp"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QTimer>
#include <QUndoStack>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "app/gui/cli_job.hpp"
#include "app/gui/job_list.hpp"
#include "app/gui/run_process.hpp"
#include "app/gui/workspace.hpp"
#include "engine/core/json_text.hpp"
#include "views/display_name.hpp"

namespace routescope::gui {

WorkspaceController::WorkspaceController(Workspace* document, QObject* parent)
    : QObject(parent), document_(document), loader_(new FileLoader(this)) {
    connect(loader_, &FileLoader::started, this, [this](const QString& path) {
        emit message(tr("Opening %1…").arg(QFileInfo(path).fileName()), 0);
    });
    connect(loader_, &FileLoader::loaded, this, &WorkspaceController::on_loaded);
}

QString WorkspaceController::derived_name(const LoadedFile& file) {
    const QFileInfo fi(file.path);
    if (!file.info) return fi.fileName();
    const FileInfo& info = *file.info;
    QStringList parts;
    if (!info.arch.empty()) parts << QString::fromStdString(info.arch);
    QString task;
    try {
        const auto config = nlohmann::json::parse(info.config_json);
        if (config.contains("data") && config["data"].is_object())
            task = QString::fromStdString(config["data"].value("task", std::string()));
    } catch (const std::exception&) {
    }
    parts << (task.isEmpty() ? fi.absoluteDir().dirName() : task);
    // The file's name without its suffix, whole: "bert.seed1.dump.h5" is "bert.seed1" (cut at the
    // first dot, seed1 and seed2 were one "bert" in every legend and CSV).
    const QString stem = views::file_name_stem(file.path);
    if (file.report.kind == FileKind::Checkpoint) {
        if (info.train_step) parts << tr("step %1").arg(*info.train_step);
        if (fi.fileName() != "model.ckpt.h5") parts << stem;
    } else if (stem != QString::fromStdString(info.arch)) {
        parts.prepend(stem);  // "bigs.dump.h5" of a bigs model: "bigs · induction", not twice
    }
    return parts.join(QStringLiteral(" · "));
}

// ---- Files -----------------------------------------------------------------------------------

void WorkspaceController::open_file(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    if (abs.endsWith(".rsproj", Qt::CaseInsensitive)) {
        try {
            open_project(abs);
        } catch (const std::exception& e) {
            emit failed(tr("Cannot open project"), QString::fromUtf8(e.what()));
        }
        return;
    }
    if (abs.endsWith(".jsonl", Qt::CaseInsensitive)) {
        // An evaluation's predictions (docs/formats/predictions.md): not HDF5, so not the loader's;
        // they open in the view that reads them, which reports a malformed line by number.
        emit analysisRequested("length_accuracy", {abs});
        return;
    }
    emit fileOpening(abs);
    document_->start_check(abs);  // no verdict until the loader's child has read it (again)
    loader_->open(abs);
}

void WorkspaceController::open_file_behind(const QString& path) {
    behind_ << QFileInfo(path).absoluteFilePath();
    open_file(path);
}

void WorkspaceController::on_loaded(const LoadedFile& file) {
    // The verdict is final after the value scan, or after a structure pass that found the file
    // unreadable (no scan follows).
    const bool final = file.values_scanned || !file.report.readable;
    document_->set_verdict(file.path, {final, file.report.readable, file.report.crashed, file.error,
                                       false, file.report.timed_out});
    if (final) {
        // After this file's own handling below (its summary, its error dialog): a view's refusal
        // names the file in the dialog that stays up.
        QTimer::singleShot(0, this, [this] { emit verdictsChanged(); });
        if (document_->views_waiting())
            // A project's views open once every file they wait for has its verdict.
            QTimer::singleShot(0, this, [this] {
                if (std::optional<Project> p = document_->take_ready_views()) open_views(*p);
            });
    }
    // A dump made from a checkpoint belongs to that checkpoint's model (its colour).
    const bool checkpoint = file.report.kind == FileKind::Checkpoint;
    document_->add_file(
        file.path, derived_name(file),
        !checkpoint && file.info ? QString::fromStdString(file.info->checkpoint) : QString());
    const QString name = QFileInfo(file.path).fileName();
    if (file.values_scanned) {
        emit fileScanned(file);
        if (!file.report.ok())
            emit message(tr("%1: %n format violation(s) found in its values", nullptr,
                            static_cast<int>(file.report.violations.size()))
                             .arg(name),
                         10000);
        // The structure was read, the values could not be (a worker that failed, issue 25; a
        // library that crashed or hung on the values): the error dialog names the file.
        if (!file.report.readable)
            emit failed(tr("Cannot read file"), tr("%1\n\n%2").arg(file.path, file.error));
        return;
    }
    emit fileRead(file, behind_.removeAll(file.path) > 0);
    if (!file.report.readable) {
        emit message(tr("Cannot read %1").arg(name), 10000);
        emit failed(tr("Cannot open file"), tr("%1\n\n%2").arg(file.path, file.error));
        return;
    }
    if (file.report.ok())
        emit message(tr("Opened %1").arg(name), 5000);
    else
        emit message(tr("Opened %1 with %n format violation(s)", nullptr,
                        static_cast<int>(file.report.violations.size()))
                         .arg(name),
                     10000);
}

QStringList WorkspaceController::files_to_check(const QString& kind, const QStringList& paths) {
    QStringList out;
    if (kind == "training" || kind == "efficiency") return out;  // run logs, no HDF5
    for (const QString& p : paths) {
        const QFileInfo info(p);
        if (info.isDir() || p.endsWith(".jsonl", Qt::CaseInsensitive) ||
            p.endsWith(".json", Qt::CaseInsensitive) || p.endsWith(".rsproj", Qt::CaseInsensitive))
            continue;  // evaluation predictions (Accuracy by length), not HDF5
        out << info.absoluteFilePath();
    }
    return out;
}

QString WorkspaceController::refusal(const QString& kind, const QStringList& paths) const {
    for (const QString& f : files_to_check(kind, paths))
        if (QString refused = document_->refusal(f); !refused.isEmpty()) return refused;
    return {};
}

WorkspaceController::InputCheck WorkspaceController::check_inputs(const QString& kind,
                                                                  const QStringList& paths) {
    QStringList waiting;
    for (const QString& f : files_to_check(kind, paths)) {
        const QString refused = document_->refusal(f);
        if (!refused.isEmpty()) return {InputCheck::State::refuse, refused};
        if (document_->verdict(f).final) continue;
        waiting << QFileInfo(f).fileName();
        if (!document_->checking(f)) open_file_behind(f);  // the loader reads it first
    }
    if (waiting.isEmpty()) return {};
    return {InputCheck::State::wait, waiting.join(", ")};
}

bool WorkspaceController::loading() const {
    return loader_->pending() > 0 || document_->views_waiting();
}

QStringList WorkspaceController::known_paths() const {
    return document_->files() + document_->runs();
}

// ---- Projects --------------------------------------------------------------------------------

void WorkspaceController::open_project(const QString& path) {
    const Project p = Project::load(path);
    document_->set_project_path(path);
    document_->add_project_extra(p.extra);  // a newer version's keys: written back on save
    const QStringList open = known_paths();
    // Before the files load: their items take the names, their models the colours.
    for (const auto& [file, name] : p.names)
        document_->set_given_name(file, name);
    for (const auto& [model, slot] : p.colours)
        document_->set_colour_slot(model, slot);
    // The other models take their colours in the project's order, now: taken as each file finished
    // loading, two exports of one project could colour its models differently. (A dump that turns
    // out to belong to a checkpoint gives that model its slot, views::set_model_source.)
    for (const QString& f : p.files)
        views::model_colour_slot(QFileInfo(f).absoluteFilePath());
    for (const ProjectView& v : p.views)
        for (const QString& f : v.inputs)
            views::model_colour_slot(QFileInfo(f).absoluteFilePath());
    QStringList awaited;  // the files whose verdicts the project's views wait for
    for (const QString& f : p.files) {
        const QString abs = QFileInfo(f).absoluteFilePath();
        if (open.contains(abs) || document_->checking(abs)) continue;
        if (!abs.endsWith(".rsproj", Qt::CaseInsensitive)) awaited << abs;
        open_file_behind(abs);
    }
    // The views' own inputs too (a project may list a view on a file it does not list): each
    // view opens once the loader has a final verdict on every file it reads.
    for (const ProjectView& v : p.views)
        for (const QString& f : files_to_check(v.kind, v.inputs))
            if (!document_->verdict(f).final) {
                if (!awaited.contains(f)) awaited << f;
                if (!document_->checking(f)) open_file_behind(f);
            }
    for (const QString& r : p.runs)
        if (!open.contains(r)) {
            document_->add_run(r);
            emit runAdded(r);
        }
    // The views open once the loader's child has read every file this project opened
    // (on_loaded): a file the HDF5 library crashed on is then refused, never read here.
    document_->await_views(p, awaited);
    if (std::optional<Project> ready = document_->take_ready_views()) {
        open_views(*ready);
        return;
    }
    document_->mark_saved();  // as opened, while its files are read (and again when its views open)
}

void WorkspaceController::open_views(const Project& project) {
    emit viewsReady(project);
    document_->undo_stack()->clear();
    document_->mark_saved();  // as opened: changes from here on ask before quitting
}

void WorkspaceController::save_project(const QString& path) {
    document_->project().save(path);
    document_->set_project_path(path);
    document_->mark_saved();
}

// ---- Jobs ------------------------------------------------------------------------------------

void WorkspaceController::add_job(CliJob* job, const QString& key, const QString& title) {
    document_->jobs()->add(job);
    emit jobAdded(job, key, title);
    connect(job, &CliJob::ended, this, [this, job, title](CliJob::State end) {
        if (end == CliJob::State::Finished) {
            emit message(tr("%1 finished").arg(title), 8000);
        } else if (end == CliJob::State::Cancelled) {
            emit message(tr("%1 stopped").arg(title), 8000);
        } else {
            const bool train = job->spec().command == "train";
            emit failed(train ? tr("Training run failed") : tr("%1 failed").arg(title),
                        tr("%1\n\n%2: %3\n\nLast output:\n%4")
                            .arg(job->failure(), train ? tr("Run directory") : tr("Command"),
                                 train ? job->spec().working_dir
                                       : "routescope-cli " + job->spec().arguments.join(' '),
                                 job->last_output().join('\n')));
        }
    });
}

QString WorkspaceController::run_directory_problem(const QString& dir) {
    const QString abs = QFileInfo(dir).absoluteFilePath();
    // The nearest path that exists, going up: the run directory is made under it (mkpath).
    QString existing = abs;
    for (;;) {
        struct stat st;
        const QByteArray native = QFile::encodeName(existing);
        if (::stat(native.constData(), &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                return tr("The run directory %1 cannot be created: %2 is not a folder (%3).")
                    .arg(abs, existing, QString::fromLocal8Bit(std::strerror(ENOTDIR)));
            // A read-only file system (EROFS) says so here even to root.
            if (::access(native.constData(), W_OK | X_OK) != 0) {
                const QString why = QString::fromLocal8Bit(std::strerror(errno));
                return existing == abs
                           ? tr("The run directory %1 cannot be written (%2).").arg(abs, why)
                           : tr("The run directory %1 cannot be created: cannot write in %2 (%3).")
                                 .arg(abs, existing, why);
            }
            return {};
        }
        const int err = errno;
        // Missing, or under a file (ENOTDIR): look further up, to name what is in the way.
        if (err != ENOENT && err != ENOTDIR)
            return tr("The run directory %1 cannot be created: %2 (%3).")
                .arg(abs, QString::fromLocal8Bit(std::strerror(err)), existing);
        const QString parent = QFileInfo(existing).absolutePath();
        if (parent == existing) return {};
        existing = parent;
    }
}

RunProcess* WorkspaceController::launch_run(const RunSettings& settings) {
    RunSettings s = settings;
    s.out_dir = QFileInfo(s.out_dir).absoluteFilePath();
    // Refused before anything joins the workspace (a dead tab, a run saved in the project that
    // every reopen complains about).
    if (const QString problem = run_directory_problem(s.out_dir); !problem.isEmpty()) {
        emit failed(tr("Cannot start the run"), problem);
        return nullptr;
    }
    auto* run = new RunProcess(s);
    // The run directory is the model of the checkpoint the run writes (its colour): said before
    // the live view draws it; the directory joins the document's runs once the run has started.
    if (views::model_key(s.out_dir) == s.out_dir)
        views::set_model_source(s.out_dir, QDir(s.out_dir).filePath("model.ckpt.h5"));
    add_job(run, s.out_dir, QFileInfo(s.out_dir).fileName());
    connect(run, &CliJob::ended, this, [this, run](CliJob::State end) {
        // The checkpoint joins the workspace behind the tab the person is on (the live training
        // curves, usually): finished work does not take the front (issue 26).
        if (end == CliJob::State::Failed || !QFileInfo::exists(run->checkpoint_path())) return;
        open_file_behind(run->checkpoint_path());
        emit message(tr("%1: the checkpoint joined the workspace")
                         .arg(QFileInfo(run->checkpoint_path()).absolutePath()),
                     8000);
    });
    try {
        run->start();
    } catch (const std::exception& e) {
        // Taken back: its item and live view (jobDiscarded), the job; the run never joined the
        // document's runs, so no project holds it.
        const QString problem = run_directory_problem(s.out_dir);
        emit jobDiscarded(run);
        document_->jobs()->discard(run);
        emit failed(tr("Cannot start the run"),
                    problem.isEmpty() ? QString::fromUtf8(e.what()) : problem);
        return nullptr;
    }
    document_->add_run(s.out_dir);
    return run;
}

CliJob* WorkspaceController::launch_action(const EngineActionSettings& settings) {
    EngineActionSettings s = settings;
    s.out = QFileInfo(s.out).absoluteFilePath();
    // The output's folder (the dialog accepted a missing one that can be made).
    QDir().mkpath(QFileInfo(s.out).absolutePath());
    auto* job = new CliJob(s.job());
    add_job(job, s.out, s.title());
    connect(job, &CliJob::ended, this, [this, s](CliJob::State end) {
        if (end == CliJob::State::Finished) open_action_result(s);
    });
    // Where new runs, imports and experiments are proposed: the folder that holds them. A dump or
    // an evaluation lands beside its checkpoint, inside a run: it must not move that folder there
    // (New Training Run then proposed a run inside another run).
    if (s.action == EngineAction::Import || s.action == EngineAction::Experiment)
        QSettings().setValue("runsDir", QFileInfo(s.out).absolutePath());
    job->start();
    return job;
}

void WorkspaceController::open_action_result(const EngineActionSettings& s) {
    switch (s.action) {
        case EngineAction::Dump:
        case EngineAction::Import:
            open_file(s.out);
            break;
        case EngineAction::Evaluate:
            emit analysisRequested("length_accuracy", {s.out});
            break;
        case EngineAction::Experiment: {
            // results.json names each model's checkpoint and dump (docs/cli.md).
            QFile f(QDir(s.out).filePath("results.json"));
            if (!f.open(QIODevice::ReadOnly)) {
                emit failed(tr("Experiment"), tr("%1 has no results.json").arg(s.out));
                return;
            }
            try {
                const auto results =
                    parse_json_text(f.readAll().toStdString(), f.fileName().toStdString());
                const QString key = results.contains("models") ? "models" : "runs";
                for (const auto& m : results.value(key.toStdString(), nlohmann::json::array()))
                    for (const char* file : {"checkpoint", "dump"})
                        if (m.contains(file) && m[file].is_string()) {
                            const QString p = QDir(s.out).filePath(
                                QString::fromStdString(m[file].get<std::string>()));
                            if (QFileInfo::exists(p)) open_file(p);
                        }
            } catch (const std::exception& e) {
                emit failed(tr("Experiment"), QString::fromUtf8(e.what()));
            }
            break;
        }
    }
}

}  // namespace routescope::gui
