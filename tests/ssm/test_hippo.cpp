// The initial SSM parameters (MODELS.md, "The SSM of BiGS"): HiPPO-LegS A_im against the numbers
// MODELS.md prints and against numpy's eigvalsh of the same definition; lin/inv closed forms; the
// full parameter init.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/ops/hippo.hpp"
#include "python_runner.hpp"

using namespace routescope;
using namespace routescope::ops;

class TestHippo : public QObject {
    Q_OBJECT

private slots:
    void hippoN64ComesInPlusMinusPairsWithTheMagnitudesOfModelsMd() {
        const std::vector<double> a = a_im_init(AImInit::hippo, 64);
        QCOMPARE(a.size(), std::size_t(64));
        QVERIFY(std::is_sorted(a.begin(), a.end()));
        for (int i = 0; i < 32; ++i)
            QVERIFY2(std::fabs(a[i] + a[63 - i]) <= 1e-9 * std::fabs(a[i]),
                     qPrintable(QString("%1 vs %2").arg(a[i]).arg(a[63 - i])));
        // Positive half, ascending: the magnitudes. MODELS.md gives them to 3 decimals.
        const std::vector<double> mags(a.begin() + 32, a.end());
        const double first[] = {0.264, 0.906, 1.703, 2.626};
        const double last[] = {258.152, 433.031, 1303.274};
        for (int i = 0; i < 4; ++i)
            QVERIFY2(std::fabs(mags[i] - first[i]) <= 0.0005,
                     qPrintable(QString("magnitude %1 is %2").arg(i).arg(mags[i], 0, 'f', 6)));
        for (int i = 0; i < 3; ++i)
            QVERIFY2(
                std::fabs(mags[29 + i] - last[i]) <= 0.0005,
                qPrintable(QString("magnitude %1 is %2").arg(29 + i).arg(mags[29 + i], 0, 'f', 6)));
    }

    void hippoMatchesNumpyEigvalshOfTheDefinition() {
        for (int N : {64, 7}) {
            QString error;
            const std::vector<double> ref =
                test::run_python_reference("hippo_reference.py", {QString::number(N)}, "", error);
            QVERIFY2(error.isEmpty(), qPrintable(error));
            const std::vector<double> a = a_im_init(AImInit::hippo, N);
            QCOMPARE(ref.size(), a.size());
            for (int i = 0; i < N; ++i)
                QVERIFY2(std::fabs(a[i] - ref[i]) <= 1e-9 * std::max(1.0, std::fabs(ref[i])),
                         qPrintable(QString("N=%1 i=%2: %3 vs numpy %4")
                                        .arg(N)
                                        .arg(i)
                                        .arg(a[i], 0, 'g', 17)
                                        .arg(ref[i], 0, 'g', 17)));
        }
    }

    void linIsPiTimesN() {
        const std::vector<double> a = a_im_init(AImInit::lin, 8);
        for (int n = 0; n < 8; ++n)
            QCOMPARE(a[n], std::numbers::pi * n);
    }

    void invIsNOverPiTimesNOver2nPlus1Minus1() {
        const int N = 8;
        const std::vector<double> a = a_im_init(AImInit::inv, N);
        for (int n = 0; n < N; ++n)
            QVERIFY(std::fabs(a[n] - N / std::numbers::pi * (double(N) / (2 * n + 1) - 1)) <=
                    1e-12 * std::max(1.0, std::fabs(a[n])));
        QCOMPARE(a[0], N / std::numbers::pi * (N - 1));
    }

    void initNamesParseAndUnknownNameIsConfigErrorNamingTheKey() {
        QCOMPARE(parse_a_im_init("hippo"), AImInit::hippo);
        QCOMPARE(parse_a_im_init("lin"), AImInit::lin);
        QCOMPARE(parse_a_im_init("inv"), AImInit::inv);
        QCOMPARE(QString::fromStdString(to_string(AImInit::inv)), QString("inv"));
        try {
            parse_a_im_init("legt");
            QFAIL("no exception");
        } catch (const ConfigError& e) {
            QVERIFY(QString(e.what()).contains("model.ssm.a_im_init"));
            QVERIFY(QString(e.what()).contains("legt"));
        }
    }

