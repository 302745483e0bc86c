#include "view_test_support.hpp"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTest>
#include <QWidget>

#include "views/analysis_view.hpp"
#include "views/figure_export.hpp"
#include "views/figure_layout.hpp"

namespace view_test {

QString data_dir(const QString& test) {
    const QString dir = QStringLiteral(ROUTESCOPE_TEST_DATA "/") + test;
    QDir().mkpath(dir);
    return dir;
}

QString sample_dump(const QString& dir, const QString& name, const QStringList& extra) {
    const QString out = QDir(dir).filePath(name);
    if (QFile::exists(out)) return out;
    QProcess p;
    // The defaults below, unless `extra` gives its own (CLI11 takes an option once).
    QStringList args{"sample-dump", "--out", out};
    for (const char* option : {"--examples", "--length", "--d-model"})
        if (!extra.contains(option))
            args << option
                 << (QString(option) == "--examples" ? "60"
                     : QString(option) == "--length" ? "32"
                                                     : "16");
    p.start(QStringLiteral(ROUTESCOPE_CLI), args + extra);
    if (!p.waitForFinished(60000) || p.exitCode() != 0) {
        qWarning("sample-dump failed: %s", p.readAllStandardError().constData());
        return {};
    }
    return out;
}

QString ssm_checkpoint(const QString& dir, const QString& name) {
    const QString out = QDir(dir).filePath(name);
    if (QFile::exists(out)) return out;
    QProcess p;
    p.start(
        QStringLiteral(ROUTESCOPE_PYTHON),
        {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/reference/analysis/make_analysis_dumps.py"),
         dir});
    if (!p.waitForFinished(60000) || p.exitCode() != 0) {
        qWarning("make_analysis_dumps.py failed: %s", p.readAllStandardError().constData());
        return {};
    }
    return out;
}

QString similarity_dump(const QString& dir, const QString& name) {
    const QString out = QDir(dir).filePath(name);
    if (QFile::exists(out)) return out;
    QProcess p;
    p.start(
        QStringLiteral(ROUTESCOPE_PYTHON),
        {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/reference/analysis/make_similarity_dumps.py"),
         dir});
    if (!p.waitForFinished(60000) || p.exitCode() != 0) {
        qWarning("make_similarity_dumps.py failed: %s", p.readAllStandardError().constData());
        return {};
    }
    return out;
}

bool run_cli(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(ROUTESCOPE_CLI), args);
    if (!p.waitForFinished(180000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        qWarning("routescope-cli %s failed: %s", qPrintable(args.join(' ')),
                 p.readAllStandardError().constData());
        return false;
    }
    return true;
}

QString arch_dump(const QString& dir, const QString& name, const QString& model_json, bool gates,
                  const QStringList& dump_extra) {
    const QString dump = QDir(dir).filePath(name + ".dump.h5");
    if (QFile::exists(dump)) return dump;
    const QString config = QDir(dir).filePath(name + ".json");
    QFile f(config);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(QStringLiteral("{\"model\": %1, \"tokenizer\": {\"kind\": \"bytes\"}, "
                           "\"data\": {\"train\": \"builtin:grammar\", \"seq_len\": 32}, "
                           "\"train\": {\"batch_size\": 4, \"steps\": 0}}")
                .arg(model_json)
                .toUtf8());
    f.close();
    const QString run = QDir(dir).filePath(name);
    if (!run_cli({"train", "--config", config, "--out", run, "--threads", "2"})) return {};
    QStringList args{"dump",  "--checkpoint", run + "/model.ckpt.h5",
                     "--out", dump,           "--examples",
                     "6",     "--threads",    "2"};
    if (gates) args << "--gates";
    args << dump_extra;
    if (!run_cli(args)) return {};
    return dump;
}

bool wait_for(routescope::views::AnalysisView* view, int timeout_ms) {
    QElapsedTimer t;
    t.start();
    while (view->busy() && t.elapsed() < timeout_ms)
        QTest::qWait(10);
    QTest::qWait(20);  // let the result's redraw settle
    return !view->busy();
}

bool screenshot(QWidget* widget, const QString& name) {
    QTest::qWait(100);  // Qt Charts lay out their scenes from the event loop
    return widget->grab().save(QStringLiteral(ROUTESCOPE_TEST_OUTPUT "/") + name + ".png");
}

QString sha256_of(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(&f);
    return QString::fromLatin1(h.result().toHex());
}

QStringList journal_layout_problems(const routescope::views::AnalysisView& view) {
    using namespace routescope::views;
    QStringList problems;
    for (const double mm : {kSingleColumnMm, kDoubleColumnMm})
        for (const double pt : {7.0, 8.0, 10.0}) {
            FigureExportOptions o;
            o.width_mm = mm;
            o.font_pt = pt;
            for (const QString& p : figure_layout_problems(figure_layout(view, o)))
                problems << QString("%1 mm, %2 pt: %3").arg(mm).arg(pt).arg(p);
        }
    return problems;
}

}  // namespace view_test
