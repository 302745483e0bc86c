// The Python package (python/routescope, docs/python.md) against the engine: tiny bigs and
// post-LN bert models are trained a few steps by `routescope-cli train` (MLM, then fine-tuned as
// classifiers from it), exported by `routescope-cli export` as safetensors and pytorch_model.bin,
// and loaded by routescope.load (tests/io/check_python_package.py, which also checks that both
// formats give the same module, parameters and logits, torch.load(weights_only=True) included,
// and that damaged exports are refused); the package's logits (float64) on a padded batch match
// the engine's forward of the exported checkpoint within 1e-4 relative, MLM and classification.
#include <H5Cpp.h>

#include <QProcess>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/io/checkpoint.hpp"
#include "engine/models/model.hpp"
#include "tests/process_run.hpp"

namespace fs = std::filesystem;
using namespace routescope;

namespace {

const std::string kOut = ROUTESCOPE_TEST_DATA "/python-package";
constexpr int kB = 3, kL = 12;

using test_support::Run;
Run run(const QString& program, const QStringList& args) {
    return test_support::run_process(program, args, 300000);
}

Run cli(const QStringList& args) {
    return run(QStringLiteral(ROUTESCOPE_CLI), args);
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// The batch both sides run: random ids of the vocabulary, lengths 12 / 7 / 3 (< max_len 32, so
// padding is exercised), token types 0 / 1.
struct Batch {
    std::vector<std::int32_t> ids, types, lengths{kL, 7, 3};
};

Batch make_batch(int vocab) {
    Batch b;
    std::mt19937 rng(7);
    for (int i = 0; i < kB * kL; ++i) {
        b.ids.push_back(static_cast<std::int32_t>(5 + rng() % static_cast<unsigned>(vocab - 5)));
        b.types.push_back(static_cast<std::int32_t>((i % kL) >= kL / 2));
    }
    return b;
}

void write_batch(const std::string& path, const Batch& b) {
    H5::H5File f(path, H5F_ACC_TRUNC);
    const hsize_t dims[2] = {kB, kL}, n = kB;
    f.createDataSet("input_ids", H5::PredType::NATIVE_INT32, H5::DataSpace(2, dims))
        .write(b.ids.data(), H5::PredType::NATIVE_INT32);
    f.createDataSet("token_type_ids", H5::PredType::NATIVE_INT32, H5::DataSpace(2, dims))
        .write(b.types.data(), H5::PredType::NATIVE_INT32);
    f.createDataSet("lengths", H5::PredType::NATIVE_INT32, H5::DataSpace(1, &n))
        .write(b.lengths.data(), H5::PredType::NATIVE_INT32);
}

std::vector<double> read_doubles(const std::string& path, const std::string& name) {
    H5::H5File f(path, H5F_ACC_RDONLY);
    H5::DataSet ds = f.openDataSet(name);
    std::vector<double> v(static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints()));
    ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
    return v;
}

// The engine's logits of checkpoint `ck` on `b` (MLM or classification), as the importer's
// parity test takes them (tests/io/test_importers.cpp).
std::vector<float> engine_logits(const Checkpoint& ck, const Batch& b, bool classify) {
    models::Model model(ck.config, kB, kL, 1);
    std::copy(ck.params.begin(), ck.params.end(), model.params().data());
    std::vector<std::int32_t> labels(b.ids.size(), -100), class_labels(kB, 0);
    labels[0] = b.ids[0];
    models::Batch batch;
    batch.tokens = b.ids.data();
    batch.types = b.types.data();
    batch.lengths = b.lengths.data();
    (classify ? batch.class_labels : batch.labels) = classify ? class_labels.data() : labels.data();
    model.forward(batch, /*training=*/false);
    return {model.logits(), model.logits() + model.logits_size()};
}

}  // namespace

