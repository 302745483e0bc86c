// Figure export through the one painter path: a PNG has the pixel size of the chosen DPI, an SVG is
// XML with vector paths (not only an embedded image), a PDF is a PDF that renders to a page, the
// CSV holds the analysis result's values, and the provenance JSON beside each figure names the
// input's SHA-256. The figure is the kernel browser on a `routescope-cli sample-dump` dump, whose
// kernels have a closed form (app/cli/sample_dump_command.cpp): K_f[k] = e^{−k/τ} cos(0.4k/ℓ),
// K_b[k] = 0.7 e^{−k/(0.7τ)} cos(0.3k/ℓ), τ = 2 + 6ℓ, D_f = 1, D_b = 0.9.
#include <QtTest>

#include <QImage>
#include <QProcess>
#include <QStandardPaths>
#include <QXmlStreamReader>
#include <cmath>
#include <memory>

#include "engine/core/error.hpp"
#include "view_test_support.hpp"
#include "views/figure_export.hpp"
#include "views/heatmap_widget.hpp"
#include "views/kernel_view.hpp"

using namespace routescope::views;

namespace {
double closed_form(int layer, int r) {
    const double tau = 2.0 + 6.0 * layer;
    auto kf = [&](int k) {
        return static_cast<double>(
            static_cast<float>(std::exp(-k / tau) * std::cos(0.4 * k / layer)));
    };
    auto kb = [&](int k) {
        return static_cast<double>(
            static_cast<float>(0.7 * std::exp(-k / (0.7 * tau)) * std::cos(0.3 * k / layer)));
    };
    if (r < 0) return kf(-r);
    if (r > 0) return kb(r);
    return 0.5 * (kf(0) + 1.0 + kb(0) + 0.9);
}

QList<QStringList> read_csv(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QList<QStringList> rows;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (!line.isEmpty())
            rows.append(QString::fromUtf8(line).split(','));  // numeric cells: no quoting
    return rows;
}
}  // namespace

class TestFigureExport : public QObject {
    Q_OBJECT
    QString dump_, out_;
    std::unique_ptr<KernelView> view_;

private slots:
    void initTestCase() {
        dump_ = view_test::sample_dump(view_test::data_dir("figure_export"), "sample.dump.h5");
        QVERIFY(!dump_.isEmpty());
        out_ = QStringLiteral(ROUTESCOPE_TEST_OUTPUT "/figure_export");
        QDir(out_).removeRecursively();
        QVERIFY(QDir().mkpath(out_));
        KernelViewSettings s;
        s.a = KernelSource::from_path(dump_);
        s.radius = 6;
        view_ = std::make_unique<KernelView>(s);
        view_->resize(1000, 640);
        view_->show();
        QVERIFY(QTest::qWaitForWindowExposed(view_.get()));
        view_->start();
        QVERIFY(view_test::wait_for(view_.get()));
        QVERIFY2(view_->has_result(), qPrintable(view_->error()));
    }

    void pngHasThePixelSizeOfTheChosenDpi() {
        const QSize logical = view_->figure_size();
        const QString path = out_ + "/kernels.png";
        view_->export_to(path, 300);
        const QImage png(path);
        QVERIFY(!png.isNull());
        // 300 dpi on a figure measured in 1/96 inch: 300/96 pixels per logical pixel.
        QCOMPARE(png.size(), QSize(qRound(logical.width() * 300.0 / 96),
                                   qRound(logical.height() * 300.0 / 96)));
        QCOMPARE(qRound(png.dotsPerMeterX() * 0.0254), 300);
        // Not a blank page: the heatmap's colours are there.
        QSet<QRgb> colours;
        for (int y = 0; y < png.height(); y += 7)
            for (int x = 0; x < png.width(); x += 7)
                colours.insert(png.pixel(x, y));
        QVERIFY(colours.size() > 20);
    }

