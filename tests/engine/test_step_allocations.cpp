// A steady-state step of the real training loop (engine/train/training_loop.cpp, run by Trainer and
// Finetuner exactly as `routescope-cli train` runs it) allocates at most what its log record needs
// (issue 23: ≤ 16 heap allocations per step): the objective's micro-batch, the model's forward,
// backward, clipping and AdamW on the flat buffers allocate nothing, for the seven architectures
// (pretraining) and two classification models (fine-tuning).
//
// The counter replaces the process's malloc family (and so operator new, Eigen's and FFTW's
// aligned allocations, std::function's heap): every call made between two "step" records of the
// log is counted, from any thread. Not built under the sanitizers, which own the allocator.
#include <malloc.h>

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <QTemporaryDir>

#include <fstream>

#include "engine/core/config.hpp"
#include "engine/train/finetuner.hpp"
#include "engine/train/trainer.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
inline void count() {
    if (g_counting.load(std::memory_order_relaxed))
        g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(std::size_t n) {
    count();
    return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) {
    count();
    return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) {
    count();
    return __libc_realloc(p, n);
}
void* memalign(std::size_t alignment, std::size_t n) {
    count();
    return __libc_memalign(alignment, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) {
    count();
    return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
    count();
    void* p = __libc_memalign(alignment, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void free(void* p) {
    __libc_free(p);
}
}

using namespace routescope;

namespace {

constexpr long kLogRecordAllocations = 16;  // the bound: the step record's own

nlohmann::json tiny(const std::string& arch) {
    nlohmann::json model = {
        {"arch", arch}, {"d_model", 32}, {"n_layers", 2}, {"max_len", 32}, {"dropout", 0.1}};
    if (arch == "bigs" || arch == "stack_ssm") model["ssm"] = {{"n_modes", 8}};
    if (arch == "bert" || arch == "gated_att") model["n_heads"] = 4;
    return {{"model", model},
            {"tokenizer", {{"kind", "bytes"}}},
            {"data", {{"seq_len", 32}}},
            {"train",
             {{"batch_size", 2},
              {"steps", 12},
              {"clip_grad_norm", 1.0},
              {"seed", 3},
              {"eval_every", 0},
              {"checkpoint_every", 0},
              {"threads", 1}}}};
}

void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

}  // namespace

class TestStepAllocations : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    // Allocations between consecutive "step" records (steps 2 … 12 of the run).
    std::vector<long> per_step_;

    train::RunOptions options(const QString& name) {
        per_step_.clear();
        train::RunOptions o;
        o.out_dir = dir_.filePath(name).toStdString();
        o.threads = 1;
        o.on_record = [this](const nlohmann::ordered_json& r) {
            if (r.value("type", "") != "step") return;
            g_counting = false;
            if (r["step"].get<int>() > 1) per_step_.push_back(g_allocations.load());
            g_allocations = 0;
            g_counting = true;
        };
        return o;
    }

    void check(const QString& what) {
        g_counting = false;
        QCOMPARE(per_step_.size(), std::size_t(11));
        const long most = *std::max_element(per_step_.begin(), per_step_.end());
        QString list;
        for (long n : per_step_)
            list += QString::number(n) + " ";
        qInfo("%s: heap allocations per steady step: %s", qPrintable(what), qPrintable(list));
        QVERIFY2(most <= kLogRecordAllocations,
                 qPrintable(what + ": " + list + "(at most 16: the log record's)"));
    }

private slots:
    void initTestCase() {
        std::string text;
        for (int i = 0; i < 300; ++i)
            text += "line " + std::to_string(i) + " of the corpus that the loop trains on.\n";
        write(dir_.filePath("corpus.txt").toStdString(), text);
        std::string tsv = "sentence\tlabel\n";
        for (int i = 0; i < 200; ++i)
            tsv += std::string(i % 2 ? "a zebra " : "a horse ") + std::to_string(i) +
                   (i % 2 ? "\tyes\n" : "\tno\n");
        write(dir_.filePath("train.tsv").toStdString(), tsv);
    }

    void aSteadyStepOfTheTrainingLoopAllocatesOnlyItsLogRecord_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<QString>("objective");
        for (const char* arch :
             {"bigs", "stack_ssm", "gated_att", "bert", "birdie", "slstm", "gmlp"})
            QTest::newRow(arch) << QString(arch) << QString("mlm");
        QTest::newRow("birdie, objective birdie") << QString("birdie") << QString("birdie");
        QTest::newRow("gmlp causal, clm") << QString("gmlp") << QString("clm");
    }
    void aSteadyStepOfTheTrainingLoopAllocatesOnlyItsLogRecord() {
        QFETCH(QString, arch);
        QFETCH(QString, objective);
        nlohmann::json j = tiny(arch.toStdString());
        j["data"]["train"] = dir_.filePath("corpus.txt").toStdString();
        j["train"]["objective"] = objective.toStdString();
        if (objective == "birdie") {
            j["model"]["birdie"] = {{"mode", "prefix"}};
            j["train"]["birdie"] = {{"update_every", 1000}};  // the mixture is an evaluation
        }
        if (objective == "clm") j["model"]["gmlp"] = {{"causal", true}};
        train::Trainer t(RunConfig::from_json(j), options(arch + objective));
        t.run();
        check(arch + " " + objective);
    }

    void aSteadyFineTuningStepAllocatesOnlyItsLogRecord_data() {
        QTest::addColumn<QString>("arch");
        QTest::newRow("bert classification") << QString("bert");
        QTest::newRow("slstm classification") << QString("slstm");
        QTest::newRow("bigs classification, freeze_ssm") << QString("bigs");
    }
    void aSteadyFineTuningStepAllocatesOnlyItsLogRecord() {
        QFETCH(QString, arch);
        nlohmann::json j = tiny(arch.toStdString());
        j["data"]["train"] = dir_.filePath("train.tsv").toStdString();
        j["train"]["objective"] = "classify";
        if (arch == "bigs") j["train"]["freeze_ssm"] = true;
        train::Finetuner t(RunConfig::from_json(j), options("classify-" + arch));
        t.run();
        check(arch + " classification");
    }
};

QTEST_APPLESS_MAIN(TestStepAllocations)
#include "test_step_allocations.moc"
