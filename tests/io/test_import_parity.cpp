// Issue 16's parity items: imported models and tokenizers against the published semantics, the
// expected values from independent Python references (tests/io/make_import_parity_fixtures.py
// runs tests/reference/bigs_published.py and tests/reference/bert_uncased_tokenizer.py).
//
// - A small random BiGS in the published layouts (PyTorch port state_dict, safetensors, the
//   release's Flax tree), MLM and classification: `routescope-cli import`, then the engine's
//   logits on padded batches (L = Lmax and L < Lmax) within 1e-4 relative of the reference.
// - WordPiece from vocab.txt and from tokenizer.json, each embedded by the import: the ids of
//   texts with accents, CJK, punctuation, unknown words, a word over 100 characters and control
//   characters, framed as classification examples ([CLS] a [SEP] (b [SEP])), equal the
//   reference's BERT-uncased ids; tokenizer.json files that are not BERT-uncased are refused.
// - A cased vocabulary (bert-base-cased's case: tokenizer_config.json do_lower_case false, or a
//   tokenizer.json with lowercase false) imports as wordpiece_cased and gives the reference's
//   cased ids; a bare vocab.txt stays uncased with a note; the export writes the casing back.
#include <H5Cpp.h>

#include <QProcess>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/data/classification_set.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/models/model.hpp"
#include "engine/train/labelled_set.hpp"
#include "tests/process_run.hpp"

namespace fs = std::filesystem;
using namespace routescope;

namespace {

const std::string kData = ROUTESCOPE_TEST_DATA "/import-parity";
const std::string kOut = ROUTESCOPE_TEST_DATA "/import-parity-out";

using test_support::Run;
Run run(const QString& program, const QStringList& args) {
    return test_support::run_process(program, args, 180000);
}

Run import_cli(const std::string& src, const std::string& out) {
    return run(QStringLiteral(ROUTESCOPE_CLI),
               {"import", QString::fromStdString(src), "--out", QString::fromStdString(out)});
}

// The ids of singles.jsonl and pairs.jsonl through `tokenizer`, framed as classification examples,
// against `expected_json` ({"singles"|"pairs": [[ids, types], …]}, the reference's): "" when every
// example matches, else the first mismatch as pieces. `wanted` collects every expected piece.
std::string compare_ids(const data::Tokenizer& tokenizer, const std::string& expected_json,
                        std::string* wanted = nullptr) {
    std::ifstream in(expected_json);
    const auto expected = nlohmann::json::parse(in);
    const auto pieces = [&](const std::vector<std::int32_t>& ids) {
        std::string text;
        for (const auto t : ids)
            text += tokenizer.piece(t) + " ";
        return text;
    };
    std::string bad;
    for (const char* set : {"singles", "pairs"}) {
        const auto examples = train::classification_examples(
            data::read_classification(kData + "/" + set + ".jsonl"), tokenizer, 1 << 20);
        const auto& want = expected[set];
        if (examples.examples.size() != want.size())
            return std::string(set) + ": " + std::to_string(examples.examples.size()) +
                   " examples, expected " + std::to_string(want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            const auto& e = examples.examples[i];
            const auto ids = want[i][0].get<std::vector<std::int32_t>>();
            const auto types = want[i][1].get<std::vector<std::int32_t>>();
            if (wanted) *wanted += pieces(ids);
            if (bad.empty() && (e.tokens != ids || e.types != types))
                bad = std::string(set) + " " + std::to_string(i) + ":\n got  " + pieces(e.tokens) +
                      "\n want " + pieces(ids) +
                      (e.types != types ? "\n (token types differ)" : "");
        }
    }
    return bad;
}

template <class T>
std::vector<T> read_h5(const std::string& path, const std::string& name) {
    H5::H5File f(path, H5F_ACC_RDONLY);
    H5::DataSet ds = f.openDataSet(name);
    std::vector<T> v(static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints()));
    ds.read(v.data(),
            std::is_same_v<T, double> ? H5::PredType::NATIVE_DOUBLE : H5::PredType::NATIVE_INT32);
    return v;
}