class TestPythonPackage : public QObject {
    Q_OBJECT

private slots:
    void exported_models_give_the_engines_logits_in_python() {
        fs::remove_all(kOut);
        fs::create_directories(kOut + "/exports");
        // A WordPiece vocabulary (export writes vocab.txt), an MLM corpus, a two-class TSV.
        std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
        const char* words[] = {"the", "cat", "dog",   "sat", "on",    "a",   "mat",  "ran",
                               "far", "and", "slept", "big", "small", "red", "blue", "log"};
        for (const char* w : words)
            vocab += std::string(w) + "\n";
        for (char c = 'a'; c <= 'z'; ++c)
            vocab += std::string("##") + c + "\n" + std::string(1, c) + "\n";
        write_file(kOut + "/vocab.txt", vocab);
        std::string corpus, tsv = "sentence\tlabel\n";
        std::mt19937 rng(3);
        for (int line = 0; line < 60; ++line) {
            std::string s;
            for (int k = 0; k < 10; ++k)
                s += std::string(k ? " " : "") + words[rng() % 16];
            corpus += s + "\n";
            tsv += s + "\t" + (line % 2 ? "yes" : "no") + "\n";
        }
        write_file(kOut + "/corpus.txt", corpus);
        write_file(kOut + "/cls.tsv", tsv);

        struct Case {
            std::string name;
            QStringList sets;
            std::string pool;
        };
        const std::vector<Case> cases = {
            {"bigs", {"model.arch=bigs", "model.ssm.n_modes=8"}, "mean"},
            {"bert",
             {"model.arch=bert", "model.norm_position=post", "model.block_gelu=erf",
              "model.n_heads=2"},
             "first"}};
        std::vector<std::pair<std::string, std::string>> checkpoints;  // export name, checkpoint
        for (const auto& c : cases) {
            const std::string run_json = kOut + "/" + c.name + ".json";
            write_file(run_json,
                       R"({"model": {"d_model": 16, "n_layers": 2, "max_len": 32,
                           "type_embeddings": true},
                           "tokenizer": {"kind": "wordpiece", "model": ")" +
                           kOut + R"(/vocab.txt"},
                           "data": {"train": ")" +
                           kOut + R"(/corpus.txt", "seq_len": 16},
                           "train": {"steps": 3, "batch_size": 4, "warmup_steps": 1,
                                     "eval_every": 100, "eval_batches": 1, "threads": 1,
                                     "lr": 0.01}})");
            QStringList args{"train", "--config", q(run_json), "--out", q(kOut + "/" + c.name)};
            for (const auto& s : c.sets)
                args << "--set" << s;
            Run r = cli(args);
            QVERIFY2(r.code == 0, (r.out + r.err).c_str());
            const std::string mlm = kOut + "/" + c.name + "/model.ckpt.h5";
            r = cli({"train", "--config", q(run_json), "--out", q(kOut + "/" + c.name + "_cls"),
                     "--init", q(mlm), "--set", q("data.train=" + kOut + "/cls.tsv"), "--set",
                     "train.objective=classify", "--set", "train.steps=2", "--set",
                     q("model.pool=" + c.pool)});
            QVERIFY2(r.code == 0, (r.out + r.err).c_str());
            checkpoints.push_back({c.name, mlm});
            checkpoints.push_back({c.name + "_cls", kOut + "/" + c.name + "_cls/model.ckpt.h5"});
        }
        for (const auto& [name, ck] : checkpoints)
            for (const char* to : {"safetensors", "pytorch"}) {
                const Run r = cli({"export", q(ck), "--to", to, "--out",
                                   q(kOut + "/exports/" + name + "_" + to)});
                QVERIFY2(r.code == 0, r.err.c_str());
            }

        const Batch batch =
            make_batch(static_cast<int>(std::count(vocab.begin(), vocab.end(), '\n')));
        write_batch(kOut + "/batch.h5", batch);
        const Run py =
            run(QStringLiteral(ROUTESCOPE_PYTHON),
                {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/io/check_python_package.py"),
                 q(kOut + "/exports"), q(kOut + "/batch.h5"), q(kOut + "/python.h5")});
        qDebug("%s", py.out.c_str());
        QVERIFY2(py.code == 0, (py.out + py.err).c_str());

        for (const auto& [name, path] : checkpoints) {
            const Checkpoint ck = read_checkpoint(path);
            const bool has_classifier = ck.config.model.n_labels > 0;
            QCOMPARE(has_classifier, name.ends_with("_cls"));
            for (const bool classify : {false, true}) {
                if (classify && !has_classifier) continue;
                const auto want = engine_logits(ck, batch, classify);
                const auto got =
                    read_doubles(kOut + "/python.h5", name + (classify ? "/classify" : "/mlm"));
                QCOMPARE(got.size(), want.size());
                double err = 0, scale = 0;
                for (std::size_t i = 0; i < want.size(); ++i) {
                    err = std::max(err, std::fabs(got[i] - double(want[i])));
                    scale = std::max(scale, std::fabs(double(want[i])));
                }
                qDebug("%s %s: max|python - engine| / max|engine| = %.3g (max|engine| %.3g)",
                       name.c_str(), classify ? "classify" : "mlm", err / scale, scale);
                QVERIFY(scale > 0);
                QVERIFY2(err / scale < 1e-4, (name + ": " + std::to_string(err / scale)).c_str());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestPythonPackage)
#include "test_python_package.moc"
