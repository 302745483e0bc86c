// Residency, proven on the CPU (issue 23):
//   - the guard backend (engine/backend/guard_backend.hpp) kills a process whose host code reads a
//     parameter of a model built on it, and names the faulting address: a host read planted here
//     in a forked child must die of SIGSEGV with that address in its stderr — so the guard suite
//     (tests/cli/guard_suite.py, every command on --device guard against --device cpu) can fail;
//   - memory reached through the backend (upload, download, ops) works on it;
//   - the per-row read-outs evaluation uses (Backend::row_readout, Model::readout) equal an
//     independent host computation on the same logits (long double log-sum-exp, first maximum);
//   - byte accounting: a steady training step of the real TrainingLoop (Trainer::run) moves its
//     batch up and only the loss down, and an evaluation batch moves O(rows) bytes down. These two
//     run on ROUTESCOPE_TEST_DEVICE when set (scripts/gpu-check.sh: cuda), else on the guard
//     device.
#include <QTemporaryDir>
#include <QtTest>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../test_device.hpp"
#include "../train/train_test_support.hpp"
#include "engine/backend/cpu/cpu_backend.hpp"
#include "engine/backend/device_array.hpp"
#include "engine/backend/guard_backend.hpp"
#include "engine/backend/make_backend.hpp"
#include "engine/models/model.hpp"
#include "engine/train/mlm_evaluation.hpp"
#include "engine/train/trainer.hpp"

using namespace routescope;

namespace {

RunConfig tiny(const std::string& arch) {
    nlohmann::json j = {{"model",
                         {{"arch", arch},
                          {"d_model", 16},
                          {"n_layers", 2},
                          {"max_len", 16},
                          {"vocab_size", 40},
                          {"dropout", 0.1},
                          {"ssm", {{"n_modes", 4}}}}},
                        {"tokenizer", {{"kind", "bytes"}}},
                        {"data", {{"seq_len", 16}}},
                        {"train", {{"batch_size", 2}}}};
    return RunConfig::from_json(j);
}

// The independent read-out of one row: first index of the maximum, and
// −log softmax(row)[target] in long double.
struct HostRow {
    std::int32_t argmax;
    long double nll;
};
HostRow host_row(const float* row, std::int64_t n, std::int32_t target) {
    std::int32_t best = 0;
    for (std::int64_t i = 1; i < n; ++i)
        if (row[i] > row[best]) best = static_cast<std::int32_t>(i);
    long double sum = 0;
    for (std::int64_t i = 0; i < n; ++i)
        sum += std::exp(static_cast<long double>(row[i]) - row[best]);
    const long double nll = target >= 0 && target < n
                                ? std::log(sum) + row[best] - row[target]
                                : std::numeric_limits<long double>::quiet_NaN();
    return {best, nll};
}

}  // namespace

