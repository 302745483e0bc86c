// The analyses of ANALYSES.md against independent numpy + h5py references
// (tests/reference/analysis/reference_analysis.py) on dumps written by h5py alone
// (make_analysis_dumps.py), against closed forms, and on bad input.
#include <QtTest>

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "analysis/anisotropy.hpp"
#include "analysis/comparison.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/flops.hpp"
#include "analysis/gates.hpp"
#include "analysis/kernels.hpp"
#include "analysis/length_accuracy.hpp"
#include "analysis/pca.hpp"
#include "analysis/similarity.hpp"
#include "analysis/smoothing.hpp"
#include "analysis/transitions.hpp"
#include "analysis_test_support.hpp"
#include "engine/core/error.hpp"

using namespace routescope;
using namespace routescope::analysis;
using namespace analysis_test;

class TestAnalysis : public QObject {
    Q_OBJECT

    static QString path(const char* name) { return QString::fromStdString(dump(name)); }

    /// Runs the CLI expecting failure; checks the exit code and that the message names `needle`.
    static void expect_cli_error(const QStringList& args, int exit_code, const QString& needle) {
        const auto r = run_cli(QStringList{"analyze"} + args +
                               QStringList{"--out", dump_dir() + "/error.json"});
        QVERIFY2(r.exit_code == exit_code,
                 qPrintable(QString("exit %1, output: %2").arg(r.exit_code).arg(r.output)));
        QVERIFY2(r.output.contains(needle), qPrintable(r.output));
    }

private slots:
    // The Similarity view's Cancel and progress (analysis/similarity.hpp, SimilarityOptions): the
    // progress rises to its total; with the cancel hook already set the run throws Cancelled
    // before any work; set during a permutation null of hours, it throws within about a second.
    void similarityReportsProgressAndStopsWhenCancelled() {
        const DumpReader a(dump("random.dump.h5")), b(dump("random_b.dump.h5"));
        SimilarityOptions o;
        o.permutations = 5;
        o.bootstrap = 5;
        std::vector<std::pair<std::int64_t, std::int64_t>> reports;
        o.progress = [&](std::int64_t done, std::int64_t total) {
            reports.push_back({done, total});
        };
        const SimilarityResult r = representation_similarity(a, b, o);
        QVERIFY(!r.layers_a.empty());
        QVERIFY(reports.size() > 2);
        for (std::size_t i = 1; i < reports.size(); ++i)
            QVERIFY(reports[i].first >= reports[i - 1].first &&
                    reports[i].second == reports[0].second);
        QCOMPARE(reports.back().first, reports.back().second);

        o.progress = nullptr;
        o.cancelled = [] { return true; };
        QElapsedTimer timer;
        timer.start();
        QVERIFY_THROWS_EXCEPTION(Cancelled, representation_similarity(a, b, o));
        QVERIFY2(timer.elapsed() < 1000, qPrintable(QString::number(timer.elapsed())));

        std::atomic<bool> flag{false};
        o.cancelled = [&flag] { return flag.load(); };
        o.permutations = 100000000;  // hours uncancelled
        QElapsedTimer since_cancel;
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            since_cancel.start();
            flag = true;
        });
        bool cancelled = false;
        try {
            representation_similarity(a, b, o);
        } catch (const Cancelled&) {
            cancelled = true;
        }
        const qint64 ms = since_cancel.elapsed();
        canceller.join();
        QVERIFY(cancelled);
        QVERIFY2(ms < 1000, qPrintable(QString("stopped %1 ms after the cancel").arg(ms)));
    }

    // The compare panels' A − B (issue 26: in analysis/, not in each view): element by element
    // for one shape, undefined (not zero-padded) for two, NaN where either is NaN.
    // A prediction file (the accuracy view opens any preds.jsonl) whose value nests 10^5 deep is
    // refused by its depth, naming file and line, not walked into a stack overflow.
    void aDeeplyNestedPredictionLineIsRefused() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("deep.preds.jsonl").toStdString();
        std::ofstream(path) << R"({"label":"a","prediction":"a","length":)"
                            << std::string(100000, '[') << std::string(100000, ']') << "}\n";
        try {
            PredictionFile::read(path);
            QFAIL("a line nested 10^5 deep was read");
        } catch (const FormatError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find(path + ":1: nested deeper than 64") != std::string::npos,
                     what.c_str());
        }
    }

    void differenceIsDefinedForOneShapeOnly() {
        const std::vector<double> a{1, 2, 3, 4, 5, 6}, b{0.5, 2, 4, 4, NAN, -6}, c{1, 2, 3};
        const auto d = analysis::difference({2, 3, &a}, {2, 3, &b});
        QVERIFY(d.has_value());
        QCOMPARE(d->size(), std::size_t(6));
        QCOMPARE((*d)[0], 0.5);
        QCOMPARE((*d)[2], -1.0);
        QVERIFY(std::isnan((*d)[4]));
        QCOMPARE((*d)[5], 12.0);
        QVERIFY(!analysis::difference({2, 3, &a}, {3, 2, &b}).has_value());  // transposed shape
        QVERIFY(!analysis::difference({2, 3, &a}, {1, 3, &c}).has_value());
        QVERIFY(!analysis::difference({2, 3, &a}, {2, 3, &c}).has_value());  // values short
    }

    void initTestCase() {
        const QString error = make_dumps();
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    // ---------------------------------------------------------------- anisotropy
    void anisotropyTokenVectorsMatchNumpyOnEveryLayer() {
        // Layer 2 is float16 and layer 3 stores 40 of 60 examples (example_index).
        const auto mismatch = cli_matches_reference("anisotropy", {path("random.dump.h5")},
                                                    {"--m", "50", "--seed", "3"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void anisotropyCentredMatchesNumpy() {
        const auto mismatch =
            cli_matches_reference("anisotropy", {path("random.dump.h5")},
                                  {"--m", "40", "--seed", "11", "--centred", "--layer", "1"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void anisotropySentenceVectorsMatchNumpy() {
        // Layer 3 has /sentence; layer 1 falls back to the masked mean of the hidden states.
        for (const char* layer : {"1", "3"}) {
            const auto mismatch =
                cli_matches_reference("anisotropy", {path("random.dump.h5")},
                                      {"--sentence", "--layer", layer, "--bins", "37"});
            QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        }
    }

    void anisotropyFewerVectorsThanWidthMatchesNumpy() {
        // M = 10 < d = 16: the spectrum comes from the M×M Gram matrix plus d − M null directions.
        const auto mismatch = cli_matches_reference("anisotropy", {path("random.dump.h5")},
                                                    {"--m", "10", "--layer", "0"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    // Vectors near 1e-42 (float32 subnormals: their squares underflow in float) and near 1e36
    // (their squares overflow): the PC1 share was null (subnormals) or the eigensolver failed
    // (exit 3), where numpy in float64 has a value for every statistic.
    void anisotropyAtExtremeScalesMatchesNumpy() {
        for (const char* layer : {"0", "1"}) {
            const auto mismatch = cli_matches_reference("anisotropy", {path("scaled.dump.h5")},
                                                        {"--layer", layer, "--m", "40"});
            QVERIFY2(mismatch.isEmpty(), qPrintable(QString("layer ") + layer + ": " + mismatch));
        }
    }

    // A zeroed layer has no cosines: refused as input (exit 2), naming the dump, the layer and
    // the vector's example and token (it was exit 3 with "vector 0 of the sample has norm 0").
    void anisotropyOfAZeroedLayerNamesTheVector() {
        expect_cli_error({"anisotropy", "--dump", path("zeroed.dump.h5"), "--layer", "1"}, 2,
                         "zeroed.dump.h5: layer 1: the token vector of example ");
        expect_cli_error(
            {"anisotropy", "--dump", path("zeroed.dump.h5"), "--layer", "1", "--sentence"}, 2,
            "zeroed.dump.h5: layer 1: the sentence vector of example ");
    }

    void anisotropyOfEqualVectorsIsOneEverywhere() {
        DumpReader dump(analysis_test::dump("equal.dump.h5"));
        AnisotropyOptions o;
        const auto r = anisotropy(dump, o);
        QCOMPARE(r.m_used, dump.examples());
        QCOMPARE(r.stats.pairs, r.m_used * (r.m_used - 1) / 2);
        QCOMPARE(r.stats.histogram.back(),
                 r.stats.pairs);  // every cosine in the last bin [0.98, 1]
        QVERIFY(std::abs(r.stats.mean - 1) < 1e-6);
        QVERIFY(std::abs(r.stats.median - 1) < 1e-6);
        QVERIFY(r.stats.std < 1e-3);
        QCOMPARE(r.stats.fraction_negative, 0.0);
        QVERIFY(std::abs(r.stats.pc1_variance - 1) < 1e-6);  // one direction holds everything
    }

    void anisotropyOfOrthogonalVectorsIsZeroEverywhere() {
        DumpReader dump(analysis_test::dump("orthogonal.dump.h5"));
        const auto r = anisotropy(dump, AnisotropyOptions{});
        QCOMPARE(r.stats.histogram[50], r.stats.pairs);  // cos = 0 lies in bin [0, 0.02)
        QCOMPARE(r.stats.mean, 0.0);
        QCOMPARE(r.stats.fraction_negative, 0.0);
    }

    // The pair statistics against every cosine computed here in double and sorted: the median by
    // the fine-bin search (odd and even pair counts, and vectors so alike that every cosine falls
    // in one fine bin), the histogram, mean and fraction negative.
    void cosineStatisticsMatchASortOfAllPairs() {
        std::mt19937 gen(9);
        std::normal_distribution<float> dist;
        for (const auto& [m, spread] :
             {std::pair{7, 1.0f}, std::pair{8, 1.0f}, std::pair{301, 1.0f}, std::pair{300, 1.0f},
              std::pair{64, 1e-4f}}) {
            const int d = 12, bins = 40;
            RowMatrixF x(m, d);
            for (int i = 0; i < m; ++i)
                for (int k = 0; k < d; ++k)
                    x(i, k) = (k == 0 ? 3.0f : 0.0f) + spread * dist(gen);
            std::vector<double> cosines;
            for (int i = 0; i < m; ++i)
                for (int j = i + 1; j < m; ++j) {
                    const Eigen::VectorXd a = x.row(i).cast<double>(), b = x.row(j).cast<double>();
                    cosines.push_back(a.dot(b) / (a.norm() * b.norm()));
                }
            std::sort(cosines.begin(), cosines.end());
            const std::size_t n = cosines.size();
            const double median =
                n % 2 ? cosines[n / 2] : 0.5 * (cosines[n / 2] + cosines[n / 2 - 1]);
            double mean = 0;
            std::int64_t negative = 0;
            std::vector<std::int64_t> histogram(bins, 0);
            std::int64_t near_edge = 0;  // may fall either side in float arithmetic
            for (double c : cosines) {
                mean += c / n;
                negative += c < 0;
                const double at = (c + 1) / 2 * bins;
                ++histogram[std::min(bins - 1, static_cast<int>(at))];
                near_edge += std::abs(at - std::round(at)) < 1e-4;
            }
            const auto s = analysis::cosine_statistics(x, bins, false, false);
            const QString where = QString("m=%1 spread=%2").arg(m).arg(spread);
            QCOMPARE(s.pairs, static_cast<std::int64_t>(n));
            QVERIFY2(std::abs(s.median - median) < 2e-6,
                     qPrintable(where + QString(": median %1 vs %2").arg(s.median).arg(median)));
            QVERIFY2(std::abs(s.mean - mean) < 2e-6, qPrintable(where));
            QCOMPARE(s.fraction_negative, static_cast<double>(negative) / n);
            std::int64_t moved = 0;
            for (int b = 0; b < bins; ++b)
                moved += std::abs(s.histogram[b] - histogram[b]);
            QVERIFY2(moved <= 2 * near_edge,
                     qPrintable(where + QString(": %1 counts moved").arg(moved)));
        }
    }

    void anisotropyCentringEqualVectorsIsAnError() {
        DumpReader dump(analysis_test::dump("equal.dump.h5"));
        AnisotropyOptions o;
        o.centred = true;  // every centred vector is 0: no cosine is defined
        QVERIFY_THROWS_EXCEPTION(Error, anisotropy(dump, o));
    }

    void anisotropyTakesAllSentencesWhenMExceedsThem() {
        DumpReader dump(analysis_test::dump("random.dump.h5"));
        AnisotropyOptions o;
        o.m = 100000;
        o.layer = 3;
        const auto r = anisotropy(dump, o);
        QCOMPARE(r.m_requested, std::int64_t{100000});
        QCOMPARE(r.m_used, std::int64_t{40});  // the rows layer 3 stores
    }

    void anisotropySampleIsDeterministicForASeed() {
        DumpReader dump(analysis_test::dump("random.dump.h5"));
        AnisotropyOptions o;
        o.m = 20;
        o.seed = 5;
        const auto a = anisotropy(dump, o), b = anisotropy(dump, o);
        QCOMPARE(a.rows, b.rows);
        QCOMPARE(a.tokens, b.tokens);
        QCOMPARE(a.stats.histogram, b.stats.histogram);
        o.seed = 6;
        QVERIFY(anisotropy(dump, o).rows != a.rows);
        for (std::size_t i = 0; i < a.rows.size(); ++i)  // sampled tokens are real, never padding
            QVERIFY(a.tokens[i] < dump.lengths()[static_cast<std::size_t>(a.examples[i])]);
    }

    // ---------------------------------------------------------------- PCA
    void pcaMatchesNumpyOnEveryLayer() {
        const auto mismatch = cli_matches_reference("pca", {path("random.dump.h5")},
                                                    {"--global-m", "30", "--bucket-width", "8"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    // One sentence: its own k(p) exists, the global variant's pooled sample (one vector, centred
    // to zero) has none: null with a note, not k = 0, which min{k ≥ 1 : …} cannot be.
    void pcaOfOneSentenceHasNoGlobalK() {
        const auto mismatch = cli_matches_reference("pca", {path("single.dump.h5")}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        const DumpReader dump(path("single.dump.h5").toStdString());
        const auto r = pca_redundancy(dump, PcaOptions{});
        QVERIFY(r.global_k.empty());
        QVERIFY2(r.global_note.find("no variance") != std::string::npos, r.global_note.c_str());
        QCOMPARE(r.to_json()["global"]["k"], nlohmann::json(nullptr));
    }

    void pcaEnergyAndSampledSentencesMatchNumpy() {
        const auto mismatch =
            cli_matches_reference("pca", {path("random.dump.h5")},
                                  {"--energy", "--max-sentences", "25", "--seed", "4", "--layer",
                                   "1", "--thresholds", "0.5,0.75,0.9"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    // The S-LSTM paper's statistic (issue 27): k(p) per passage of a fixed number of tokens, from
    // the uncentred SVD, against numpy; and the bootstrap interval of its mean (percentiles of 2000
    // resamples) holds the mean and has about the width of the normal approximation computed
    // here, 2 × 1.96 × sd / sqrt(n) (within 30%).
    void pcaPerPassageUncentredMatchesNumpy() {
        const auto mismatch = cli_matches_reference(
            "pca", {path("random.dump.h5")}, {"--uncentred", "--passage", "5", "--global-m", "20"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        const DumpReader dump(path("random.dump.h5").toStdString());
        PcaOptions o;
        o.passage = 4;
        o.centred = false;
        o.bootstrap = 2000;
        o.seed = 3;
        const auto r = pca_redundancy(dump, o);
        QVERIFY(r.starts.size() == r.rows.size() && !r.rows.empty());
        for (std::size_t i = 0; i < r.rows.size(); ++i)
            QVERIFY(r.lengths[i] == 4 && r.starts[i] % 4 == 0);
        for (std::size_t t = 0; t < o.thresholds.size(); ++t) {
            const double mean = r.overall.mean_k[t];
            QVERIFY(r.overall.ci_low[t] <= mean && mean <= r.overall.ci_high[t]);
            // The normal approximation's width: 2 × 1.96 × sd / sqrt(n), computed here.
            double ss = 0;
            for (const auto& k : r.k)
                ss += (k[t] - mean) * (k[t] - mean);
            const double n = static_cast<double>(r.k.size());
            const double width = 2 * 1.959964 * std::sqrt(ss / (n - 1) / n);
            const double got = r.overall.ci_high[t] - r.overall.ci_low[t];
            if (width > 0)
                QVERIFY2(std::abs(got - width) <= 0.3 * width,
                         qPrintable(QString("p %1: interval width %2, normal approximation %3")
                                        .arg(o.thresholds[t])
                                        .arg(got)
                                        .arg(width)));
        }
    }

    void pcaOfRankKTokenMatricesIsK() {
        DumpReader dump(analysis_test::dump("rank.dump.h5"));
        const auto ranks = dump.attribute("rank");
        for (bool energy : {false, true}) {
            PcaOptions o;
            o.energy = energy;
            o.global_m = 0;
            const auto r = pca_redundancy(dump, o);
            QCOMPARE(r.rows.size(), ranks.size());
            for (std::size_t s = 0; s < r.rows.size(); ++s)
                for (int k : r.k[s])
                    QCOMPARE(k, static_cast<int>(ranks[static_cast<std::size_t>(r.examples[s])]));
        }
    }

    void pcaSkipsAndCountsOneTokenSentences() {
        DumpReader dump(analysis_test::dump("random.dump.h5"));
        PcaOptions o;
        o.global_m = 0;
        const auto r = pca_redundancy(dump, o);
        std::int64_t one_token = 0;
        for (auto n : dump.lengths())
            one_token += n < 2;
        QVERIFY(one_token >= 1);
        QCOMPARE(r.skipped, one_token);
        QCOMPARE(static_cast<std::int64_t>(r.rows.size()) + r.skipped, dump.examples());
    }

    // ---------------------------------------------------------------- accuracy by length
    void lengthAccuracyQuantileBinsMatchNumpy() {
        const auto mismatch =
            cli_matches_reference("length-accuracy", {path("random.dump.h5")}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void lengthAccuracyLeavesUnlabelledExamplesOut() {
        // Label -1 (an unlabelled example) is not a class: left out and counted.
        const auto mismatch =
            cli_matches_reference("length-accuracy", {path("unlabelled.dump.h5")}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void lengthAccuracyFixedEdgesAndWidthMatchNumpy() {
        auto mismatch = cli_matches_reference("length-accuracy", {path("random.dump.h5")},
                                              {"--edges", "2,8,16,20"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        mismatch =
            cli_matches_reference("length-accuracy", {path("random.dump.h5")}, {"--width", "5"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void lengthAccuracyByAttributeMatchesNumpy() {
        const auto mismatch = cli_matches_reference("length-accuracy", {path("random.dump.h5")},
                                                    {"--variable", "gap", "--bins", "4"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void lengthAccuracyTwoModelComparisonMatchesNumpy() {
        const auto mismatch = cli_matches_reference(
            "length-accuracy", {path("random.dump.h5"), path("random_b.dump.h5")}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void wilsonIntervalAndMcNemarClosedForms() {
        // Wilson, 8/10: (p + z²/2n ± z√(p(1−p)/n + z²/4n²)) / (1 + z²/n) = [0.49016, 0.94332].
        const auto [lo, hi] = wilson_interval(8, 10);
        QVERIFY(std::abs(lo - 0.4901624715) < 1e-9 && std::abs(hi - 0.9433178485) < 1e-9);
        // 0 of n and n of n: p = 0 gives centre = half, so the interval starts at 0 exactly, and
        // p = 1 ends at 1 (Wilson 1927; 1024 of 1024 gave 1.0000000000000002, 0 of 3 gave 5.6e-17).
        for (const std::int64_t n : {1, 3, 7, 100, 1024, 1000003}) {
            QCOMPARE(wilson_interval(0, n).first, 0.0);
            QCOMPARE(wilson_interval(n, n).second, 1.0);
            QVERIFY(wilson_interval(n, n).first < 1.0 && wilson_interval(0, n).second > 0.0);
        }
        // McNemar b = 1, c = 6: 2·(1 + 7)/2⁷ = 0.125.
        QVERIFY(std::abs(mcnemar_exact_p(1, 6) - 0.125) < 1e-12);
        QCOMPARE(mcnemar_exact_p(0, 0), 1.0);
        // Perfect binary predictions: MCC 1, F1 1; inverted: MCC −1.
        QCOMPARE(classification_scores({0, 1, 1, 0}, {0, 1, 1, 0}).mcc, 1.0);
        QCOMPARE(classification_scores({0, 1, 1, 0}, {1, 0, 0, 1}).mcc, -1.0);
    }

    // ---------------------------------------------------------------- transitions, gates, kernels
    void transitionsMatchNumpy() {
        // Layers 2 → 3: layer 3 stores 40 of the 60 examples, so only the common ones are compared.
        auto mismatch = cli_matches_reference("transitions", {path("random.dump.h5")}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        mismatch = cli_matches_reference("transitions", {path("random.dump.h5")},
                                         {"--max-sentences", "15", "--seed", "2"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // Layer 1 all zeros: every vector is left out of the relative change and the angle, whose
        // means over nothing are numpy's NaN — null here, not 0 ("no change"); the l2 stands.
        mismatch = cli_matches_reference("transitions", {path("zeroed.dump.h5")}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    // Values a fixed histogram range cannot hold (an "slstm" dump whose gate is not a softmax
    // share) are counted below and above it, as numpy counts them, not silently dropped.
    void gatesOutsideAFixedRangeAreCounted() {
        const auto mismatch = cli_matches_reference("gates", {path("foreign_slstm.dump.h5")}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    // A kind that reads no single layer refuses --layer instead of ignoring it (transitions
    // exited 0 with every pair of layers for a --layer the dump does not even hold).
    void kindsWithoutALayerRefuseLayer() {
        expect_cli_error({"transitions", "--dump", path("random.dump.h5"), "--layer", "7"}, 2,
                         "does not take --layer 7");
        expect_cli_error({"length-accuracy", "--dump", path("random.dump.h5"), "--layer", "1"}, 2,
                         "does not take --layer 1");
        const auto r = run_cli({"analyze", "transitions", "--dump", path("random.dump.h5"),
                                "--layer", "all", "--out", dump_dir() + "/transitions-all.json"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
    }

    // A negative sentence limit (a project's setting; the CLI refuses it when parsing) is
    // refused by every analysis that samples sentences, not taken as "all".
    void aNegativeSentenceLimitIsRefused() {
        const DumpReader dump(path("random.dump.h5").toStdString());
        TransitionsOptions t;
        t.max_sentences = -1;
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, layer_transitions(dump, t));
        PcaOptions p;
        p.max_sentences = -1;
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, pca_redundancy(dump, p));
        GatesOptions g;
        g.max_sentences = -1;
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, gate_statistics(dump, {}, g));
    }

    void gatesMatchNumpy() {
        const auto mismatch = cli_matches_reference("gates", {path("random.dump.h5")}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void slstmGateRangeIsTheSoftmaxBound() {
        const auto r = gate_range("slstm", "f");
        QVERIFY(std::abs(r.lo - 0.084224) < 1e-6 &&
                std::abs(r.hi - 0.404609) < 1e-6);  // ≈ [0.084, 0.405]
        QCOMPARE(gate_range("birdie", "f").hi, 1.0);
    }

    void kernelsFromDumpMatchNumpy() {
        const auto mismatch =
            cli_matches_reference("kernels", {path("random.dump.h5")}, {"--radius", "6"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void kernelsFromCheckpointMatchNumpy() {
        // The S4D formula of MODELS.md evaluated independently; the radius is clamped to L − 1.
        const auto mismatch =
            cli_matches_reference("kernels", {path("before.ckpt.h5")},
                                  {"--length", "48", "--radius", "60"}, "--checkpoint");
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void kernelChangeMatchesNumpy() {
        const auto mismatch =
            cli_matches_reference("kernel-change", {path("before.ckpt.h5"), path("after.ckpt.h5")},
                                  {"--length", "64"}, "--checkpoint");
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void kernelChangeOfACheckpointWithItselfIsZero() {
        const auto r =
            kernel_change(dump("before.ckpt.h5"), dump("before.ckpt.h5"), {}, KernelOptions{});
        QCOMPARE(r.layers.size(), std::size_t{2});
        for (const auto& c : r.layers)
            QCOMPARE(c.score, 0.0);
    }

    void relativeKernelPutsForwardBeforeAndBackwardAfter() {
        // r < 0 reads K_f[−r], r > 0 reads K_b[r], r = 0 the mean of K_f[0] + D_f and K_b[0] + D_b.
        const auto v = relative_kernel({1, 2, 3}, {10, 20, 30}, 0.5, 1.5, 2);
        const std::vector<double> expected = {3, 2, 0.5 * (1.5 + 11.5), 20, 30};
        QCOMPARE(v, expected);
        QCOMPARE(effective_length({0, 0, 1, 0, 0}), std::int64_t{0});
        QCOMPARE(effective_length({1, 1, 1, 1, 1}), std::int64_t{2});  // 5/5 ≥ 90% only at m = 2
    }

    void kernelLayerNotPresentIsAUsageError() {
        expect_cli_error({"kernels", "--dump", path("random.dump.h5"), "--layer", "3"}, 2,
                         "layers present: 1, 2");
    }

    // ---------------------------------------------------------------- FLOPs
    void flopsReproduceBigsPaperTable8() {
        // BiGS paper, Table 8: FLOPs of one forward pass at L = 128, 512, 1024, 4096.
        const std::vector<std::int64_t> lengths = {128, 512, 1024, 4096};
        const double bigs[] = {8.1e10, 3.2e11, 6.5e11, 2.6e12},
                     bert[] = {7.9e10, 3.4e11, 7.2e11, 4.1e12};
        const auto b = flop_model({"bigs", 23, 1024, 0, 64}, lengths);
        const auto t = flop_model({"bert", 24, 1024, 0, 64}, lengths);
        for (std::size_t i = 0; i < lengths.size(); ++i) {
            QVERIFY2(std::abs(b.rows[i].forward / bigs[i] - 1) < 0.10,
                     qPrintable(QString::number(b.rows[i].forward)));
            QVERIFY2(std::abs(t.rows[i].forward / bert[i] - 1) < 0.10,
                     qPrintable(QString::number(t.rows[i].forward)));
            QCOMPARE(b.rows[i].forward_backward, 3 * b.rows[i].forward);
        }
        // MODELS.md: one GATED block at d = 1024, I = 3072 has 13,645,316 parameters.
        QCOMPARE(block_parameters({"bigs", 1, 1024, 0, 64}), 13645316.0);
    }

    void flopsCountBirdieAndSlstmAsTheirCheckpointsHoldThem() {
        // Hand counts from docs/formats/checkpoint.md's shapes at d = 8.
        // S-LSTM: one parameter set for every recurrent step: W [7d, 4d] + [7d], U [7d, d],
        // W_g [2d, 2d] + [2d], W_f [d, 2d] + [d] = 1848 + 448 + 272 + 136 = 2704.
        const auto s = flop_model({"slstm", 3, 8, 0, 0}, {4});
        QCOMPARE(s.parameters, 2704.0);
        QCOMPARE(s.rows[0].dense, 2.0 * 3 * 2704 * 4);  // the set is applied at each of 3 steps
        // Birdie: its state is model.d_inner, by default 3d = 24: four d → 24 gates with bias,
        // 24 → d out with bias, one LayerNorm: 4·(8·24 + 24) + (24·8 + 8) + 16 = 1080 per layer.
        const auto b = flop_model({"birdie", 3, 8, 0, 0}, {4});
        QCOMPARE(b.parameters, 3.0 * 1080);
        QCOMPARE(b.rows[0].mixing, 3.0 * 4 * 4 * 24);
        // An explicit --intermediate is Birdie's state too (d_inner).
        QCOMPARE(flop_model({"birdie", 1, 8, 16, 0}, {4}).parameters,
                 4.0 * (8 * 16 + 16) + (16 * 8 + 8) + 16);
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, flop_model({"gmlp", 1, 8, 7, 0}, {4}));
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, flop_model({"bigs", 1, 8, 0, -3}, {4}));
    }

    void flopsFromTheCli() {
        const QString out = dump_dir() + "/flops.json";
        const auto r = run_cli({"analyze", "flops", "--arch", "bigs", "--layers", "23", "--d-model",
                                "1024", "--lengths", "128,512,1024,4096", "--out", out, "--csv",
                                dump_dir() + "/flops.csv"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const auto rows = read_json(out)["results"][0]["rows"];
        QCOMPARE(rows.size(), std::size_t{4});
        QVERIFY(std::abs(rows[3]["forward"].get<double>() / 2.6e12 - 1) < 0.10);
    }

    // A dump whose /model config is JSON but no run configuration (sample-dump writes
    // {"synthetic": true}; any script may write notes there) is described by its /model
    // attributes: the same figures as --arch/--layers/--d-model given by hand.
    void flopsOfADumpWithoutARunConfiguration() {
        const QString dump = dump_dir() + "/synthetic-flops.dump.h5";
        const auto made = run_cli({"sample-dump", "--out", dump, "--examples", "4", "--length",
                                   "16", "--d-model", "24", "--layers", "3"});
        QVERIFY2(made.exit_code == 0, qPrintable(made.output));
        const auto from_dump = run_cli({"analyze", "flops", "--dump", dump, "--lengths", "16,64",
                                        "--out", dump_dir() + "/synthetic-flops.json"});
        QVERIFY2(from_dump.exit_code == 0, qPrintable(from_dump.output));
        const auto by_hand =
            run_cli({"analyze", "flops", "--arch", "bigs", "--layers", "3", "--d-model", "24",
                     "--lengths", "16,64", "--out", dump_dir() + "/by-hand-flops.json"});
        QVERIFY2(by_hand.exit_code == 0, qPrintable(by_hand.output));
        const auto a = read_json(dump_dir() + "/synthetic-flops.json")["results"][0]["rows"];
        const auto b = read_json(dump_dir() + "/by-hand-flops.json")["results"][0]["rows"];
        QCOMPARE(a.size(), std::size_t{2});
        for (std::size_t i = 0; i < 2; ++i)
            QCOMPARE(a[i]["forward"].get<double>(), b[i]["forward"].get<double>());
    }

    // ---------------------------------------------------------------- provenance and bad input
    void resultsCarryProvenance() {
        const QString out = dump_dir() + "/prov.json";
        const auto r = run_cli({"analyze", "anisotropy", "--dump", path("random.dump.h5"),
                                "--layer", "0", "--m", "9", "--out", out});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const auto p = read_json(out)["results"][0]["provenance"];
        QCOMPARE(p["analysis"].get<std::string>(), std::string("anisotropy"));
        QCOMPARE(p["inputs"][0]["hash"].get<std::string>().size(), std::size_t{64});
        QCOMPARE(p["inputs"][0]["hash_kind"].get<std::string>(), std::string("sha256"));
        QCOMPARE(p["parameters"]["m"].get<int>(), 9);
        QVERIFY(!p["routescope_version"].get<std::string>().empty());
        // The whole-file hash is what sha256sum prints.
        const auto sum = run("/usr/bin/sha256sum", {path("random.dump.h5")});
        QVERIFY(sum.output.startsWith(
            QString::fromStdString(p["inputs"][0]["hash"].get<std::string>())));
    }

    void layerNotInDumpIsAUsageError() {
        expect_cli_error({"anisotropy", "--dump", path("random.dump.h5"), "--layer", "7"}, 2,
                         "layer 7 is not in the dump (layers present: 0, 1, 2, 3)");
        DumpReader dump(analysis_test::dump("random.dump.h5"));
        AnisotropyOptions o;
        o.layer = 9;
        QVERIFY_THROWS_EXCEPTION(ConfigError, anisotropy(dump, o));
    }

    void lengthAccuracyWithoutLabelsIsAUsageError() {
        expect_cli_error({"length-accuracy", "--dump", path("nolabels.dump.h5")}, 2,
                         "needs /data/labels");
    }

    void nanRowsAreRejectedNamingTheirPlace() {
        // Documented choice (docs/decisions.md): a NaN/Inf in data an analysis reads is an error
        // naming the dataset and the index, as DUMP_FORMAT.md asks of readers; nothing is silently
        // skipped.
        // A format violation is exit 2 like every bad input (docs/cli.md's one table).
        expect_cli_error({"pca", "--dump", path("nan.dump.h5"), "--global-m", "0"}, 2,
                         "/layers/0/hidden holds NaN or Inf at [7, 0, 3]");
    }

    void missingGatesAndSentencesAreNamedInTheReadersTerms() {
        // Issue 26, "errors in the user's terms": asking a dump for a gate or a sentence vector
        // it does not hold names the layer and what it does hold, not an HDF5 path.
        DumpReader dump(analysis_test::dump("random.dump.h5"));  // gates f, i on layer 1
        const auto message = [&](auto&& call) {
            try {
                call();
            } catch (const ConfigError& e) {
                return std::string(e.what());
            }
            return std::string("(no error)");
        };
        const std::string other = message([&] { dump.gate_shape(1, "z"); });
        QVERIFY2(other.find("layer 1 has no gate 'z' (its gates: f, i)") != std::string::npos,
                 other.c_str());
        const std::string none = message([&] { dump.gate_shape(0, "f"); });
        QVERIFY2(none.find("layer 0 has no gate 'f' (it records no gates)") != std::string::npos,
                 none.c_str());
        const std::string sentence = message([&] { dump.sentence_rows(0, {0}); });
        QVERIFY2(sentence.find("layer 0 has no sentence vectors") != std::string::npos,
                 sentence.c_str());
        for (const std::string& m : {other, none, sentence})
            QVERIFY2(m.find("/layers/") == std::string::npos && m.rfind(dump.path(), 0) == 0,
                     m.c_str());
    }

    void zeroLengthSentencesAreRejected() {
        expect_cli_error({"anisotropy", "--dump", path("zerolength.dump.h5")}, 2,
                         "/data/lengths[5] = 0");
    }

    void comparingDumpsOfDifferentExamplesIsAnError() {
        expect_cli_error({"length-accuracy", "--dump", path("random.dump.h5"), "--dump",
                          path("shuffled.dump.h5")},
                         2, "do not hold the same examples");
    }

    // A dump cut short while an analysis reads it (a copy still arriving, a disk filling under
    // the writer): HDF5 reads the bytes past the new end as zeros, and PCA skipped those rows as
    // rank 0, a shorter result with no word said (session 30's probe). Any result from such a
    // file mixes two files; the only correct answer is an error naming it.
    void aDumpCutShortWhileReadIsAnErrorNotAShortResult_data() {
        QTest::addColumn<int>("percent");  // of the file kept
        for (int p : {97, 90, 80, 60})
            QTest::newRow(qPrintable(QString("%1%").arg(p))) << p;
    }
    void aDumpCutShortWhileReadIsAnErrorNotAShortResult() {
        QFETCH(int, percent);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string copy = dir.filePath("cut.dump.h5").toStdString();
        std::filesystem::copy_file(dump("random.dump.h5"), copy);
        const DumpReader reader(copy);
        PcaOptions o;
        o.layer = reader.layers().back();
        o.global_m = 0;
        const auto whole = pca_redundancy(reader, o);
        QVERIFY(!whole.rows.empty());
        std::filesystem::resize_file(copy, std::filesystem::file_size(copy) * percent / 100);
        try {
            const auto cut = pca_redundancy(reader, o);
            QFAIL(qPrintable(QString("a result from the cut file: %1 of %2 rows, %3 skipped")
                                 .arg(cut.rows.size())
                                 .arg(whole.rows.size())
                                 .arg(cut.skipped)));
        } catch (const std::exception& e) {
            QVERIFY2(dynamic_cast<const routescope::IoError*>(&e) &&
                         QString(e.what()).contains(QString::fromStdString(copy)) &&
                         QString(e.what()).contains("changed while it was read"),
                     e.what());
        }
    }

    void missingDumpFileIsUnreadable() {
        expect_cli_error({"anisotropy", "--dump", dump_dir() + "/no-such.dump.h5"}, 2,
                         "no-such.dump.h5");
    }

    // Training-curve smoothing (issue 26): TensorBoard's debiased EMA, against its closed form
    // s_t = Σ_{i≤t} w^{t−i} (1 − w) x_i / (1 − w^{t+1}), summed here term by term.
    void smoothingIsTheDebiasedMovingAverage() {
        std::mt19937 rng(7);
        std::normal_distribution<double> noise(2.0, 0.5);
        std::vector<double> x(200);
        for (double& v : x)
            v = noise(rng);
        for (const double w : {0.0, 0.3, 0.6, 0.95}) {
            const auto s = routescope::analysis::debiased_ema(x, w);
            QCOMPARE(s.size(), x.size());
            for (std::size_t t = 0; t < x.size(); t += 17) {
                double num = 0;
                for (std::size_t i = 0; i <= t; ++i)
                    num += std::pow(w, double(t - i)) * (1 - w) * x[i];
                const double expected = w == 0 ? x[t] : num / (1 - std::pow(w, double(t + 1)));
                QVERIFY2(
                    std::abs(s[t] - expected) <= 1e-12 * std::abs(expected),
                    qPrintable(
                        QString("w %1, t %2: %3 vs %4").arg(w).arg(t).arg(s[t]).arg(expected)));
            }
        }
        // The first point is the first value (no pull towards 0); a constant stays constant; a
        // NaN passes through and is left out of the average.
        const auto c = routescope::analysis::debiased_ema({3, 3, NAN, 3}, 0.9);
        QCOMPARE(c[0], 3.0);
        QVERIFY(std::abs(c[1] - 3.0) < 1e-12);
        QVERIFY(std::isnan(c[2]));
        QVERIFY(std::abs(c[3] - 3.0) < 1e-12);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 routescope::analysis::debiased_ema({1.0}, 1.0));
    }
};

QTEST_GUILESS_MAIN(TestAnalysis)
#include "test_analysis.moc"