// max|engine − ref| / max|ref| of the engine's logits of `ck` on the batch of `expected`.
double logit_error(const Checkpoint& ck, const std::string& expected, bool classify) {
    const auto ids = read_h5<std::int32_t>(expected, "input_ids");
    const auto types = read_h5<std::int32_t>(expected, "token_type_ids");
    const auto lengths = read_h5<std::int32_t>(expected, "lengths");
    const auto want = read_h5<double>(expected, "logits");
    const int B = static_cast<int>(lengths.size());
    const int L = static_cast<int>(ids.size()) / B;
    models::Model model(ck.config, B, L, 1);
    std::copy(ck.params.begin(), ck.params.end(), model.params().data());
    std::vector<std::int32_t> labels(ids.size(), -100), class_labels(std::size_t(B), 0);
    labels[1] = ids[1];  // one MLM target: the batch needs one, the logits cover every position
    models::Batch batch;
    batch.tokens = ids.data();
    batch.types = types.data();
    batch.lengths = lengths.data();
    if (classify)
        batch.class_labels = class_labels.data();
    else
        batch.labels = labels.data();
    model.forward(batch, /*training=*/false);
    if (static_cast<std::size_t>(model.logits_size()) != want.size()) return 1e9;
    double err = 0, scale = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        err = std::max(err, std::fabs(double(model.logits()[i]) - want[i]));
        scale = std::max(scale, std::fabs(want[i]));
    }
    return err / scale;
}

}  // namespace