    void svgIsXmlWithVectorPaths() {
        const QString path = out_ + "/kernels.svg";
        view_->export_to(path);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&f);
        int paths = 0, shapes = 0, images = 0, texts = 0;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement) continue;
            const auto name = xml.name();
            if (name == QLatin1String("path")) ++paths;
            if (name == QLatin1String("path") || name == QLatin1String("rect") ||
                name == QLatin1String("polygon") || name == QLatin1String("polyline"))
                ++shapes;
            if (name == QLatin1String("image")) ++images;
            if (name == QLatin1String("text")) ++texts;
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY2(paths > 0, "no <path> element");
        // Every heatmap cell (4 layers × 13 positions) is a shape of its own, not pixels of an
        // image.
        QVERIFY2(shapes >= 4 * 13,
                 qPrintable(QString("%1 shapes, %2 images").arg(shapes).arg(images)));
        QVERIFY(texts > 10);
    }

    void pdfIsAPdfThatRendersToAPage() {
        const QString path = out_ + "/kernels.pdf";
        view_->export_to(path);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.read(5), QByteArray("%PDF-"));
        const QString pdftoppm = QStandardPaths::findExecutable("pdftoppm");
        if (pdftoppm.isEmpty()) QSKIP("pdftoppm (poppler-utils) is not installed");
        QProcess p;
        p.start(pdftoppm, {"-png", "-r", "48", "-singlefile", path, out_ + "/kernels_pdf_page"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const QImage page(out_ + "/kernels_pdf_page.png");
        QVERIFY(!page.isNull());
        // The page has the figure's aspect ratio (its size in inches is the figure's at 96 dpi).
        const QSize logical = view_->figure_size();
        QVERIFY(std::abs(page.width() - logical.width() / 2) <= 2);
        QVERIFY(std::abs(page.height() - logical.height() / 2) <= 2);
    }

    void csvHoldsTheKernelValues() {
        const QString path = out_ + "/kernels.csv";
        view_->export_to(path);
        const auto rows = read_csv(path);
        QCOMPARE(rows.value(0), (QStringList{"layer", "r", "value", "scaled"}));
        QCOMPARE(rows.size(), 1 + 4 * 13);  // layers 1..4 × r = −6..6
        for (int i = 1; i < rows.size(); ++i) {
            const int layer = rows[i][0].toInt(), r = rows[i][1].toInt();
            const double v = rows[i][2].toDouble();
            QVERIFY2(std::abs(v - closed_form(layer, r)) < 1e-6,
                     qPrintable(QString("layer %1 r %2: %3 vs %4")
                                    .arg(layer)
                                    .arg(r)
                                    .arg(v)
                                    .arg(closed_form(layer, r))));
        }
    }

    void heatmapShowsTheMinMaxScaledMagnitudes() {
        const HeatmapWidget* h = view_->heatmap_a();
        QCOMPARE(h->data().rows, 4);
        QCOMPARE(h->data().columns, 13);
        for (int layer = 1; layer <= 4; ++layer) {
            std::vector<double> m;
            for (int r = -6; r <= 6; ++r)
                m.push_back(std::abs(closed_form(layer, r)));
            const auto [lo, hi] = std::minmax_element(m.begin(), m.end());
            for (int c = 0; c < 13; ++c)
                QVERIFY(std::abs(h->data().values[(layer - 1) * 13 + c] -
                                 (m[c] - *lo) / (*hi - *lo)) < 1e-5);
        }
    }

    void provenanceNamesTheInputHash() {
        const QString path = out_ + "/kernels_prov.png";
        const QStringList written = view_->export_to(path, 96);
        QCOMPARE(written.size(), 2);
        QCOMPARE(written[1], path + ".provenance.json");
        QFile f(written[1]);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        const auto doc = QJsonDocument::fromJson(text).object();
        QCOMPARE(doc["figure"].toString(), QString("kernels_prov.png"));
        QCOMPARE(doc["view"].toString(), QString("kernels"));
        QVERIFY(!doc["application"].toObject()["version"].toString().isEmpty());
        const auto input = doc["results"].toArray()[0].toObject()["inputs"].toArray()[0].toObject();
        QCOMPARE(input["path"].toString(), dump_);
        QCOMPARE(input["hash"].toString(), view_test::sha256_of(dump_));
        QCOMPARE(doc["settings"].toObject()["radius"].toInt(), 6);
    }

    void exportAllWritesEveryFormatWithProvenance() {
        const QStringList files = export_all_formats(*view_, out_ + "/all", 120);
        QCOMPARE(files.size(), 8);
        for (const QString& f : files)
            QVERIFY2(QFileInfo(f).size() > 0, qPrintable(f));
        QVERIFY(files[0].endsWith("kernels-sample.png"));
    }

    void aViewNeverShownExportsToo() {
        KernelViewSettings s;
        s.a = KernelSource::from_path(dump_);
        KernelView hidden(s);
        hidden.start();
        QVERIFY(view_test::wait_for(&hidden));
        const QString path = out_ + "/hidden.png";
        hidden.export_to(path, 96);
        QCOMPARE(QImage(path).size(), QSize(960, 600));
    }

    void anUnknownFormatIsAnError() {
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, view_->export_to(out_ + "/kernels.bmp"));
    }

    void cleanupTestCase() { view_.reset(); }
};

QTEST_MAIN(TestFigureExport)
#include "test_figure_export.moc"