class TestGuardBackend : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void aPlantedHostReadOfAParameterDiesNamingTheAddress() {
        int err[2];
        QVERIFY(::pipe(err) == 0);
        const pid_t pid = ::fork();
        QVERIFY(pid >= 0);
        if (pid == 0) {
            ::dup2(err[1], STDERR_FILENO);
            ::close(err[0]);
            models::Model model(tiny("bigs"), 2, 16, 1, Device::guard);
            model.init(1);
            const float* p = model.params().param("layers.0.dv.weight");
            std::fprintf(stderr, "planted read at %p\n", static_cast<const void*>(p));
            std::fflush(stderr);
            volatile float x = *p;  // the planted host read of device memory
            (void)x;
            ::_exit(0);  // not reached when the guard works
        }
        ::close(err[1]);
        std::string text;
        char buf[4096];
        for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;)
            text.append(buf, static_cast<std::size_t>(n));
        ::close(err[0]);
        int status = 0;
        QCOMPARE(::waitpid(pid, &status, 0), pid);
        QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, text.c_str());
        const auto at = text.find("planted read at ");
        QVERIFY2(at != std::string::npos, text.c_str());
        const std::string address = text.substr(at + 16, text.find('\n', at) - at - 16);  // %p: 0x…
        QVERIFY2(text.find("touched device memory at " + address) != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find("outside a backend call") != std::string::npos, text.c_str());
    }

    void memoryIsReachedThroughTheBackend() {
        GuardBackend guard(ThreadPool::serial());
        DeviceArray<float> a(guard, 1000);
        QVERIFY(GuardBackend::owns(a.data()));
        std::vector<float> host(1000);
        for (std::size_t i = 0; i < host.size(); ++i)
            host[i] = static_cast<float>(i) * 0.5f;
        a.upload(host);
        guard.scale(a.data(), 2.0f, a.size());
        const std::vector<float> back = a.download();
        for (std::size_t i = 0; i < host.size(); ++i)
            QCOMPARE(back[i], static_cast<float>(i));
        QCOMPARE(guard.bytes_to_device(), std::uint64_t(4000));
        QCOMPARE(guard.bytes_to_host(), std::uint64_t(4000));
        QCOMPARE(guard.sum_squares(a.data(), 3), 0.0 + 1.0 + 4.0);
    }

    void rowReadoutEqualsTheHostComputation() {
        const std::int64_t rows = 37, width = 301;
        std::mt19937 rng(7);
        std::normal_distribution<float> normal(0.0f, 4.0f);
        std::vector<float> logits(static_cast<std::size_t>(rows * width));
        for (auto& v : logits)
            v = normal(rng);
        // Ties (the first maximum wins), a row of equal values, huge logits.
        logits[5 * width + 3] = logits[5 * width + 200] = 1e3f;
        for (std::int64_t i = 0; i < width; ++i)
            logits[static_cast<std::size_t>(6 * width + i)] = 0.25f;
        logits[7 * width + 100] = 8e4f;
        std::vector<std::int32_t> targets(static_cast<std::size_t>(rows));
        for (std::int64_t r = 0; r < rows; ++r)
            targets[static_cast<std::size_t>(r)] = static_cast<std::int32_t>((r * 37) % width);
        targets[3] = -100;                              // ignored: NaN
        targets[4] = static_cast<std::int32_t>(width);  // outside: NaN

        ThreadPool pool(2);
        CpuBackend cpu(pool);
        GuardBackend guard(pool);
        for (Backend* be : {static_cast<Backend*>(&cpu), static_cast<Backend*>(&guard)}) {
            DeviceArray<float> l(*be, logits.size());
            DeviceArray<std::int32_t> t(*be, targets.size()), am(*be, targets.size());
            DeviceArray<double> nll(*be, targets.size());
            l.upload(logits);
            t.upload(targets);
            const std::uint64_t down = be->bytes_to_host();
            be->row_readout(l.data(), t.data(), rows, width, am.data(), nll.data());
            const std::vector<std::int32_t> a = am.download();
            const std::vector<double> n = nll.download();
            QCOMPARE(be->bytes_to_host() - down, std::uint64_t(12 * rows));  // O(rows) down
            for (std::int64_t r = 0; r < rows; ++r) {
                const HostRow h = host_row(logits.data() + r * width, width,
                                           targets[static_cast<std::size_t>(r)]);
                const auto k = static_cast<std::size_t>(r);
                QCOMPARE(a[k], h.argmax);
                if (std::isnan(static_cast<double>(h.nll))) {
                    QVERIFY(std::isnan(n[k]));
                    continue;
                }
                QVERIFY2(std::abs(n[k] - static_cast<double>(h.nll)) <=
                             1e-12 * std::max(1.0L, std::abs(h.nll)),
                         qPrintable(QStringLiteral("row %1: %2 vs %3")
                                        .arg(r)
                                        .arg(n[k], 0, 'g', 17)
                                        .arg(static_cast<double>(h.nll), 0, 'g', 17)));
            }
            QCOMPARE(a[5], 3);
            QCOMPARE(a[6], 0);
        }
    }

    // Model::readout on a real forward against the host computation on the downloaded logits,
    // for an MLM batch and a classification batch, on the guard device.
    void modelReadoutEqualsTheHostComputationOnItsLogits() {
        RunConfig c = tiny("bigs");
        c.model.n_labels = 3;
        models::Model model(c, 2, 16, 1, Device::guard);
        model.init(3);
        std::vector<std::int32_t> tokens(32), labels(32, -100), lengths = {16, 9}, classes = {2, 0};
        for (int i = 0; i < 32; ++i)
            tokens[static_cast<std::size_t>(i)] = 5 + (i * 7) % 30;
        for (int i = 0; i < 32; i += 3)
            labels[static_cast<std::size_t>(i)] = (i * 11) % 40;
        models::Batch mlm;
        mlm.tokens = tokens.data();
        mlm.lengths = lengths.data();
        mlm.labels = labels.data();
        models::Batch cls = mlm;
        cls.labels = nullptr;
        cls.class_labels = classes.data();
        for (const models::Batch* b : {&mlm, &cls}) {
            model.forward(*b, /*training=*/false);
            const std::vector<float> logits = model.download_logits();
            const models::Model::RowReadout& r = model.readout();
            const std::size_t rows = r.argmax.size();
            QCOMPARE(rows, b == &mlm ? std::size_t(32) : std::size_t(2));
            for (std::size_t k = 0; k < rows; ++k) {
                const std::int32_t target = b == &mlm ? labels[k] : classes[k];
                const HostRow h = host_row(logits.data() + k * r.width, r.width, target);
                QCOMPARE(r.argmax[k], h.argmax);
                if (target < 0)
                    QVERIFY(std::isnan(r.nll[k]));
                else
                    QVERIFY(std::abs(r.nll[k] - static_cast<double>(h.nll)) < 1e-9);
            }
        }
    }

    // The real training step (Trainer → TrainingLoop): between two step records, the backend
    // moves exactly the micro-batches' host arrays up (tokens, lengths, labels, and Birdie's
    // three carry masks when the batch has a reset mask) and only the losses down (8 bytes per
    // micro-batch; the gradient norm is the backend's own reduction, which the CPU and guard
    // backends return without a copy and a GPU returns as one scalar).
    void aSteadyTrainingStepMovesItsBatchUpAndScalarsDown_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<QString>("objective");
        QTest::addColumn<int>("accum");
        QTest::newRow("bigs mlm, 2 micro-batches") << "bigs"
                                                   << "mlm" << 2;
        QTest::newRow("birdie arch, birdie objective") << "birdie"
                                                       << "birdie" << 1;
        QTest::newRow("gmlp mlm") << "gmlp"
                                  << "mlm" << 1;
    }
    void aSteadyTrainingStepMovesItsBatchUpAndScalarsDown() {
        QFETCH(QString, arch);
        QFETCH(QString, objective);
        QFETCH(int, accum);
        const std::string corpus = dir_.filePath("corpus.txt").toStdString();
        std::string text;
        for (int i = 0; i < 200; ++i)
            text += "a small corpus line " + std::to_string(i) + " for the byte test.\n";
        train_test::write_text(corpus, text);
        auto j = train_test::tiny_bigs(corpus);
        j["model"]["arch"] = arch.toStdString();
        if (arch == "birdie") j["model"]["birdie"] = {{"mode", "prefix"}};
        j["train"]["objective"] = objective.toStdString();
        j["train"]["grad_accum"] = accum;
        j["train"]["steps"] = 5;
        j["train"]["eval_every"] = 0;
        j["train"]["checkpoint_every"] = 0;
        // Birdie's mixture update (an evaluation of every arm) only before the first step here;
        // its own traffic is the loss of each arm's batch.
        j["train"]["birdie"] = {{"update_every", 1000}};
        const RunConfig config = RunConfig::from_json(j);
        train::TrainerOptions options;
        options.out_dir = dir_.filePath("bytes-" + arch + objective).toStdString();
        options.threads = 1;
        const Device device = test::test_device(Device::guard);
        options.device = device;
        train::Trainer* trainer = nullptr;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> at_step;
        options.on_record = [&](const nlohmann::ordered_json& r) {
            if (r.value("type", "") != "step" || !trainer) return;
            Backend& be = trainer->model().backend();
            at_step.emplace_back(be.bytes_to_device(), be.bytes_to_host());
        };
        train::Trainer t(config, options);
        trainer = &t;
        QCOMPARE(t.model().device(), device);
        t.run();
        QCOMPARE(at_step.size(), std::size_t(5));
        const std::uint64_t B = 4, L = 32;
        std::uint64_t per_batch = 4 * (2 * B * L + B);  // tokens, labels, lengths
        if (arch == "birdie" && objective == "birdie") per_batch += 3 * 4 * B * L;  // masks
        for (std::size_t k = 1; k < at_step.size(); ++k) {
            const std::uint64_t up = at_step[k].first - at_step[k - 1].first;
            const std::uint64_t down = at_step[k].second - at_step[k - 1].second;
            QCOMPARE(up, per_batch * static_cast<std::uint64_t>(accum));
            // The losses; and on CUDA the gradient norm, a download there (the backends over host
            // memory return Σg² without a copy).
            const std::uint64_t norm = device == Device::cuda ? 8 : 0;
            QCOMPARE(down, std::uint64_t(8) * static_cast<std::uint64_t>(accum) + norm);
        }
    }

    // One evaluation batch: the batch up, the loss and 12 bytes per row (argmax + NLL) down,
    // never the [rows, V] logits.
    void anEvaluationBatchMovesRowsNotLogits() {
        models::Model model(tiny("bigs"), 2, 16, 1, test::test_device(Device::guard));
        model.init(5);
        std::vector<std::int32_t> tokens(32, 7), labels(32, -100), lengths = {16, 16};
        labels[0] = 9;
        labels[20] = 11;
        models::Batch b;
        b.tokens = tokens.data();
        b.lengths = lengths.data();
        b.labels = labels.data();
        train::MlmTally tally;
        const std::uint64_t up0 = model.backend().bytes_to_device();
        const std::uint64_t down0 = model.backend().bytes_to_host();
        tally.add_batch(model, b, 2);
        QCOMPARE(model.backend().bytes_to_device() - up0, std::uint64_t(4 * (2 * 32 + 2)));
        QCOMPARE(model.backend().bytes_to_host() - down0, std::uint64_t(8 + 12 * 32));
        QCOMPARE(tally.score().targets, std::int64_t(2));
    }

    void theDeviceIsHonouredNotDiscarded() {
        QCOMPARE(resolve_device("guard"), Device::guard);
        models::Model cpu(tiny("gmlp"), 1, 8, 1, Device::cpu);
        models::Model guard(tiny("gmlp"), 1, 8, 1, Device::guard);
        QCOMPARE(cpu.device(), Device::cpu);
        QCOMPARE(guard.device(), Device::guard);
        QVERIFY(!GuardBackend::owns(cpu.params().data()));
        QVERIFY(GuardBackend::owns(guard.params().data()));
        QVERIFY(GuardBackend::owns(guard.params().grad_data()));
    }
};

QTEST_GUILESS_MAIN(TestGuardBackend)
#include "test_guard_backend.moc"