class TestImportParity : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        fs::remove_all(kData);
        fs::remove_all(kOut);
        fs::create_directories(kOut);
        const Run r =
            run(QStringLiteral(ROUTESCOPE_PYTHON),
                {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/io/make_import_parity_fixtures.py"),
                 QString::fromStdString(kData)});
        QVERIFY2(r.code == 0, r.err.c_str());
    }

    // The engine's logits of the imported BiGS equal the published model's (bigs_published.py,
    // float64) within 1e-4 relative, on a batch padded to Lmax and one padded to L < Lmax.
    void bigs_logits_match_the_published_semantics_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("batch");
        for (const char* kind : {"mlm", "cls"})
            for (const char* format : {"pytorch", "safetensors", "flax"})
                for (const char* batch : {"full", "short"})
                    QTest::newRow((std::string(kind) + " " + format + " " + batch).c_str())
                        << kind << format << batch;
    }
    void bigs_logits_match_the_published_semantics() {
        QFETCH(QString, kind);
        QFETCH(QString, format);
        QFETCH(QString, batch);
        const std::string name = "bigs_" + kind.toStdString() + "_" + format.toStdString();
        const std::string out = kOut + "/" + name + ".ckpt.h5";
        if (!fs::exists(out)) {
            const Run r = import_cli(kData + "/" + name, out);
            QVERIFY2(r.code == 0, r.err.c_str());
        }
        const Checkpoint ck = read_checkpoint(out);
        const bool classify = kind == "cls";
        QCOMPARE(ck.config.model.arch, std::string("bigs"));
        QCOMPARE(ck.config.model.mlm_head, !classify);
        QCOMPARE(ck.config.model.n_labels, classify ? 3 : 0);
        const double err = logit_error(
            ck, kData + "/bigs_" + kind.toStdString() + "_" + batch.toStdString() + "_expected.h5",
            classify);
        qDebug("%s %s: max|engine - ref| / max|ref| = %.3g", name.c_str(),
               batch.toUtf8().constData(), err);
        QVERIFY2(err < 1e-4, std::to_string(err).c_str());
    }

    // The three files of each model import to the same checkpoint bit for bit, the tokenizer.json
    // beside the safetensors file to the same vocabulary as the vocab.txt beside the others.
    void three_formats_give_identical_checkpoints() {
        for (const char* kind : {"mlm", "cls"}) {
            std::vector<Checkpoint> cks;
            for (const char* format : {"pytorch", "safetensors", "flax"}) {
                const std::string name = std::string("bigs_") + kind + "_" + format;
                const std::string out = kOut + "/" + name + ".ckpt.h5";
                if (!fs::exists(out)) {
                    const Run r = import_cli(kData + "/" + name, out);
                    QVERIFY2(r.code == 0, r.err.c_str());
                }
                cks.push_back(read_checkpoint(out));
            }
            for (std::size_t k = 1; k < cks.size(); ++k) {
                QCOMPARE(cks[k].config.to_json_text(), cks[0].config.to_json_text());
                QCOMPARE(cks[k].params.size(), cks[0].params.size());
                QVERIFY(std::memcmp(cks[k].params.data(), cks[0].params.data(),
                                    cks[0].params.size() * sizeof(float)) == 0);
                QVERIFY(cks[k].tokenizer.model == cks[0].tokenizer.model);
            }
        }
    }

    // hidden_act is the release's MLM transform activation (its blocks are always tanh): a tanh
    // gelu cannot be the engine's gelu_erf head, so an MLM BiGS with "gelu_new" is refused naming
    // the key; a classifier, which has no such head, imports with the same logits.
    void bigs_hidden_act_is_the_mlm_heads() {
        const std::string weights = kData + "/bigs_mlm_pytorch/pytorch_model.bin";
        const std::string out = kOut + "/gelu_new.ckpt.h5";
        Run r = run(QStringLiteral(ROUTESCOPE_CLI),
                    {"import", QString::fromStdString(weights), "--config",
                     QString::fromStdString(kData + "/config_mlm_gelu_new.json"), "--out",
                     QString::fromStdString(out)});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("hidden_act: 'gelu_new'") != std::string::npos, r.err.c_str());
        QVERIFY(!fs::exists(out));
        r = run(QStringLiteral(ROUTESCOPE_CLI),
                {"import", QString::fromStdString(kData + "/bigs_cls_pytorch/pytorch_model.bin"),
                 "--config", QString::fromStdString(kData + "/config_cls_gelu_new.json"), "--out",
                 QString::fromStdString(out)});
        QVERIFY2(r.code == 0, r.err.c_str());
        const double err =
            logit_error(read_checkpoint(out), kData + "/bigs_cls_short_expected.h5", true);
        QVERIFY2(err < 1e-4, std::to_string(err).c_str());
    }

    // pooler_type as the release's pooler (FlaxBiGSPooler, the port's BiGSPooler) reads it:
    // "mean" averages every position of the row, padding included (model.pool = mean_all); any
    // other value is the non-padding mean, "first" and "cls" too (the release has no first-token
    // pooler). The expected logits are bigs_published.py's on rows of Lmax.
    void bigs_pooler_type_is_read_as_the_release_reads_it_data() {
        QTest::addColumn<QString>("pooler");
        QTest::addColumn<QString>("pool");
        QTest::addColumn<QString>("expected");
        QTest::newRow("mean") << "mean"
                              << "mean_all"
                              << "bigs_cls_full_mean_expected.h5";
        QTest::newRow("first") << "first"
                               << "mean"
                               << "bigs_cls_full_expected.h5";
        QTest::newRow("cls") << "cls"
                             << "mean"
                             << "bigs_cls_full_expected.h5";
    }
    void bigs_pooler_type_is_read_as_the_release_reads_it() {
        QFETCH(QString, pooler);
        QFETCH(QString, pool);
        QFETCH(QString, expected);
        const std::string out = kOut + "/pooler_" + pooler.toStdString() + ".ckpt.h5";
        const Run r = run(
            QStringLiteral(ROUTESCOPE_CLI),
            {"import", QString::fromStdString(kData + "/bigs_cls_pytorch/pytorch_model.bin"),
             "--config",
             QString::fromStdString(kData + "/config_cls_pooler_" + pooler.toStdString() + ".json"),
             "--out", QString::fromStdString(out)});
        QVERIFY2(r.code == 0, r.err.c_str());
        const Checkpoint ck = read_checkpoint(out);
        QCOMPARE(QString::fromStdString(ck.config.model.pool), pool);
        const double err = logit_error(ck, kData + "/" + expected.toStdString(), true);
        QVERIFY2(err < 1e-4, std::to_string(err).c_str());
        // The export writes the pooler back as the release reads it.
        const std::string dir = kOut + "/pooler_" + pooler.toStdString() + "_export";
        fs::remove_all(dir);
        const Run e = run(QStringLiteral(ROUTESCOPE_CLI),
                          {"export", QString::fromStdString(out), "--to", "safetensors", "--out",
                           QString::fromStdString(dir)});
        QVERIFY2(e.code == 0, e.err.c_str());
        std::ifstream in(dir + "/config.json");
        QCOMPARE(QString::fromStdString(nlohmann::json::parse(in).at("pooler_type")),
                 pool == "mean_all" ? QString("mean") : QString("non_padding_mean"));
    }

    // The release runs only rows of Lmax and its backward SSM reads the padding, so a short
    // sentence's states are those of its row padded to Lmax: `dump --data` of an imported BiGS
    // pads every row to Lmax (the checkpoint's data.seq_len), and its states of every layer equal
    // bigs_published.py's on those rows (tests/io/check_imported_dump.py). --length chooses
    // another row length, which every row then has, however short the file's documents.
    void dump_of_imported_bigs_has_rows_of_lmax() {
        const std::string ck = kOut + "/bigs_mlm_pytorch.ckpt.h5";
        if (!fs::exists(ck)) {
            const Run r = import_cli(kData + "/bigs_mlm_pytorch", ck);
            QVERIFY2(r.code == 0, r.err.c_str());
        }
        const std::string text = kOut + "/short.txt";
        std::ofstream(text) << "the cat\na dog\n";  // 6 and 4 wordpieces with [CLS], [SEP]
        const std::string dump = kOut + "/short.dump.h5";
        fs::remove(dump);
        Run r =
            run(QStringLiteral(ROUTESCOPE_CLI), {"dump", "--checkpoint", QString::fromStdString(ck),
                                                 "--data", QString::fromStdString(text), "--dtype",
                                                 "f32", "--out", QString::fromStdString(dump)});
        QVERIFY2(r.code == 0, r.err.c_str());
        r = run(
            QStringLiteral(ROUTESCOPE_PYTHON),
            {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/io/check_imported_dump.py"),
             QString::fromStdString(dump), QString::fromStdString(kData + "/bigs_mlm_pytorch")});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QVERIFY2(r.out.find("rows of the dump: 16 (Lmax 16)") != std::string::npos, r.out.c_str());
        const std::string cut = kOut + "/short8.dump.h5";
        fs::remove(cut);
        r = run(QStringLiteral(ROUTESCOPE_CLI), {"dump", "--checkpoint", QString::fromStdString(ck),
                                                 "--data", QString::fromStdString(text), "--length",
                                                 "12", "--out", QString::fromStdString(cut)});
        QVERIFY2(r.code == 0, r.err.c_str());
        H5::H5File f(cut, H5F_ACC_RDONLY);
        hsize_t dims[2] = {0, 0};
        f.openDataSet("data/tokens").getSpace().getSimpleExtentDims(dims);
        QCOMPARE(dims[1], hsize_t{12});
    }

    // The imported tokenizer (vocab.txt beside the PyTorch file, tokenizer.json beside the
    // safetensors file) frames and tokenizes the texts exactly as BERT-uncased does.
    void wordpiece_ids_match_bert_uncased_data() {
        QTest::addColumn<QString>("dir");
        QTest::newRow("vocab.txt") << "bigs_mlm_pytorch";
        QTest::newRow("tokenizer.json") << "bigs_mlm_safetensors";
    }
    void wordpiece_ids_match_bert_uncased() {
        QFETCH(QString, dir);
        QVERIFY(fs::exists(kData + "/" + dir.toStdString() +
                           (dir.endsWith("safetensors") ? "/tokenizer.json" : "/vocab.txt")));
        const std::string out = kOut + "/tok_" + dir.toStdString() + ".ckpt.h5";
        const Run r = import_cli(kData + "/" + dir.toStdString(), out);
        QVERIFY2(r.code == 0, r.err.c_str());
        const Checkpoint ck = read_checkpoint(out);
        QCOMPARE(ck.tokenizer.kind, std::string("wordpiece"));
        const auto tokenizer = data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model);
        const std::string bad = compare_ids(*tokenizer, kData + "/expected_ids.json");
        QVERIFY2(bad.empty(), bad.c_str());
    }

    // A cased vocabulary: the casing comes from tokenizer_config.json beside vocab.txt, or from a
    // tokenizer.json's normalizer; the ids are the cased reference's (capitals and accents kept).
    void cased_wordpiece_ids_match_bert_cased_data() {
        QTest::addColumn<QString>("vocab");
        QTest::newRow("vocab.txt + tokenizer_config.json") << "cased_vocab/vocab.txt";
        QTest::newRow("tokenizer.json") << "cased_json/tokenizer.json";
    }
    void cased_wordpiece_ids_match_bert_cased() {
        QFETCH(QString, vocab);
        const std::string out = kOut + "/cased.ckpt.h5";
        fs::remove(out);
        const Run r = run(QStringLiteral(ROUTESCOPE_CLI),
                          {"import", QString::fromStdString(kData + "/bigs_mlm_pytorch"), "--vocab",
                           QString::fromStdString(kData + "/" + vocab.toStdString()), "--out",
                           QString::fromStdString(out)});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2((r.out + r.err).find("cased WordPiece") != std::string::npos, r.out.c_str());
        const Checkpoint ck = read_checkpoint(out);
        QCOMPARE(ck.tokenizer.kind, std::string("wordpiece_cased"));
        QCOMPARE(ck.config.tokenizer.kind, std::string("wordpiece_cased"));
        const auto tokenizer = data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model);
        std::string wanted;
        const std::string bad =
            compare_ids(*tokenizer, kData + "/expected_ids_cased.json", &wanted);
        QVERIFY2(bad.empty(), bad.c_str());
        int capitals = 0;  // the texts do exercise the cased pieces
        for (const char* p : {"Café ", "Crème ", "The ", "GDP ", "naïve ", "Straße "})
            capitals += wanted.find(p) != std::string::npos;
        QVERIFY(capitals >= 4);

        // The export writes the casing beside vocab.txt, and importing the export reads it back.
        const std::string dir = kOut + "/cased_export";
        fs::remove_all(dir);
        const Run x = run(QStringLiteral(ROUTESCOPE_CLI),
                          {"export", QString::fromStdString(out), "--to", "safetensors", "--out",
                           QString::fromStdString(dir)});
        QVERIFY2(x.code == 0, x.err.c_str());
        std::ifstream cfg(dir + "/tokenizer_config.json");
        QCOMPARE(nlohmann::json::parse(cfg).at("do_lower_case"), nlohmann::json(false));
        const std::string back = kOut + "/cased_back.ckpt.h5";
        fs::remove(back);
        const Run b = import_cli(dir, back);
        QVERIFY2(b.code == 0, b.err.c_str());
        QCOMPARE(read_checkpoint(back).tokenizer.kind, std::string("wordpiece_cased"));
    }

    // A vocab.txt with nothing beside it that says cased is read uncased, as transformers'
    // BertTokenizer reads it (do_lower_case defaults to true), and the import says that its
    // capitalised pieces can never be produced.
    void bare_cased_vocab_is_uncased_with_a_note() {
        const std::string out = kOut + "/bare.ckpt.h5";
        fs::remove(out);
        const Run r = run(QStringLiteral(ROUTESCOPE_CLI),
                          {"import", QString::fromStdString(kData + "/bigs_mlm_pytorch"), "--vocab",
                           QString::fromStdString(kData + "/cased_bare/vocab.txt"), "--out",
                           QString::fromStdString(out)});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2((r.out + r.err).find("capital letters") != std::string::npos, r.out.c_str());
        QVERIFY2((r.out + r.err).find("do_lower_case") != std::string::npos, r.out.c_str());
        QCOMPARE(read_checkpoint(out).tokenizer.kind, std::string("wordpiece"));
    }

    // Accents stripped while case is kept is no BERT tokenizer the engine has: refused, naming
    // the file and the key.
    void cased_vocab_with_accent_stripping_is_refused() {
        const std::string out = kOut + "/stripping.ckpt.h5";
        const std::string cfg = kData + "/cased_stripping/tokenizer_config.json";
        const Run r = run(QStringLiteral(ROUTESCOPE_CLI),
                          {"import", QString::fromStdString(kData + "/bigs_mlm_pytorch"), "--vocab",
                           QString::fromStdString(kData + "/cased_stripping/vocab.txt"), "--out",
                           QString::fromStdString(out)});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find(cfg) != std::string::npos, r.err.c_str());
        QVERIFY2(r.err.find("strip_accents") != std::string::npos, r.err.c_str());
        QVERIFY(!fs::exists(out));
    }

    // A tokenizer.json that is not BERT's WordPiece (uncased or cased) would tokenize differently
    // from the engine's: refused naming the file and the key, nothing written.
    void tokenizer_json_that_is_not_bert_uncased_is_refused_data() {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("key");
        QTest::newRow("cased, accents stripped") << "cased_stripping"
                                                 << "normalizer.strip_accents";
        QTest::newRow("accents kept") << "strip_accents_false"
                                      << "normalizer.strip_accents";
        QTest::newRow("no CJK split") << "chinese_false"
                                      << "normalizer.handle_chinese_chars";
        QTest::newRow("prefix") << "prefix"
                                << "model.continuing_subword_prefix";
        QTest::newRow("word limit") << "max_chars"
                                    << "model.max_input_chars_per_word";
        QTest::newRow("no normalizer") << "normalizer_null"
                                       << "normalizer: null";
        QTest::newRow("no pre-tokenizer") << "pre_tokenizer_null"
                                          << "pre_tokenizer: null";
    }

    // tokenizer_config.json beside vocab.txt: transformers' arguments that change ids are refused
    // naming the file and the key; BERT's own piece as an AddedToken object is accepted.
    void tokenizer_config_that_changes_ids_is_refused_data() {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("key");
        QTest::newRow("unk_token") << "unk_unused0"
                                   << "unk_token";
        QTest::newRow("do_basic_tokenize") << "no_basic"
                                           << "do_basic_tokenize";
        QTest::newRow("AddedToken [UNK]") << "added_token_ok"
                                          << "";
    }
    void tokenizer_config_that_changes_ids_is_refused() {
        QFETCH(QString, variant);
        QFETCH(QString, key);
        const std::string out = kOut + "/config-" + variant.toStdString() + ".ckpt.h5";
        const std::string dir = kData + "/bad_config/" + variant.toStdString();
        fs::remove(out);
        const Run r =
            run(QStringLiteral(ROUTESCOPE_CLI),
                {"import", QString::fromStdString(kData + "/bigs_mlm_pytorch"), "--vocab",
                 QString::fromStdString(dir + "/vocab.txt"), "--out", QString::fromStdString(out)});
        if (key.isEmpty()) {
            QVERIFY2(r.code == 0, r.err.c_str());
            return;
        }
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find(dir + "/tokenizer_config.json") != std::string::npos, r.err.c_str());
        QVERIFY2(r.err.find(key.toStdString()) != std::string::npos, r.err.c_str());
        QVERIFY(!fs::exists(out));
    }
    void tokenizer_json_that_is_not_bert_uncased_is_refused() {
        QFETCH(QString, variant);
        QFETCH(QString, key);
        const std::string out = kOut + "/refused.ckpt.h5";
        const std::string json =
            kData + "/bad_tokenizer/" + variant.toStdString() + "/tokenizer.json";
        const Run r =
            run(QStringLiteral(ROUTESCOPE_CLI),
                {"import", QString::fromStdString(kData + "/bigs_mlm_safetensors"), "--vocab",
                 QString::fromStdString(json), "--out", QString::fromStdString(out)});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find(json) != std::string::npos, r.err.c_str());
        QVERIFY2(r.err.find(key.toStdString()) != std::string::npos, r.err.c_str());
        QVERIFY(!fs::exists(out));
    }
};

QTEST_GUILESS_MAIN(TestImportParity)
#include "test_import_parity.moc"
