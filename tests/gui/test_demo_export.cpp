// Acceptance 4 of the workbench issue: `routescope --export` regenerates the demo project's
// figures headless, as CI runs it. The demo project is built by the demo's own script
// (scripts/make_demo_project.sh) with a few training steps, then exported without a display; every
// view of the project must have written a PNG that decodes, an SVG that parses and draws vectors,
// a PDF, a CSV with a header and rows, and a provenance JSON beside each that names its inputs.
#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QSvgRenderer>

#include "view_test_support.hpp"

namespace {
// Small enough to build in well under a minute on two loaded cores, large enough that every view
// has something to draw (several length bins, gates, both models' layers).
const QStringList kDemoSettings = {"--steps", "20", "--examples", "48", "--threads", "2"};

// The views resources/demo/demo.rsproj opens, by the stem prefix of their figures.
const QStringList kViewKinds = {"kernels",     "gates",           "anisotropy", "pca",
                                "transitions", "length_accuracy", "efficiency", "training"};

QJsonObject read_json(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
}  // namespace

class TestDemoExport : public QObject {
    Q_OBJECT

private slots:
    void theDemoProjectExportsEveryViewHeadless() {
        const QString data = view_test::data_dir("demo_export");
        QDir(data).removeRecursively();
        const QString demo = data + "/demo";
        const QString figures = data + "/figures";

        QElapsedTimer clock;
        clock.start();
        QProcess make;
        make.setProcessChannelMode(QProcess::MergedChannels);
        make.start(
            QStringLiteral(ROUTESCOPE_SOURCE_DIR "/scripts/make_demo_project.sh"),
            QStringList{"--out", demo, "--cli", QStringLiteral(ROUTESCOPE_CLI)} + kDemoSettings);
        QVERIFY(make.waitForFinished(300000));
        const QString made = QString::fromUtf8(make.readAll());
        QVERIFY2(make.exitStatus() == QProcess::NormalExit && make.exitCode() == 0,
                 qPrintable(made));
        const QString project = demo + "/demo.rsproj";
        QVERIFY2(made.trimmed().endsWith(project), qPrintable(made));
        qInfo("demo project built in %.1f s", clock.elapsed() / 1000.0);

        clock.restart();
        QProcess exporter;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.remove("DISPLAY");
        env.remove("WAYLAND_DISPLAY");
        exporter.setProcessEnvironment(env);
        exporter.start(QStringLiteral(ROUTESCOPE_GUI_BIN),
                       {"--export", project, "--out", figures, "--dpi", "96"});
        QVERIFY(exporter.waitForFinished(300000));
        const QString output =
            QString::fromUtf8(exporter.readAllStandardOutput() + exporter.readAllStandardError());
        QCOMPARE(exporter.exitStatus(), QProcess::NormalExit);
        QVERIFY2(exporter.exitCode() == 0, qPrintable(output));
        qInfo("routescope --export wrote the demo's figures in %.1f s", clock.elapsed() / 1000.0);

        const QString bigs_hash = view_test::sha256_of(demo + "/bigs.dump.h5");
        const QStringList pngs = QDir(figures).entryList({"*.png"}, QDir::Files, QDir::Name);
        for (const QString& kind : kViewKinds) {
            QStringList mine;
            for (const QString& png : pngs)
                if (png.startsWith(kind + "-")) mine << png;
            QVERIFY2(mine.size() == 1, qPrintable(kind + ": " + pngs.join(", ") + "\n" + output));
            const QString base = figures + "/" + mine[0].chopped(4);

            const QImage png(base + ".png");
            QVERIFY2(!png.isNull() && png.width() >= 300 && png.height() >= 200,
                     qPrintable(base + ".png"));
            const QByteArray svg = read_all(base + ".svg");
            QVERIFY2(svg.contains("<path") || svg.contains("<polyline"), qPrintable(base + ".svg"));
            QVERIFY2(QSvgRenderer(svg).isValid(), qPrintable(base + ".svg"));
            QVERIFY2(read_all(base + ".pdf").startsWith("%PDF"), qPrintable(base + ".pdf"));
            const QList<QByteArray> csv = read_all(base + ".csv").trimmed().split('\n');
            QVERIFY2(csv.size() >= 2, qPrintable(base + ".csv"));
            for (const QString suffix : {".png", ".svg", ".pdf", ".csv"}) {
                const QJsonObject prov = read_json(base + suffix + ".provenance.json");
                QVERIFY2(prov.value("view").toString() == kind,
                         qPrintable(base + suffix + ".provenance.json"));
            }
            // The views of the BiGS dump name its hash, so a figure can be traced to its data.
            if (kind == "gates" || kind == "pca" || kind == "anisotropy")
                QVERIFY2(read_all(base + ".png.provenance.json").contains(bigs_hash.toUtf8()),
                         qPrintable(base));
        }
    }
};

QTEST_MAIN(TestDemoExport)
#include "test_demo_export.moc"