    void ssmInitDrawsCInOrderThenLogStepFromTheCallersSources() {
        SsmInitConfig cfg;
        cfg.n_modes = 3;
        cfg.n_kernels = 2;
        cfg.a_im = AImInit::lin;
        double next = 0;
        SsmInitSources src;
        src.standard_normal = [&next] { return next += 1; };
        src.uniform01 = [] { return 0.25; };
        std::vector<double> A_re(6), A_im(6), C(12), D(2), log_step(2);
        ssm_init(A_re.data(), A_im.data(), C.data(), D.data(), log_step.data(), cfg, src);
        for (int i = 0; i < 12; ++i)
            QCOMPARE(C[i], std::sqrt(0.5) * (i + 1));
        for (int h = 0; h < 2; ++h) {
            QCOMPARE(D[h], 1.0);
            QVERIFY(std::fabs(log_step[h] - (std::log(0.01) + 0.25 * (0 - std::log(0.01)))) <
                    1e-15);
            for (int n = 0; n < 3; ++n) {
                QCOMPARE(A_re[h * 3 + n], -0.5);
                QCOMPARE(A_im[h * 3 + n], std::numbers::pi * n);
            }
        }
    }

    void ssmInitFromSeedHasTheDocumentedDistributions() {
        SsmInitConfig cfg;
        cfg.n_modes = 64;
        cfg.n_kernels = 4;
        const int HN = 256;
        std::vector<float> A_re(HN), A_im(HN), C(2 * HN), D(4), log_step(4);
        ssm_init(A_re.data(), A_im.data(), C.data(), D.data(), log_step.data(), cfg,
                 std::uint64_t(7));
        const std::vector<double> hippo = a_im_init(AImInit::hippo, 64);
        for (int i = 0; i < HN; ++i) {
            QCOMPARE(A_re[i], -0.5f);
            QCOMPARE(A_im[i], static_cast<float>(hippo[i % 64]));
        }
        double mean = 0, var = 0;
        for (float c : C)
            mean += c;
        mean /= C.size();
        for (float c : C)
            var += (c - mean) * (c - mean);
        var /= C.size() - 1;
        // 512 draws of N(0, 0.5): standard errors 0.031 (mean) and 0.031 (variance); 4σ bounds.
        QVERIFY2(std::fabs(mean) < 0.125, qPrintable(QString::number(mean)));
        QVERIFY2(std::fabs(var - 0.5) < 0.125, qPrintable(QString::number(var)));
        for (int h = 0; h < 4; ++h) {
            QCOMPARE(D[h], 1.0f);
            QVERIFY(log_step[h] >= std::log(0.01f) && log_step[h] <= 0.0f);
        }
        std::vector<float> C2(2 * HN), tmp(HN), tmp2(HN), D2(4), s2(4);
        ssm_init(tmp.data(), tmp2.data(), C2.data(), D2.data(), s2.data(), cfg, std::uint64_t(7));
        QVERIFY(C2 == C && s2 == log_step);
        ssm_init(tmp.data(), tmp2.data(), C2.data(), D2.data(), s2.data(), cfg, std::uint64_t(8));
        QVERIFY(C2 != C);
    }

    void badHyperparametersAreConfigErrors() {
        SsmInitConfig cfg;
        cfg.dt_min = 0;
        std::vector<double> a(64), b(64), c(128), d(1), s(1);
        QVERIFY_THROWS_EXCEPTION(ConfigError, ssm_init(a.data(), b.data(), c.data(), d.data(),
                                                       s.data(), cfg, std::uint64_t(1)));
        QVERIFY_THROWS_EXCEPTION(ConfigError, a_im_init(AImInit::hippo, 0));
    }
};

QTEST_APPLESS_MAIN(TestHippo)
#include "test_hippo.moc"
