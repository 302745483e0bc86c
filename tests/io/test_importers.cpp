// The importers (engine/io/importers): the three weight-file readers against values written by
// Python (tests/io/make_import_fixtures.py), the BiGS name map end to end through
// `routescope-cli import` (Flax, PyTorch and safetensors of one model give the same checkpoint,
// equal to the engine-named tensors the fixture computed), and bad input: each a clear error
// naming the file and the tensor or key, exit 2, nothing written under --out.
#include <H5Cpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QProcess>
#include <QtTest>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/importers/tensor_file.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/models/model.hpp"
#include "engine/train/run_inputs.hpp"
#include "tests/process_run.hpp"

namespace fs = std::filesystem;
using namespace routescope;
using namespace routescope::importers;

namespace {

const std::string kData = ROUTESCOPE_TEST_DATA "/importers";
const std::string kOut = ROUTESCOPE_TEST_DATA "/importers-out";

using test_support::Run;
Run run(const QString& program, const QStringList& args) {
    return test_support::run_process(program, args, 120000);
}

Run import_cli(const std::vector<std::string>& args) {
    QStringList a{"import"};
    for (const auto& s : args)
        a << QString::fromStdString(s);
    return run(QStringLiteral(ROUTESCOPE_CLI), a);
}

template <class T>
std::vector<T> read_h5(const std::string& path, const std::string& name) {
    H5::H5File f(path, H5F_ACC_RDONLY);
    H5::DataSet ds = f.openDataSet(name);
    std::vector<T> v(static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints()));
    ds.read(v.data(), std::is_same_v<T, float>    ? H5::PredType::NATIVE_FLOAT
                      : std::is_same_v<T, double> ? H5::PredType::NATIVE_DOUBLE
                                                  : H5::PredType::NATIVE_INT32);
    return v;
}

// The engine's logits of `ck` on the batch of `expected` (an h5 with input_ids, token_type_ids,
// lengths [B, L]), MLM or classification, and max|engine − ref| / max|ref| against `dataset`.
double logit_error(const Checkpoint& ck, const std::string& expected, const std::string& dataset,
                   bool classify) {
    const auto ids = read_h5<std::int32_t>(expected, "input_ids");
    const auto types = read_h5<std::int32_t>(expected, "token_type_ids");
    const auto lengths = read_h5<std::int32_t>(expected, "lengths");
    const auto want = read_h5<double>(expected, dataset);
    const int B = static_cast<int>(lengths.size());
    const int L = static_cast<int>(ids.size()) / B;
    models::Model model(ck.config, B, L, 1);
    std::copy(ck.params.begin(), ck.params.end(), model.params().data());
    std::vector<std::int32_t> labels(ids.size(), -100), class_labels(std::size_t(B), 0);
    labels[0] = ids[0];
    models::Batch batch;
    batch.tokens = ids.data();
    batch.types = types.data();
    batch.lengths = lengths.data();
    (classify ? batch.class_labels : batch.labels) = classify ? class_labels.data() : labels.data();
    model.forward(batch, /*training=*/false);
    if (static_cast<std::size_t>(model.logits_size()) != want.size()) return 1e9;
    double err = 0, scale = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        err = std::max(err, std::fabs(double(model.logits()[i]) - want[i]));
        scale = std::max(scale, std::fabs(want[i]));
    }
    return err / scale;
}

std::string read_error(const std::string& path, const std::string& format = "auto") {
    try {
        read_tensor_file(path, format);
    } catch (const FormatError& e) {
        return e.what();
    }
    return "";
}

// `ck` (its configuration edited) written to `path` as a checkpoint of its own.
void rewrite_checkpoint(const std::string& path, const Checkpoint& ck) {
    ParamStore store;
    for (const auto& e : ck.layout)
        store.add(e.name, e.shape);
    store.allocate();
    std::copy(ck.params.begin(), ck.params.end(), store.data());
    write_checkpoint(path, ck.config, store, ck.tokenizer);
}

}  // namespace

class TestImporters : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        fs::remove_all(kData);
        fs::remove_all(kOut);
        fs::create_directories(kOut);
        const Run r =
            run(QStringLiteral(ROUTESCOPE_PYTHON),
                {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/io/make_import_fixtures.py"),
                 QString::fromStdString(kData)});
        QVERIFY2(r.code == 0, r.err.c_str());
    }

    // Every float16 bit pattern against the definition: (-1)^s 2^(e-15) (1 + m/1024), subnormals
    // 2^-14 m/1024; bfloat16 is the top half of a float32.
    void half_and_bfloat16_conversion() {
        for (std::uint32_t h = 0; h < 65536; ++h) {
            const int e = (h >> 10) & 31, m = h & 1023;
            const double sign = (h & 0x8000) ? -1 : 1;
            const float got = half_to_float(static_cast<std::uint16_t>(h));
            if (e == 31) {
                QVERIFY(m ? std::isnan(got) : std::isinf(got) && (got < 0) == (sign < 0));
                continue;
            }
            const double want =
                e == 0 ? sign * std::ldexp(m, -24) : sign * std::ldexp(1024 + m, e - 25);
            QCOMPARE(static_cast<double>(got), want);
            QCOMPARE(std::signbit(got), sign < 0);
        }
        QCOMPARE(bfloat16_to_float(0x3f80), 1.0f);
        QCOMPARE(bfloat16_to_float(0xc040), -3.0f);
    }

    // The three readers give the values Python wrote, in float32, float16 and bfloat16; PyTorch
    // views (a transpose, a slice with an offset, an expanded row, an unfold whose strides overlap:
    // more elements than its storage) are gathered through their strides, as torch.load gives
    // them. py2.legacy.bin: the legacy format as Python 2.7 pickled it (str as SHORT_BINSTRING,
    // OrderedDict from [key, value] pairs), which torch.load reads.
    void readers_give_the_written_values_data() {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("ext");
        for (const char* dt : {"float32", "float16", "bfloat16", "float64"})
            for (const char* ext :
                 {"msgpack", "safetensors", "bin", "legacy.bin", "py2.legacy.bin"})
                QTest::newRow((std::string(dt) + "." + ext).c_str()) << dt << ext;
    }
    void readers_give_the_written_values() {
        QFETCH(QString, dtype);
        QFETCH(QString, ext);
        std::ifstream in(kData + "/readers/expected.json");
        const auto expected = nlohmann::json::parse(in)[dtype.toStdString()];
        const std::string path =
            kData + "/readers/" + dtype.toStdString() + "." + ext.toStdString();
        const TensorFile file = read_tensor_file(path);
        const bool flax = ext == "msgpack";
        const bool torch = ext.endsWith(QStringLiteral("bin"));
        QCOMPARE(QString::fromStdString(file.format), flax    ? QStringLiteral("flax")
                                                      : torch ? QStringLiteral("pytorch")
                                                              : QStringLiteral("safetensors"));
        std::size_t checked = 0;
        for (const auto& [name, want] : expected.items()) {
            const bool view = name.rfind("view", 0) == 0;
            if (view && !torch) continue;
            const NamedTensor* t = file.find(flax ? "group/" + name : name);
            QVERIFY2(t, name.c_str());
            QCOMPARE(t->dtype, dtype.toStdString());
            QCOMPARE(t->shape, want["shape"].get<std::vector<std::int64_t>>());
            const auto values = want["values"].get<std::vector<double>>();
            QCOMPARE(t->data.size(), values.size());
            for (std::size_t i = 0; i < values.size(); ++i) {
                QCOMPARE(static_cast<double>(t->data[i]), values[i]);
                QCOMPARE(std::signbit(t->data[i]), std::signbit(values[i]));
            }
            ++checked;
        }
        QCOMPARE(file.tensors.size(), checked);
    }

    // Flax, PyTorch and safetensors files of one model import to the same checkpoint, bit for
    // bit, and that checkpoint holds the engine-named tensors the fixture computed.
    void three_formats_import_to_identical_checkpoints() {
        std::vector<Checkpoint> cks;
        // pytorch_legacy: torch.save(..., _use_new_zipfile_serialization=False), the format of
        // torch before 1.6 and of most BERT checkpoints of 2018–2020.
        // safetensors_f64: float64 storage, rounded to float32 with a note.
        // pytorch_legacy_p3/_p4: the same with pickle_protocol=3 and 4 (torch loads them; the
        // magic number's pickle starts differently and was taken for msgpack).
        // vocab_bom: safetensors beside a vocab.txt that starts with a UTF-8 byte-order mark,
        // which made its first piece "\ufeff[PAD]": the same tokenizer, with a note.
        // pytorch_legacy_py2: the legacy format written under Python 2.7 (torch <= 1.4), which
        // torch.load reads; it was refused ("persistent id is not ('storage', ...)").
        for (const char* dir :
             {"flax", "pytorch", "safetensors", "pytorch_legacy", "safetensors_f64",
              "pytorch_legacy_p3", "pytorch_legacy_p4", "vocab_bom", "pytorch_legacy_py2"}) {
            const std::string out = kOut + "/" + dir + ".ckpt.h5";
            const Run r = import_cli({kData + "/bigs_" + dir, "--out", out});
            QVERIFY2(r.code == 0, r.err.c_str());
            const std::string format = std::string(dir) == "vocab_bom"
                                           ? "safetensors"
                                           : std::string(dir).substr(0, std::string(dir).find('_'));
            if (std::string(dir) == "safetensors_f64")
                QVERIFY2(r.err.find("stored as float64") != std::string::npos, r.err.c_str());
            if (std::string(dir) == "vocab_bom")
                QVERIFY2(r.err.find("byte-order mark") != std::string::npos, r.err.c_str());
            QVERIFY(r.out.find("(" + format + ", sha256 ") != std::string::npos);
            cks.push_back(read_checkpoint(out));
            H5::H5File f(out, H5F_ACC_RDONLY);
            QVERIFY(f.attrExists("import_sha256"));
            std::string sha;
            H5::Attribute a = f.openAttribute("import_sha256");
            a.read(a.getStrType(), sha);
            QCOMPARE(sha.size(), std::size_t{64});
        }
        for (std::size_t k = 1; k < cks.size(); ++k) {
            QCOMPARE(cks[k].config.to_json_text(), cks[0].config.to_json_text());
            QCOMPARE(cks[k].params.size(), cks[0].params.size());
            QVERIFY(std::memcmp(cks[k].params.data(), cks[0].params.data(),
                                cks[0].params.size() * sizeof(float)) == 0);
            QVERIFY(cks[k].tokenizer.model == cks[0].tokenizer.model);
        }
        const Checkpoint& ck = cks[0];
        QCOMPARE(ck.config.model.arch, std::string("bigs"));
        QCOMPARE(ck.config.model.d_model, 8);
        QCOMPARE(ck.config.model.inner(), 12);
        QCOMPARE(ck.config.model.ssm.n_modes, 4);
        QCOMPARE(ck.config.model.max_len, 16);
        QVERIFY(ck.config.model.type_embeddings);
        QCOMPARE(ck.config.model.block_gelu, std::string("tanh"));
        QCOMPARE(ck.tokenizer.kind, std::string("wordpiece"));
        H5::H5File expected(kData + "/bigs_expected.h5", H5F_ACC_RDONLY);
        QCOMPARE(static_cast<std::size_t>(expected.getNumObjs()), ck.layout.size());
        for (const auto& e : ck.layout) {
            H5::DataSet ds = expected.openDataSet(e.name);
            std::vector<float> want(e.size);
            ds.read(want.data(), H5::PredType::NATIVE_FLOAT);
            std::vector<hsize_t> dims(
                static_cast<std::size_t>(ds.getSpace().getSimpleExtentNdims()));
            ds.getSpace().getSimpleExtentDims(dims.data());
            QCOMPARE(std::vector<std::int64_t>(dims.begin(), dims.end()), e.shape);
            QVERIFY2(std::memcmp(want.data(), ck.params.data() + e.offset, e.size * 4) == 0,
                     e.name.c_str());
        }
    }

    // A BertModel saved on its own (no "bert." prefix, no head; PyTorch and Flax) imports as an
    // encoder: its parameters are the pretraining checkpoint's encoder, bit for bit, it has no
    // head, and it dumps the same hidden states as that checkpoint does.
    void base_model_imports_as_an_encoder_data() {
        QTest::addColumn<QString>("dir");
        QTest::newRow("pytorch") << "bert_base_model";
        QTest::newRow("flax") << "bert_base_model_flax";
    }
    void base_model_imports_as_an_encoder() {
        QFETCH(QString, dir);
        const std::string pre_out = kOut + "/pretraining.ckpt.h5";
        QVERIFY(import_cli({kData + "/bert_pretraining", "--out", pre_out}).code == 0);
        const std::string out = kOut + "/" + dir.toStdString() + ".ckpt.h5";
        const Run r = import_cli({kData + "/" + dir.toStdString(), "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.err.find("a base model's names") != std::string::npos, r.err.c_str());
        QVERIFY2(r.err.find("an encoder (model.mlm_head = false, model.n_labels = 0)") !=
                     std::string::npos,
                 r.err.c_str());
        QVERIFY2(
            r.err.find(dir == "bert_base_model" ? "bert.pooler.dense.weight"
                                                : "bert/pooler/dense/kernel") != std::string::npos,
            r.err.c_str());
        const Checkpoint base = read_checkpoint(out);
        const Checkpoint pre = read_checkpoint(pre_out);
        QVERIFY(!base.config.model.mlm_head);
        QCOMPARE(base.config.model.n_labels, 0);
        std::size_t compared = 0;
        for (const auto& e : base.layout) {
            const auto it = std::find_if(pre.layout.begin(), pre.layout.end(),
                                         [&](const ParamEntry& p) { return p.name == e.name; });
            QVERIFY2(it != pre.layout.end(), e.name.c_str());
            QVERIFY2(std::memcmp(base.params.data() + e.offset, pre.params.data() + it->offset,
                                 e.size * sizeof(float)) == 0,
                     e.name.c_str());
            ++compared;
        }
        QVERIFY(compared > 0 && compared < pre.layout.size());  // the encoder, not the MLM head
        const std::string texts = kOut + "/base_texts.jsonl";
        std::ofstream(texts) << "{\"text\": \"the cat sat on the mat\"}\n{\"text\": \"a dog\"}\n";
        std::vector<std::vector<float>> hidden;
        for (const std::string& ck : {out, pre_out}) {
            const std::string dump = ck + ".dump.h5";
            fs::remove(dump);
            const Run d = run(QStringLiteral(ROUTESCOPE_CLI),
                              {"dump", "--checkpoint", QString::fromStdString(ck), "--data",
                               QString::fromStdString(texts), "--out", QString::fromStdString(dump),
                               "--no-check"});
            QVERIFY2(d.code == 0, d.err.c_str());
            hidden.push_back(read_h5<float>(dump, "/layers/2/hidden"));
        }
        QVERIFY(!hidden[0].empty());
        QVERIFY(hidden[0] == hidden[1]);
        // MLM evaluation of an encoder is refused naming the key.
        const std::string corpus = kOut + "/base_corpus.txt";
        std::ofstream(corpus) << "the cat sat on the mat\na dog ran far\n";
        const Run e = run(QStringLiteral(ROUTESCOPE_CLI),
                          {"eval", "--checkpoint", QString::fromStdString(out), "--data",
                           QString::fromStdString(corpus)});
        QVERIFY2(e.code != 0 && e.err.find("model.mlm_head") != std::string::npos, e.err.c_str());
    }

    // A classifier whose config.json has no id2label (transformers leaves default names out) or
    // only the LABEL_<i> placeholders gets the class indices as labels, so integer-labelled data
    // (GLUE's TSVs, Hugging Face exports) is scored against the right outputs.
    void classifierLabelsDefaultToClassIndices_data() {
        QTest::addColumn<QString>("dir");
        QTest::newRow("no id2label") << "bert_cls_no_id2label";
        QTest::newRow("LABEL_i placeholders") << "bert_cls_placeholder_labels";
    }
    void classifierLabelsDefaultToClassIndices() {
        QFETCH(QString, dir);
        const std::string out = kOut + "/" + dir.toStdString() + ".ckpt.h5";
        const Run r = import_cli({kData + "/" + dir.toStdString(), "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.err.find("the labels are the class indices 0..2") != std::string::npos,
                 r.err.c_str());
        const Checkpoint ck = read_checkpoint(out);
        QVERIFY(ck.config.data.labels ==
                std::optional<std::vector<std::string>>({{"0", "1", "2"}}));
        const std::string data = kOut + "/indices.tsv";
        std::ofstream(data) << "sentence\tlabel\nthe cat sat\t2\na dog\t0\n";
        const std::string preds = kOut + "/" + dir.toStdString() + ".preds.jsonl";
        const Run e = run(QStringLiteral(ROUTESCOPE_CLI),
                          {"eval", "--checkpoint", QString::fromStdString(out), "--data",
                           QString::fromStdString(data), "--out", QString::fromStdString(preds)});
        QVERIFY2(e.code == 0, e.err.c_str());
        QVERIFY(fs::exists(preds));
    }

    // A sharded checkpoint (save_pretrained past max_shard_size: <name>.index.json and three
    // shards) imports to the same checkpoint as the unsharded file, in each format, from its
    // directory and from the index given as SRC; the provenance records each shard's SHA-256,
    // checked against sha256sum.
    void sharded_checkpoints_import_as_one_file_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("index");
        QTest::newRow("safetensors") << "safetensors"
                                     << "model.safetensors.index.json";
        QTest::newRow("pytorch") << "pytorch"
                                 << "pytorch_model.bin.index.json";
        QTest::newRow("flax") << "flax"
                              << "flax_model.msgpack.index.json";
    }
    void sharded_checkpoints_import_as_one_file() {
        QFETCH(QString, format);
        QFETCH(QString, index);
        const std::string f = format.toStdString();
        const std::string whole = kOut + "/unsharded_" + f + ".ckpt.h5";
        QVERIFY(import_cli({kData + "/bigs_" + f, "--out", whole}).code == 0);
        const Checkpoint want = read_checkpoint(whole);
        const std::string dir = kData + "/bigs_sharded_" + f;
        for (const std::string& src : {dir, dir + "/" + index.toStdString()}) {
            const std::string out = kOut + "/sharded_" + f + ".ckpt.h5";
            fs::remove(out);
            const Run r = import_cli({src, "--out", out, "--vocab", dir + "/vocab.txt"});
            QVERIFY2(r.code == 0, r.err.c_str());
            QVERIFY2(r.out.find("(3 shards) (" + f + ", sha256 ") != std::string::npos,
                     r.out.c_str());
            const Checkpoint got = read_checkpoint(out);
            QCOMPARE(got.config.to_json_text(), want.config.to_json_text());
            QCOMPARE(got.params.size(), want.params.size());
            QVERIFY(std::memcmp(got.params.data(), want.params.data(),
                                want.params.size() * sizeof(float)) == 0);
            H5::H5File file(out, H5F_ACC_RDONLY);
            H5::Attribute a = file.openAttribute("import_shards_sha256");
            std::string text;
            a.read(a.getStrType(), text);
            const auto shards = nlohmann::json::parse(text);
            QCOMPARE(shards.size(), std::size_t{3});
            for (const auto& [name, sha] : shards.items()) {
                const Run sum = run("sha256sum", {QString::fromStdString(dir + "/" + name)});
                QCOMPARE(sum.out.substr(0, 64), sha.get<std::string>());
            }
        }
    }

    // BiGSForMaskedLM with the official PyTorch port's full state_dict (tests/io/official_keys.py,
    // written from BiGS/modeling_bigs.py): the position_ids buffer, the pooler BiGSModel always
    // creates and the tied decoder; and FlaxBiGSForPreTraining's parameters (the Flax port, with
    // its pooler and next-sentence head). Each imports to the same parameters as the engine-named
    // fixture; the unused modules are left out with a note naming each tensor.
    void bigs_official_key_set_imports_data() {
        QTest::addColumn<QString>("format");
        QTest::newRow("pytorch") << "pytorch";
        QTest::newRow("safetensors") << "safetensors";
        QTest::newRow("flax (FlaxBiGSForPreTraining)") << "flax_pretraining";
    }
    void bigs_official_key_set_imports() {
        QFETCH(QString, format);
        const std::string out = kOut + "/official_" + format.toStdString() + ".ckpt.h5";
        const Run r = import_cli({kData + "/bigs_official_" + format.toStdString(), "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        const std::vector<const char*> notes =
            format == "flax_pretraining"
                ? std::vector<const char*>{"s4_bert/pooler/dense/kernel [8, 8]: not imported",
                                           "s4_bert/pooler/dense/bias [8]: not imported",
                                           "cls/seq_relationship/kernel [8, 2]: not imported",
                                           "cls/seq_relationship/bias [2]: not imported"}
                : std::vector<const char*>{"bigs.pooler.dense.weight [8, 8]: not imported",
                                           "bigs.pooler.dense.bias [8]: not imported"};
        for (const char* note : notes)
            QVERIFY2(r.err.find(note) != std::string::npos, r.err.c_str());
        const Checkpoint ck = read_checkpoint(out);
        QVERIFY(ck.config.model.mlm_head);
        H5::H5File expected(kData + "/bigs_expected.h5", H5F_ACC_RDONLY);
        QCOMPARE(static_cast<std::size_t>(expected.getNumObjs()), ck.layout.size());
        for (const auto& e : ck.layout) {
            std::vector<float> want(e.size);
            expected.openDataSet(e.name).read(want.data(), H5::PredType::NATIVE_FLOAT);
            QVERIFY2(std::memcmp(want.data(), ck.params.data() + e.offset, e.size * 4) == 0,
                     e.name.c_str());
        }
    }

    // A Hugging Face BERT (post-LN, learned positions, token types, gelu_erf, [CLS] pooler) in
    // PyTorch, safetensors and Flax, each file holding the key set tests/io/official_keys.py reads
    // from transformers' code (old gamma/beta names too): the engine's logits on a padded batch
    // match tests/reference/hf_bert.py (transformers' semantics, float64) within 1e-4 relative,
    // for BertForMaskedLM, BertForPreTraining (pooler and next-sentence head left out with a
    // note) and BertForSequenceClassification; and for the MLM weights beside Google's original
    // bert_config.json.
    void bert_logits_match_the_published_semantics_data() {
        QTest::addColumn<QString>("dir");
        QTest::addColumn<bool>("classify");
        QTest::newRow("mlm pytorch") << "bert_mlm_pytorch" << false;
        QTest::newRow("mlm safetensors") << "bert_mlm_safetensors" << false;
        // The MLM bias under its tied alias (cls.predictions.decoder.bias) alone.
        QTest::newRow("mlm safetensors, decoder bias alias")
            << "bert_mlm_decoder_bias_alias" << false;
        QTest::newRow("mlm gamma/beta") << "bert_mlm_gamma" << false;
        QTest::newRow("mlm pretraining") << "bert_pretraining" << false;
        QTest::newRow("mlm pretraining safetensors") << "bert_pretraining_safetensors" << false;
        QTest::newRow("mlm flax") << "bert_mlm_flax" << false;
        // Google's bert_config.json (no model_type) beside the converted pytorch_model.bin.
        QTest::newRow("mlm, Google's bert_config.json") << "bert_google_config" << false;
        QTest::newRow("mlm pretraining flax") << "bert_pretraining_flax" << false;
        QTest::newRow("cls pytorch") << "bert_cls_pytorch" << true;
        QTest::newRow("cls safetensors") << "bert_cls_safetensors" << true;
        QTest::newRow("cls flax") << "bert_cls_flax" << true;
    }
    void bert_logits_match_the_published_semantics() {
        QFETCH(QString, dir);
        QFETCH(bool, classify);
        const std::string out = kOut + "/" + dir.toStdString() + ".ckpt.h5";
        const Run r = import_cli({kData + "/" + dir.toStdString(), "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        const Checkpoint ck = read_checkpoint(out);
        QCOMPARE(ck.config.model.arch, std::string("bert"));
        QCOMPARE(ck.config.model.norm_position, std::string("post"));
        QCOMPARE(ck.config.model.pool, std::string("first"));
        QCOMPARE(ck.config.model.mlm_head, !classify);
        QCOMPARE(ck.config.model.n_labels, classify ? 3 : 0);
        if (classify) {
            QVERIFY(r.err.find("no MLM head") != std::string::npos);
            QCOMPARE(ck.config.data.labels->at(2), std::string("contradiction"));
        }
        if (dir == "bert_pretraining" || dir == "bert_pretraining_safetensors")
            QVERIFY2(
                r.err.find("cls.seq_relationship.weight [2, 8]: not imported") != std::string::npos,
                r.err.c_str());
        if (dir == "bert_pretraining_flax")
            QVERIFY2(
                r.err.find("cls/seq_relationship/kernel [8, 2]: not imported") != std::string::npos,
                r.err.c_str());
        const double err = logit_error(ck, kData + "/bert_expected.h5",
                                       classify ? "cls_logits" : "mlm_logits", classify);
        qDebug("%s: max|engine - ref| / max|ref| = %.3g", dir.toUtf8().constData(), err);
        QVERIFY2(err < 1e-4, std::to_string(err).c_str());
        if (classify) {  // no MLM head: an MLM batch is refused, naming the key
            models::Model model(ck.config, 1, 4, 1);
            std::vector<std::int32_t> ids(4, 5), labels(4, 5), len{4};
            models::Batch b;
            b.tokens = ids.data();
            b.lengths = len.data();
            b.labels = labels.data();
            bool refused = false;
            try {
                model.forward(b, false);
            } catch (const ConfigError& e) {
                refused = std::string(e.what()).find("model.mlm_head") != std::string::npos;
            }
            QVERIFY(refused);
        }
    }

    // A BiGS classification fine-tune (BiGS_*_MNLI: no cls/, pooler + classifier; the PyTorch and
    // safetensors files hold BiGSForSequenceClassification's official key set) imports as a
    // model without the MLM head (model.mlm_head = false, said on stderr), pool = mean (the
    // release's non_padding_mean), every tensor equal to the fixture's.
    void bigs_classification_imports_without_mlm_head_data() {
        QTest::addColumn<QString>("format");
        QTest::newRow("flax") << "flax";
        QTest::newRow("pytorch") << "pytorch";
        QTest::newRow("safetensors") << "safetensors";
    }
    void bigs_classification_imports_without_mlm_head() {
        QFETCH(QString, format);
        const std::string out = kOut + "/bigs_cls_" + format.toStdString() + ".ckpt.h5";
        const Run r = import_cli({kData + "/bigs_cls_" + format.toStdString(), "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY(r.err.find("model.mlm_head = false") != std::string::npos);
        const Checkpoint ck = read_checkpoint(out);
        QVERIFY(!ck.config.model.mlm_head);
        QCOMPARE(ck.config.model.n_labels, 3);
        QCOMPARE(ck.config.model.pool, std::string("mean"));
        QCOMPARE(ck.config.data.labels->at(0), std::string("entailment"));
        H5::H5File expected(kData + "/bigs_cls_expected.h5", H5F_ACC_RDONLY);
        QCOMPARE(static_cast<std::size_t>(expected.getNumObjs()), ck.layout.size());
        for (const auto& e : ck.layout) {
            const auto want = read_h5<float>(kData + "/bigs_cls_expected.h5", e.name);
            QCOMPARE(want.size(), e.size);
            QVERIFY2(std::memcmp(want.data(), ck.params.data() + e.offset, e.size * 4) == 0,
                     e.name.c_str());
        }
    }

    // export writes the import's names (BiGS's official PyTorch port, Hugging Face BERT), and
    // import(export(x)) is x bit for bit: configuration, parameters, vocabulary; Python reads the
    // files (safetensors by numpy, pytorch_model.bin by torch.load(weights_only=True)) into
    // transformers' BERT with the fixture's logits, and the BiGS files equal the official port's
    // state_dict (tests/io/check_export.py).
    void export_round_trips_bit_for_bit() {
        const std::string exports = kOut + "/exports";
        fs::remove_all(exports);
        fs::create_directories(exports);
        const std::vector<std::pair<std::string, std::string>> sources = {
            {"bigs", "bigs_flax"},
            {"bert_mlm", "bert_mlm_pytorch"},
            {"bert_cls", "bert_cls_pytorch"}};
        for (const auto& [name, dir] : sources) {
            const std::string x = exports + "/" + name + ".ckpt.h5";
            Run r = import_cli({kData + "/" + dir, "--out", x});
            QVERIFY2(r.code == 0, r.err.c_str());
            const Checkpoint original = read_checkpoint(x);
            for (const char* to : {"safetensors", "pytorch"}) {
                const std::string out = exports + "/" + name + "_" + to;
                r = run(QStringLiteral(ROUTESCOPE_CLI),
                        {"export", QString::fromStdString(x), "--to", to, "--out",
                         QString::fromStdString(out)});
                QVERIFY2(r.code == 0, r.err.c_str());
                QVERIFY(fs::exists(out + "/config.json") && fs::exists(out + "/vocab.txt"));
                const std::string back = out + ".ckpt.h5";
                r = import_cli({out, "--out", back});
                QVERIFY2(r.code == 0, r.err.c_str());
                const Checkpoint ck = read_checkpoint(back);
                QCOMPARE(ck.config.to_json_text(), original.config.to_json_text());
                QCOMPARE(ck.params.size(), original.params.size());
                QVERIFY2(std::memcmp(ck.params.data(), original.params.data(),
                                     ck.params.size() * sizeof(float)) == 0,
                         (name + " " + to).c_str());
                QVERIFY(ck.tokenizer.model == original.tokenizer.model);
            }
        }
        const Run py = run(QStringLiteral(ROUTESCOPE_PYTHON),
                           {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/io/check_export.py"),
                            QString::fromStdString(kData), QString::fromStdString(exports)});
        qDebug("%s", py.out.c_str());
        QVERIFY2(py.code == 0, (py.out + py.err).c_str());
    }

    // A BiGS trained without type embeddings is exported with the release's token type table as
    // zeros (it adds nothing): the files hold exactly the official port's names, which a strict
    // load needs (tests/io/check_export.py --bigs-without-types); re-imported, the model has a
    // zero table and every other parameter bit for bit.
    void export_of_a_bigs_without_type_embeddings_has_the_official_names() {
        const std::string dir = kOut + "/no-types";
        fs::remove_all(dir);
        fs::create_directories(dir);
        const std::string x = dir + "/bigs.ckpt.h5";
        QCOMPARE(import_cli({kData + "/bigs_flax", "--out", x}).code, 0);
        const Checkpoint ck = read_checkpoint(x);
        QVERIFY(ck.config.model.type_embeddings);
        RunConfig config = ck.config;
        config.model.type_embeddings = false;
        ParamStore store;
        for (const auto& e : ck.layout)
            if (e.name != "embeddings.type.weight") store.add(e.name, e.shape);
        store.allocate();
        for (const auto& e : ck.layout)
            if (e.name != "embeddings.type.weight")
                std::copy_n(ck.params.data() + e.offset, e.size, store.param(e.name));
        const std::string untyped = dir + "/untyped.ckpt.h5";
        write_checkpoint(untyped, config, store, ck.tokenizer);
        for (const char* to : {"safetensors", "pytorch"}) {
            const std::string out = dir + "/bigs_" + to;
            Run r = run(QStringLiteral(ROUTESCOPE_CLI),
                        {"export", QString::fromStdString(untyped), "--to", to, "--out",
                         QString::fromStdString(out)});
            QVERIFY2(r.code == 0, r.err.c_str());
            const std::string back = out + ".ckpt.h5";
            r = import_cli({out, "--out", back});
            QVERIFY2(r.code == 0, r.err.c_str());
            const Checkpoint again = read_checkpoint(back);
            QVERIFY(again.config.model.type_embeddings);
            for (const auto& e : again.layout) {
                const float* got = again.params.data() + e.offset;
                if (e.name == "embeddings.type.weight") {
                    QVERIFY(std::all_of(got, got + e.size, [](float v) { return v == 0.0f; }));
                    continue;
                }
                const auto it = std::find_if(ck.layout.begin(), ck.layout.end(),
                                             [&](const auto& o) { return o.name == e.name; });
                QVERIFY2(it != ck.layout.end(), e.name.c_str());
                QVERIFY2(std::memcmp(got, ck.params.data() + it->offset, e.size * 4) == 0,
                         e.name.c_str());
            }
        }
        const Run py = run(
            QStringLiteral(ROUTESCOPE_PYTHON),
            {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/io/check_export.py"),
             "--bigs-without-types", QString::fromStdString(kData), QString::fromStdString(dir)});
        qDebug("%s", py.out.c_str());
        QVERIFY2(py.code == 0, (py.out + py.err).c_str());
    }

    // A bert whose sentence vectors are means (model.pool = mean, the engine's default for a
    // trained encoder) exports with pooler_type "non_padding_mean", a key transformers ignores,
    // and comes back with pool = mean: its dumps' sentence vectors stay the same. A BERT
    // classifier's pooler reads [CLS], so config.json saying otherwise is refused.
    void export_keeps_a_bert_encoders_mean_pool() {
        const std::string dir = kOut + "/mean-pool";
        fs::remove_all(dir);
        fs::create_directories(dir);
        const std::string x = dir + "/x.ckpt.h5";
        QCOMPARE(import_cli({kData + "/bert_mlm_pytorch", "--out", x}).code, 0);
        Checkpoint ck = read_checkpoint(x);
        QCOMPARE(ck.config.model.pool, std::string("first"));
        ck.config.model.pool = "mean";
        const std::string mean = dir + "/mean.ckpt.h5";
        rewrite_checkpoint(mean, ck);
        for (const char* to : {"safetensors", "pytorch"}) {
            const std::string out = dir + "/" + to;
            Run r =
                run(QStringLiteral(ROUTESCOPE_CLI), {"export", QString::fromStdString(mean), "--to",
                                                     to, "--out", QString::fromStdString(out)});
            QVERIFY2(r.code == 0, r.err.c_str());
            const std::string back = out + ".ckpt.h5";
            r = import_cli({out, "--out", back});
            QVERIFY2(r.code == 0, r.err.c_str());
            QCOMPARE(read_checkpoint(back).config.to_json_text(), ck.config.to_json_text());
        }
        const std::string cls = dir + "/cls";
        fs::copy(kData + "/bert_cls_pytorch", cls);
        nlohmann::json config;
        std::ifstream(cls + "/config.json") >> config;
        config["pooler_type"] = "non_padding_mean";
        std::ofstream(cls + "/config.json") << config.dump();
        const Run r = import_cli({cls, "--out", dir + "/cls.ckpt.h5"});
        QVERIFY2(r.code == 2 && r.err.find("pooler_type: 'non_padding_mean'") != std::string::npos,
                 r.err.c_str());
        QVERIFY(!fs::exists(dir + "/cls.ckpt.h5"));
        // Google's BERT configs (bert-base-chinese, the multilingual models, bert_config.json)
        // carry "pooler_type": "first_token_transform", which transformers does not read: [CLS].
        const std::string google = dir + "/google";
        fs::copy(kData + "/bert_mlm_pytorch", google);
        std::ifstream(google + "/config.json") >> config;
        config["pooler_type"] = "first_token_transform";
        std::ofstream(google + "/config.json") << config.dump();
        const Run g = import_cli({google, "--out", dir + "/google.ckpt.h5"});
        QVERIFY2(g.code == 0, g.err.c_str());
        QCOMPARE(read_checkpoint(dir + "/google.ckpt.h5").config.model.pool, std::string("first"));
    }

    // A model without a published layout (a pre-norm bert) is refused naming the key, and an
    // --out that holds something is never overwritten: exit 2, nothing written.
    void export_refuses() {
        const std::string dir = kOut + "/refused";
        fs::remove_all(dir);
        fs::create_directories(dir);
        const std::string x = dir + "/x.ckpt.h5";
        QCOMPARE(import_cli({kData + "/bert_mlm_pytorch", "--out", x}).code, 0);
        Checkpoint ck = read_checkpoint(x);
        ck.config.model.norm_position = "pre";
        const std::string pre = dir + "/pre.ckpt.h5";
        rewrite_checkpoint(pre, ck);
        const std::string out = dir + "/out";
        Run r =
            run(QStringLiteral(ROUTESCOPE_CLI), {"export", QString::fromStdString(pre), "--to",
                                                 "pytorch", "--out", QString::fromStdString(out)});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("model.norm_position") != std::string::npos, r.err.c_str());
        QVERIFY(!fs::exists(out));
        fs::create_directories(out);
        std::ofstream(out + "/keep.txt") << "mine";
        r = run(QStringLiteral(ROUTESCOPE_CLI),
                {"export", QString::fromStdString(x), "--to", "safetensors", "--out",
                 QString::fromStdString(out)});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("not an empty directory") != std::string::npos, r.err.c_str());
        QVERIFY(!fs::exists(out + "/config.json"));
        for (const auto& e : fs::directory_iterator(dir))  // no temporary left behind
            QVERIFY2(e.path().filename().string()[0] != '.', e.path().c_str());
        // A killed export's staging folder (".<out>.export-<dead pid>", a partial weights file in
        // it) is removed by the next export of that name.
        const std::string staged = dir + "/.fresh.export-4194305";
        fs::create_directories(staged);
        std::ofstream(staged + "/pytorch_model.bin.part") << "half";
        r = run(QStringLiteral(ROUTESCOPE_CLI),
                {"export", QString::fromStdString(x), "--to", "safetensors", "--out",
                 QString::fromStdString(dir + "/fresh")});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(!fs::exists(staged), "the dead export's staging folder is still there");
        // "DIR/" and "." name a directory as "DIR" does (the staging folder was made inside the
        // target, and the export failed leaving an empty directory).
        r = run(QStringLiteral(ROUTESCOPE_CLI),
                {"export", QString::fromStdString(x), "--to", "safetensors", "--out",
                 QString::fromStdString(dir + "/slash/")});
        QVERIFY2(r.code == 0 && fs::exists(dir + "/slash/model.safetensors"), r.err.c_str());
        fs::create_directories(dir + "/dot");
        QProcess p;
        p.setWorkingDirectory(QString::fromStdString(dir + "/dot"));
        p.start(QStringLiteral(ROUTESCOPE_CLI),
                {"export", QString::fromStdString(fs::absolute(x).string()), "--to", "pytorch",
                 "--out", "."});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0 && fs::exists(dir + "/dot/pytorch_model.bin"),
                 p.readAllStandardError().constData());
        // A symbolic link to an empty directory is written through (the link stays, the
        // directory gets the files); one to a directory that holds something is refused.
        fs::create_directories(dir + "/real");
        fs::create_directory_symlink("real", dir + "/link");
        r = run(QStringLiteral(ROUTESCOPE_CLI),
                {"export", QString::fromStdString(x), "--to", "safetensors", "--out",
                 QString::fromStdString(dir + "/link")});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY(fs::is_symlink(dir + "/link"));
        QVERIFY(fs::exists(dir + "/real/model.safetensors"));
        r = run(QStringLiteral(ROUTESCOPE_CLI),
                {"export", QString::fromStdString(x), "--to", "pytorch", "--out",
                 QString::fromStdString(dir + "/link")});
        QCOMPARE(r.code, 2);
        QVERIFY(fs::is_symlink(dir + "/link") && !fs::exists(dir + "/real/pytorch_model.bin"));
        // A relative link inside a folder reached through another link is read from the folder
        // that holds it, as the kernel reads it: home/runs -> ../real/runs, and there
        // cur -> ../exports/x names real/exports/x (the lexical home/exports/x got the files).
        fs::create_directories(dir + "/lk/real/runs");
        fs::create_directories(dir + "/lk/home");
        fs::create_directory_symlink("../real/runs", dir + "/lk/home/runs");
        fs::create_directory_symlink("../exports/x", dir + "/lk/real/runs/cur");
        r = run(QStringLiteral(ROUTESCOPE_CLI),
                {"export", QString::fromStdString(x), "--to", "safetensors", "--out",
                 QString::fromStdString(dir + "/lk/home/runs/cur")});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY(fs::exists(dir + "/lk/real/exports/x/model.safetensors"));
        QVERIFY(fs::exists(dir + "/lk/home/runs/cur/model.safetensors"));  // through the links
        QVERIFY(!fs::exists(dir + "/lk/home/exports"));
    }

    // One weights file with --config and --vocab.
    void single_file_with_config() {
        const std::string out = kOut + "/single.ckpt.h5";
        const Run r = import_cli({kData + "/bigs_safetensors/model.safetensors", "--config",
                                  kData + "/bigs_flax/config.json", "--vocab",
                                  kData + "/bigs_flax/vocab.txt", "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY(fs::exists(out));
    }

    void bad_input_data() {
        QTest::addColumn<QString>("src");
        QTest::addColumn<QStringList>("needles");
        const auto row = [](const char* name, const char* src, QStringList needles) {
            QTest::newRow(name) << QString(src) << needles;
        };
        row("truncated msgpack", "bad/truncated_msgpack", {"flax_model.msgpack", "truncated"});
        // Refused from the file's own layers, before a name map of 2,000,000 layers is built.
        row("config.json with more layers than the weights", "bad/bigs_layers_2e6",
            {"config.json: num_hidden_layers = 2000000", "holds encoder layers 0–1",
             "layers 2–1999999 are missing"});
        // Every layer 0..n-1 is looked for (session 37): one stray tensor named for layer n-1
        // passed the check of the highest index, and the name map of 30,000 layers was built.
        row("config.json's layers missing behind one stray tensor", "bad/bigs_layers_stray",
            {"config.json: num_hidden_layers = 30000",
             "holds encoder layers 0–1 and 29999; layers 2–29998 are missing"});
        row("torch.save zip from a big-endian machine", "bad/torch_big_endian",
            {"pytorch_model.bin", "byteorder is 'big'"});
        row("pickle.dump, not torch.save", "bad/plain_pickle",
            {"pytorch_model.bin", "a Python pickle that torch.save did not write"});
        row("pickle.dump protocol 0", "bad/plain_pickle_0",
            {"pytorch_model.bin", "a Python pickle that torch.save did not write"});
        row("pickle.dump protocol 1", "bad/plain_pickle_1",
            {"pytorch_model.bin", "a Python pickle that torch.save did not write"});
        row("tokenizer_config.json nested 10^5 deep", "bad/deep_tokenizer_config",
            {"tokenizer_config.json", "nested deeper than 64"});
        row("tokenizer.json with an empty vocab", "bad/empty_tokenizer_json",
            {"tokenizer.json: model.vocab holds no [UNK] piece (0 pieces)"});
        row("config.json nested 10^5 deep", "bad/deep_config",
            {"config.json", "nested deeper than 64"});
        row("wrong shape", "bad/wrong_shape",
            {"s4_bert/encoder/layer/1/dv/kernel: shape [8, 13], expected [8, 12]"});
        row("missing tensor", "bad/missing_tensor",
            {"s4_bert/encoder/layer/0/bs4/log_step: missing", "layers.0.ssm_backward.log_step"});
        row("unexpected tensor", "bad/unexpected_tensor",
            {"s4_bert/encoder/layer/0/extra/kernel: unexpected"});
        row("unknown dtype (flax)", "bad/unknown_dtype_flax",
            {"s4_bert/embeddings/LayerNorm/bias", "unknown dtype 'int8'"});
        row("unknown dtype (safetensors)", "bad/unknown_dtype_safetensors",
            {"bigs.embeddings.LayerNorm.bias", "unknown dtype 'I8'"});
        row("unknown model_type", "bad/unknown_model_type", {"config.json", "model_type", "gpt2"});
        row("config.json integer past int32", "bad/config_wrapped_width",
            {"config.json", "hidden_size: expected an integer", "got 4294967304"});
        row("config.json fractional integer", "bad/config_fractional_layers",
            {"config.json", "num_hidden_layers: expected an integer", "got 2.5"});
        row("config.json boolean integer", "bad/config_boolean_width",
            {"config.json", "hidden_size: expected an integer", "got true"});
        row("NaN in a tensor", "bad/nan_weight",
            {"model.safetensors: bigs.embeddings.LayerNorm.weight: NaN at element 3"});
        row("untied decoder", "bad/untied_decoder", {"cls.predictions.decoder.weight: differs"});
        row("untied decoder (Flax)", "bert_mlm_flax_untied",
            {"cls/predictions/decoder/kernel", "tie_word_embeddings false", "cannot be imported"});
        row("TensorFlow checkpoint (Google's BERT release)", "bad/tf_checkpoint",
            {"bert_model.ckpt.index", "a TensorFlow checkpoint", "transformers-cli convert"});
        row("TensorFlow checkpoint given as a file", "bad/tf_checkpoint/bert_model.ckpt.index",
            {"bert_model.ckpt.index", "a TensorFlow checkpoint"});
        row("Keras weights", "bad/tf_keras", {"tf_model.h5", "from_tf=True"});
        row("safetensors overlap", "bad/st_overlap",
            {"model.safetensors", "bigs.embeddings.LayerNorm", "overlap"});
        row("safetensors past the end", "bad/st_past_end",
            {"cls.predictions.bias", "run past the end of the file"});
        // The safetensors format (huggingface/safetensors, "Format"): "Duplicate keys are
        // disallowed"; "The header data MUST begin with a { character"; "The byte buffer needs
        // to be entirely indexed, and cannot contain holes" (session 37; each imported).
        row("safetensors duplicate key", "bad/st_duplicate_key",
            {"model.safetensors: header: names 'bigs.embeddings.LayerNorm.bias' twice",
             "duplicate keys"});
        row("safetensors header not starting with {", "bad/st_header_leading_space",
            {"model.safetensors: header: does not begin with '{'"});
        // The word embeddings are [16, 8] float32: 512 bytes.
        row("safetensors hole before the first tensor", "bad/st_hole_at_start",
            {"model.safetensors: data: bytes [0, 64) of the data buffer",
             "before bigs.embeddings.word_embeddings.weight", "without holes"});
        row("safetensors hole between tensors", "bad/st_hole_between",
            {"model.safetensors: data: bytes [512, 520) of the data buffer",
             "between bigs.embeddings.word_embeddings.weight and", "without holes"});
        row("safetensors bytes after the last tensor", "bad/st_trailing_bytes",
            {"model.safetensors: data: bytes", "belong to no tensor (after", "without holes"});
        // A file's format is its content's, also under a directory's file name (session 37).
        row("torch.save file named model.safetensors", "bad/st_is_torch_save",
            {"model.safetensors: a PyTorch checkpoint (torch.save) by its content, not a "
             "safetensors file",
             "rename it pytorch_model.bin"});
        row("zip missing storage", "bad/zip_missing_storage", {"archive/data/3", "missing"});
        row("zip naming a storage twice", "bad/zip_duplicate_entry",
            {"pytorch_model.bin", "two entries named", "/data/0'"});
        // One storage declared HalfStorage by one tensor and BFloat16Storage by another:
        // torch.load reads both as float16 (its first declaration); each tensor's own type gave
        // the second other weights, exit 0.
        row("zip storage declared with two types", "bad/zip_storage_conflict",
            {"pytorch_model.bin: storage archive/data/shared is declared as 8 elements of float16 "
             "by bigs.embeddings.LayerNorm.weight and as 8 elements of bfloat16 by "
             "bigs.embeddings.LayerNorm.bias",
             "refused"});
        row("legacy storage declared with two types", "bad/legacy_storage_conflict",
            {"pytorch_model.bin: storage shared is declared as 8 elements of float16",
             "8 elements of bfloat16 by bigs.embeddings.LayerNorm.bias", "refused"});
        row("pickle global", "bad/evil_pickle", {"pytorch_model.bin", "posix.system", "refused"});
        row("bert position_ids", "bad/bert_position_ids",
            {"pytorch_model.bin", "bert.embeddings.position_ids: element 0 is 15"});
        row("bert hidden_act", "bad/bert_gelu_new", {"config.json", "hidden_act", "gelu_new"});
        row("safetensors header length running into the data", "bad/header_into_data",
            {"model.safetensors", "header: not valid JSON", "\\xD3"});
        row("bert without token type table", "bad/bert_no_token_types",
            {"model.safetensors", "bert.embeddings.token_type_embeddings.weight is missing"});
        row("official bigs key set + an unknown tensor", "bad/bigs_official_unknown",
            {"pytorch_model.bin", "bigs.encoder.layer.0.extra.weight: unexpected"});
        row("bert causal decoder", "bad/bert_lm_head", {"config.json", "is_decoder: true"});
        row("bert LM head class", "bad/bert_lm_head_architecture",
            {"config.json", "architectures: 'BertLMHeadModel'"});
        row("bert one-output head", "bad/bert_one_output",
            {"pytorch_model.bin", "classifier.bias: one output"});
        row("bert multi-label head", "bad/bert_multi_label",
            {"config.json", "problem_type: 'multi_label_classification'"});
        row("bert multiple choice", "bad/bert_multiple_choice",
            {"config.json", "architectures: 'BertForMultipleChoice'"});
        row("legacy torch.save truncated", "bad/legacy_truncated",
            {"pytorch_model.bin", "truncated: storage"});
        row("legacy torch.save count mismatch", "bad/legacy_count",
            {"pytorch_model.bin", "holds 5 elements, the pickle declares"});
        row("legacy torch.save with a code global", "bad/legacy_evil",
            {"pytorch_model.bin", "posix.system", "refused"});
        row("bert MLM config without the head", "bad/bert_mlm_without_head",
            {"cls.predictions.bias: missing"});
        row("sharded: a shard missing", "bad/sharded_missing_shard",
            {"model.safetensors.index.json", "shard model-00003-of-00003.safetensors",
             "does not exist"});
        row("sharded: a shard outside the folder", "bad/sharded_escape",
            {"model.safetensors.index.json", "../bigs_sharded_safetensors",
             "not a file name in the index's folder"});
        row("sharded: a tensor the index does not list", "bad/sharded_unlisted",
            {"model.safetensors.index.json",
             "shard model-00001-of-00003.safetensors holds "
             "bigs.embeddings.LayerNorm.bias, which the weight_map "
             "does not list"});
        row("sharded: a tensor in another shard than listed", "bad/sharded_misplaced",
            {"bigs.embeddings.LayerNorm.bias, which the weight_map places in "
             "model-00003-of-00003.safetensors"});
        row("sharded: a listed tensor no shard holds", "bad/sharded_absent",
            {"places bigs.encoder.layer.9.dv.weight in shard model-00002-of-00003.safetensors, "
             "which does not hold it"});
        row("sharded: shards of two formats", "bad/sharded_mixed/model.safetensors.index.json",
            {"model.safetensors.index.json: shard model-00002-of-00003.safetensors (which holds "
             "bigs.",
             "is pytorch", "one format"});
        // The same shards found in a model directory, where the index's name said safetensors:
        // each shard's format is still its content's (it was "declares N header bytes").
        row("sharded: shards of two formats in a directory", "bad/sharded_mixed",
            {"model.safetensors.index.json: shard model-00002-of-00003.safetensors (which holds "
             "bigs.",
             "a PyTorch checkpoint (torch.save) by its content", "one format"});
        // BERT and BiGS frame every input as [CLS] text [SEP] (session 37: it imported, and
        // every dump then failed naming neither file).
        row("vocabulary without [CLS] and [SEP]", "bad/vocab_no_cls_sep",
            {"vocab_no_cls_sep/vocab.txt: no [CLS] and no [SEP] pieces",
             "frames every input as [CLS] text [SEP]"});
        // The iconv command names the file (it named a placeholder, "wordpiece vocab.txt").
        row("UTF-16 vocabulary", "bad/vocab_utf16",
            {"vocab_utf16/vocab.txt: UTF-16 (little-endian) text, not UTF-8",
             "`iconv -f UTF-16 -t UTF-8 " ROUTESCOPE_TEST_DATA
             "/importers/bad/vocab_utf16/vocab.txt > " ROUTESCOPE_TEST_DATA
             "/importers/bad/vocab_utf16/vocab.utf8.txt`"});
        row("sharded: no weight_map", "bad/sharded_no_weight_map",
            {"model.safetensors.index.json", "no \"weight_map\""});
        // One tensor named twice is refused in every format (docs/cli.md: a safetensors header
        // naming a key twice, a zip naming an entry twice): in Flax, a key holding '/' beside
        // the nested keys joins to a name another leaf has.
        row("Flax keys joining to one name", "bad/flax_joined_duplicate",
            {"flax_model.msgpack: s4_bert/embeddings/LayerNorm/bias: two arrays have this name",
             "['s4_bert/embeddings']['LayerNorm']['bias']",
             "['s4_bert']['embeddings']['LayerNorm']['bias']"});
        // A config.json declaring 2 labels for a classifier of 3 outputs: transformers builds
        // num_labels outputs (id2label's count) and refuses the weights (size mismatch).
        row("id2label of 2 labels, classifier of 3", "bad/bert_cls_id2label_2_of_3",
            {"config.json: id2label names 2 labels (num_labels 2)", "the classifier has 3 outputs",
             "classifier.weight: shape [3, 8]", "size mismatch"});
        row("num_labels 2, classifier of 3", "bad/bert_cls_num_labels_2_of_3",
            {"config.json: num_labels is 2", "the classifier has 3 outputs",
             "classifier.bias: shape [3]"});
        row("sharded: a tensor in two shards", "bad/sharded_twice",
            {"shard model-00003-of-00003.safetensors holds bigs.embeddings.LayerNorm.bias, which "
             "the weight_map places in model-00001-of-00003.safetensors"});
    }
    // A config.json without model_type (Google's keys under transformers' name): --arch says what
    // the file does not; without it the error says to give it.
    void config_without_model_type_takes_arch() {
        const fs::path dir = kOut + "/no_model_type";
        fs::remove_all(dir);
        fs::create_directories(dir);
        for (const char* f : {"pytorch_model.bin", "vocab.txt"})
            fs::copy_file(kData + "/bert_google_config/" + f, dir / f);
        fs::copy_file(kData + "/bert_google_config/bert_config.json", dir / "config.json");
        const std::string out = kOut + "/no_model_type.ckpt.h5";
        fs::remove(out);
        const Run bare = import_cli({dir.string(), "--out", out});
        QCOMPARE(bare.code, 2);
        QVERIFY2(bare.err.find("no model_type key") != std::string::npos &&
                     bare.err.find("--arch") != std::string::npos,
                 bare.err.c_str());
        QVERIFY(!fs::exists(out));
        const Run given = import_cli({dir.string(), "--arch", "bert", "--out", out});
        QVERIFY2(given.code == 0, given.err.c_str());
        QCOMPARE(read_checkpoint(out).config.model.arch, std::string("bert"));
    }

    void bad_input() {
        QFETCH(QString, src);
        QFETCH(QStringList, needles);
        const std::string out = kOut + "/bad.ckpt.h5";
        fs::remove(out);
        const Run r = import_cli({kData + "/" + src.toStdString(), "--out", out});
        QCOMPARE(r.code, 2);
        for (const auto& n : needles)
            QVERIFY2(r.err.find(n.toStdString()) != std::string::npos,
                     ("missing '" + n.toStdString() + "' in: " + r.err).c_str());
        // The message is text a reader can decode, whatever bytes the file held (a JSON parser's
        // "last read" quoted the file's raw bytes).
        QStringDecoder utf8(QStringDecoder::Utf8);
        [[maybe_unused]] const QString decoded = utf8(QByteArray::fromStdString(r.err));
        QVERIFY2(!utf8.hasError(), r.err.c_str());
        QVERIFY(!fs::exists(out));
        for (const auto& e : fs::directory_iterator(kOut))  // no temporary left behind either
            QVERIFY2(e.path().filename().string()[0] != '.', e.path().c_str());
    }

    // --out never replaces a file the import reads, whether named on the command line or found in
    // SRC's directory (config.json, the weights, the vocabulary, a shard of an index); each such
    // import exited 0 and left a checkpoint where the published file was.
    void outNeverReplacesAFileTheImportReads() {
        const fs::path dir = kOut + "/guarded";
        const fs::path sharded = kOut + "/guarded_sharded";
        // vocab.txt beside a tokenizer.json and no tokenizer_config.json: the import reads the
        // casing from tokenizer.json's normalizer (session 37: --out DIR/tokenizer.json
        // replaced it).
        const fs::path both = kOut + "/guarded_vocab_and_tokenizer_json";
        fs::remove_all(dir);
        fs::remove_all(sharded);
        fs::remove_all(both);
        fs::copy(kData + "/bigs_safetensors", dir, fs::copy_options::recursive);
        fs::copy(kData + "/bigs_sharded_safetensors", sharded, fs::copy_options::recursive);
        fs::copy(kData + "/bigs_safetensors", both, fs::copy_options::recursive);
        fs::copy_file(kData + "/bigs_flax/vocab.txt", both / "vocab.txt");
        QVERIFY(fs::exists(both / "tokenizer.json") && !fs::exists(both / "tokenizer_config.json"));
        const auto bytes = [](const fs::path& p) {
            std::ifstream f(p, std::ios::binary);
            return std::string(std::istreambuf_iterator<char>(f), {});
        };
        std::string first_shard;
        for (const auto& e : fs::directory_iterator(sharded))
            if (e.path().filename().string().starts_with("model-00001"))
                first_shard = e.path().string();
        QVERIFY(!first_shard.empty());
        const struct {
            std::string src, out;
        } cases[] = {
            {dir.string(), (dir / "model.safetensors").string()},
            {dir.string(), (dir / "config.json").string()},
            {dir.string(), (dir / "tokenizer.json").string()},
            {(dir / "model.safetensors").string(), (dir / "config.json").string()},
            {sharded.string(), first_shard},
            {(sharded / "model.safetensors.index.json").string(), first_shard},
            {both.string(), (both / "tokenizer.json").string()},
        };
        for (const auto& c : cases) {
            const std::string before = bytes(c.out);
            QVERIFY(!before.empty());
            const Run r = import_cli({c.src, "--out", c.out});
            QVERIFY2(r.code == 2 && r.err.find("is the file import reads") != std::string::npos,
                     (c.src + " --out " + c.out + ": " + r.err).c_str());
            QVERIFY2(bytes(c.out) == before, c.out.c_str());
        }
        // A new file inside SRC's directory is no input: written as usual.
        const Run fine = import_cli({dir.string(), "--out", (dir / "model.ckpt.h5").string()});
        QVERIFY2(fine.code == 0, fine.err.c_str());
    }

    // --config and --vocab must be regular files: a FIFO blocked the vocabulary's read for good,
    // /dev/zero never ended, a directory was read as an empty vocabulary.
    void configAndVocabMustBeRegularFiles() {
        const std::string fifo = kOut + "/vocab.fifo";
        fs::remove(fifo);
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const std::string src = kData + "/bigs_safetensors";
        const std::string out = kOut + "/fifo.ckpt.h5";
        const struct {
            const char* option;
            std::string path;
            const char* why;
        } cases[] = {
            {"--vocab", fifo, "--vocab names no regular file"},
            {"--vocab", "/dev/zero", "--vocab names no regular file"},
            {"--vocab", kOut, "--vocab names a directory"},
            {"--config", fifo, "--config names no regular file"},
            {"--config", kOut + "/no-such-config.json", "--config names no such file"},
        };
        for (const auto& c : cases) {
            const Run r = import_cli({src, "--out", out, c.option, c.path});
            QVERIFY2(r.code == 2 && r.err.find(c.path + ": " + c.why) != std::string::npos,
                     (std::string(c.option) + " " + c.path + ": " + r.err).c_str());
            QVERIFY(!fs::exists(out));
        }
        fs::remove(fifo);
    }

    // The files import finds by name in SRC's directory are regular files too: one that is there
    // as a FIFO, a link to a device, a directory or a link to nothing is said to be so (exit 2,
    // naming it), not reported absent ("no config.json (give one with --config)").
    void filesFoundInTheDirectoryMustBeRegularFiles() {
        const std::string out = kOut + "/found.ckpt.h5";
        const struct {
            const char* model;
            const char* name;
            const char* kind;  // fifo | /dev/zero | dir | dangling
            const char* why;
        } cases[] = {
            {"bigs_flax", "config.json", "fifo", "names no regular file: it is a FIFO"},
            {"bigs_flax", "config.json", "/dev/zero",
             "names no regular file (a symbolic link to /dev/zero): it is a character device"},
            {"bigs_flax", "config.json", "dangling", "its target does not exist"},
            {"bigs_flax", "vocab.txt", "fifo", "names no regular file: it is a FIFO"},
            {"bigs_flax", "vocab.txt", "dir", "names no regular file: it is a directory"},
            {"bigs_flax", "flax_model.msgpack", "/dev/zero", "it is a character device"},
            {"bigs_safetensors", "model.safetensors", "fifo", "it is a FIFO"},
            {"bert_mlm_pytorch", "pytorch_model.bin", "dir", "it is a directory"},
            {"bert_google_config", "bert_config.json", "fifo", "it is a FIFO"},
            {"bigs_flax", "tokenizer_config.json", "fifo", "it is a FIFO"},
            // Beside a tokenizer.json vocabulary too.
            {"bigs_safetensors", "tokenizer_config.json", "fifo", "it is a FIFO"},
            {"bigs_safetensors", "special_tokens_map.json", "dangling",
             "its target does not exist"},
        };
        for (const auto& c : cases) {
            const fs::path dir = kOut + "/found";
            fs::remove_all(dir);
            fs::copy(kData + "/" + c.model, dir, fs::copy_options::recursive);
            const fs::path f = dir / c.name;
            fs::remove(f);
            if (c.kind == std::string("fifo"))
                QCOMPARE(::mkfifo(f.c_str(), 0600), 0);
            else if (c.kind == std::string("dir"))
                fs::create_directory(f);
            else if (c.kind == std::string("dangling"))
                fs::create_symlink(dir / "no-such-file", f);
            else
                fs::create_symlink(c.kind, f);
            const Run r = import_cli({dir.string(), "--out", out});
            const std::string what = std::string(c.model) + "/" + c.name + " (" + c.kind + "): ";
            QVERIFY2(r.code == 2 && r.err.find(f.string() + ": ") != std::string::npos &&
                         r.err.find(c.why) != std::string::npos &&
                         r.err.find("no config.json") == std::string::npos &&
                         r.err.find("no weights file") == std::string::npos &&
                         r.err.find("no vocab.txt") == std::string::npos,
                     (what + r.err).c_str());
            QVERIFY2(!fs::exists(out), what.c_str());
        }
        fs::remove_all(kOut + "/found");
    }

    // Where the checkpoint cannot go is said of the path given (it named an internal temporary
    // file, or gave "Success" as the reason); a temporary left by a killed import (named like
    // every writer's, .<name>.tmp-<pid>…) is removed by the next import to that name.
    void outputPathProblemsAreNamedAndStaleTemporariesSwept() {
        const std::string src = kData + "/bigs_safetensors";
        Run r = import_cli({src, "--out", kOut});
        QVERIFY2(r.code == 2 && r.err.find(kOut + ": is a directory") != std::string::npos,
                 r.err.c_str());
        r = import_cli({src, "--out", kOut + "/no-such-dir/x.ckpt.h5"});
        QVERIFY2(r.code == 3 && r.err.find("no-such-dir does not exist") != std::string::npos,
                 r.err.c_str());
        const std::string out = kOut + "/swept.ckpt.h5";
        // pid 2^22 + 1 is above Linux's pid_max limit (2^22): no process has it.
        const std::string stale = kOut + "/.swept.ckpt.h5.tmp-4194305-import.ckpt.h5";
        std::ofstream(stale) << "half a checkpoint";
        // ... and the checkpoint writer's own temporary of it, which a kill mid-write leaves
        // (the temporary of a temporary: "..swept.ckpt.h5.tmp-<pid>-import.ckpt.h5.tmp-<pid>").
        const std::string nested = kOut + "/..swept.ckpt.h5.tmp-4194305-import.ckpt.h5.tmp-4194306";
        std::ofstream(nested) << "half of it";
        r = import_cli({src, "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(!fs::exists(stale), "the dead import's temporary is still there");
        QVERIFY2(!fs::exists(nested), "the dead import's nested temporary is still there");
        for (const auto& e : fs::directory_iterator(kOut))
            QVERIFY2(e.path().filename().string().find(".tmp-") == std::string::npos,
                     e.path().c_str());
    }

    // An --out that is a FIFO or a device is refused before anything is read, exit 2, as every
    // writer refuses it (docs/cli.md): it was exit 3 after the whole model had been converted.
    // With a SRC that is no model, the output's refusal is what is said.
    void outputThatIsAFifoOrDeviceIsRefusedFirst() {
        const std::string fifo = kOut + "/out.fifo";
        fs::remove(fifo);
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        for (const std::string& src : {kData + "/bigs_safetensors", kData + "/bad/wrong_shape"})
            for (const std::string& out : {fifo, std::string("/dev/full")}) {
                const Run r = import_cli({src, "--out", out});
                QVERIFY2(r.code == 2, (src + " --out " + out + ": " + r.err).c_str());
                QVERIFY2(r.err.find(out + ": is a") != std::string::npos &&
                             r.err.find("shape") == std::string::npos,
                         (src + " --out " + out + ": " + r.err).c_str());
            }
        QVERIFY(fs::is_fifo(fifo));
        QVERIFY(fs::is_character_file("/dev/full"));
        fs::remove(fifo);
    }

    // An --out whose directory exists but cannot be reached says the system's reason, as every
    // writer says it ("File name too long" past PATH_MAX; "Permission denied" under a directory the
    // user may not enter, checked when not run as root), not "does not exist".
    void unreachableOutputDirectoryGivesTheReason() {
        const std::string src = kData + "/bigs_safetensors";
        std::string deep = kOut;
        for (int i = 0; i < 24; ++i)
            deep += "/" + std::string(200, 'd');  // 4,800 bytes: past PATH_MAX (4096)
        Run r = import_cli({src, "--out", deep + "/x.ckpt.h5"});
        QVERIFY2(r.code == 3 && r.err.find("File name too long") != std::string::npos &&
                     r.err.find("does not exist") == std::string::npos,
                 r.err.c_str());
        if (::geteuid() == 0) return;  // root enters any directory
        const std::string locked = kOut + "/locked";
        fs::remove_all(locked);
        fs::create_directories(locked + "/sub");
        fs::permissions(locked, fs::perms::owner_all);
        fs::permissions(locked, fs::perms::none);
        r = import_cli({src, "--out", locked + "/sub/x.ckpt.h5"});
        fs::permissions(locked, fs::perms::owner_all);
        QVERIFY2(r.code == 3 && r.err.find(std::strerror(EACCES)) != std::string::npos &&
                     r.err.find("does not exist") == std::string::npos,
                 r.err.c_str());
        QVERIFY(!fs::exists(locked + "/sub/x.ckpt.h5"));
        fs::remove_all(locked);
    }

    // A SRC that exists but is a FIFO or a device is said to be of the wrong kind (as --vocab's
    // "names no regular file"), not "no such file or directory".
    void sourceThatIsAFifoOrDeviceIsNamedAsSuch() {
        const std::string fifo = kOut + "/src.fifo";
        fs::remove(fifo);
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const std::string out = kOut + "/from-fifo.ckpt.h5";
        for (const auto& [src, kind] :
             {std::pair{fifo, std::string("a FIFO")},
              std::pair{std::string("/dev/null"), std::string("a character device")}}) {
            const Run r = import_cli({src, "--out", out});
            QVERIFY2(r.code == 2 &&
                         r.err.find(src + ": SRC names no regular file or directory") !=
                             std::string::npos &&
                         r.err.find("(it is " + kind) != std::string::npos &&
                         r.err.find("no such file") == std::string::npos,
                     (src + ": " + r.err).c_str());
            QVERIFY(!fs::exists(out));
        }
        const Run missing = import_cli({kOut + "/no-such-model", "--out", out});
        QVERIFY2(
            missing.code == 2 && missing.err.find("no such file or directory") != std::string::npos,
            missing.err.c_str());
        fs::remove(fifo);
    }

    // Export's staging folder is registered for main's signal handler (SIGINT / SIGTERM: exit 130,
    // nothing stray): its cleanup unlinks every file in the folder, whatever its name (libzip's
    // own temporary of pytorch_model.bin), and removes the folder; the export itself under strace
    // is tests/faults/fault_suite.py's. Once the guard ends, the folder is left alone.
    void registeredStagingFolderIsRemovedByTheSignalCleanup() {
        const std::string staged = kOut + "/.sig.export-" + std::to_string(::getpid());
        fs::remove_all(staged);
        fs::create_directories(staged);
        for (int i = 0; i < 300; ++i)  // more entries than one read of the directory returns
            std::ofstream(staged + "/pytorch_model.bin." + std::to_string(i)) << "part";
        {
            const TemporaryDirectoryGuard guard(staged);
            unlink_registered_temporaries();
            QVERIFY2(!fs::exists(staged), "the staging folder is still there");
        }
        fs::create_directories(staged);
        { const TemporaryDirectoryGuard guard(staged); }
        unlink_registered_temporaries();
        QVERIFY(fs::is_directory(staged));
        fs::remove_all(staged);
    }

    // A safetensors file whose header is exactly 640 bytes starts 0x80 0x02 0 0 0 0 0 0 '{', as
    // a protocol-2 pickle starts 0x80 0x02: its format is safetensors, read as the fixture wrote
    // it (it was refused as "a Python pickle").
    void safetensors_header_of_640_bytes_is_no_pickle() {
        const std::string path = kData + "/readers/header_640.safetensors";
        QCOMPARE(detect_tensor_format(path), std::string("safetensors"));
        const TensorFile f = read_tensor_file(path);
        QCOMPARE(f.tensors.size(), std::size_t{1});
        QCOMPARE(f.tensors[0].values(), (std::vector<float>{1.5f, -2.0f}));
    }

    // An MLM model whose vocabulary has no [MASK] imports (it dumps and fine-tunes), with a note
    // saying masked-LM use is refused.
    void vocabulary_without_mask_imports_with_a_note() {
        const std::string out = kOut + "/no-mask.ckpt.h5";
        const Run r = import_cli({kData + "/bigs_vocab_no_mask", "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.err.find("note: " + kData + "/bigs_vocab_no_mask/vocab.txt: no [MASK] piece") !=
                     std::string::npos,
                 r.err.c_str());
    }

    // A checkpoint whose vocabulary lacks [CLS] and [SEP] (written by other means: import
    // refuses one) is refused by dump naming the corpus it frames and the missing pieces, not
    // "classification examples" for a text corpus.
    void dump_names_the_corpus_when_the_vocabulary_cannot_frame_it() {
        const std::string x = kOut + "/frame.ckpt.h5";
        QCOMPARE(import_cli({kData + "/bigs_safetensors", "--out", x}).code, 0);
        Checkpoint ck = read_checkpoint(x);
        std::string vocab(ck.tokenizer.model.begin(), ck.tokenizer.model.end());
        for (const std::string piece : {"[CLS]", "[SEP]"})
            vocab.replace(vocab.find(piece + "\n"), piece.size(), "[unused" + piece.substr(1));
        ck.tokenizer.model.assign(vocab.begin(), vocab.end());
        const std::string unframed = kOut + "/unframed.ckpt.h5";
        rewrite_checkpoint(unframed, ck);
        const std::string corpus = kOut + "/frame-corpus.txt";
        std::ofstream(corpus) << "the cat sat\n";
        const Run r = run(QStringLiteral(ROUTESCOPE_CLI),
                          {"dump", "--checkpoint", QString::fromStdString(unframed), "--data",
                           QString::fromStdString(corpus), "--out",
                           QString::fromStdString(kOut + "/unframed.dump.h5")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("has no [CLS] and no [SEP] pieces to frame the inputs of " + corpus) !=
                         std::string::npos &&
                     r.err.find("classification examples") == std::string::npos,
                 r.err.c_str());
    }

    // The pickle's payload would have created this file had anything executed it.
    void pickle_payload_never_runs() {
        QVERIFY(!fs::exists(kData + "/bad/PWNED"));
        const std::string e = read_error(kData + "/bad/evil_pickle/pytorch_model.bin");
        QVERIFY2(e.find("refused") != std::string::npos, e.c_str());
        QVERIFY(!fs::exists(kData + "/bad/PWNED"));
    }

    // Sizes declared by a tiny hostile file are bounded by the file: an error, not an allocation.
    void hostile_sizes_are_bounded() {
        const std::string b = kData + "/bad/";
        QVERIFY(read_error(b + "st_huge_header.safetensors", "safetensors").find("header") !=
                std::string::npos);
        QVERIFY(read_error(b + "st_huge_shape.safetensors").find("more elements") !=
                std::string::npos);
        QVERIFY(!read_error(b + "mp_huge_array.msgpack", "flax").empty());
        QVERIFY(!read_error(b + "mp_huge_bin.msgpack", "flax").empty());
        QVERIFY(read_error(b + "pickle_huge_string.bin").find("truncated") != std::string::npos);
        // torch.Tensor.expand (stride 0) of one element to 2^29: materialised, it would be 2 GiB.
        const std::string expand = read_error(b + "torch_huge_expand.bin", "pytorch");
        QVERIFY2(expand.find("expanded (stride-0) views") != std::string::npos, expand.c_str());
        // Overlapping strides of 1024^3 elements over 3070 floats: 4 GiB once materialised.
        const std::string overlap = read_error(b + "torch_huge_overlap.bin", "pytorch");
        QVERIFY2(overlap.find("torch_huge_overlap.bin: w: overlapping strided views") !=
                         std::string::npos &&
                     overlap.find("more than 1024 MiB once materialised") != std::string::npos,
                 overlap.c_str());
        // fuzz_import_pytorch's finding (its 10-minute campaign): a 19 KB zip whose entry declares
        // a compressed size of 4 GB, so the expansion bound allowed a 4 GB allocation.
        const std::string zip = ROUTESCOPE_SOURCE_DIR
            "/tests/fuzz/regressions/fuzz_import_pytorch/entry-declares-4GB-compressed.bin";
        const std::string why = read_error(zip, "pytorch");
        QVERIFY2(why.find("compressed bytes in an archive of") != std::string::npos, why.c_str());
    }

    // A config.json whose vocab_size is 10^8 against a small weights file: the shapes are checked
    // before the parameters are allocated, so the import is refused (exit 2, the tensor named)
    // inside a 1.5 GB address space; it used to allocate gigabytes first (out of memory: exit 3,
    // nothing named). Not under AddressSanitizer, whose shadow memory needs terabytes of
    // address space.
    void shapes_are_checked_before_allocating() {
#if defined(__SANITIZE_ADDRESS__)
        QSKIP("an address-space limit and AddressSanitizer do not mix");
#endif
        const std::string out = kOut + "/vocab1e8.ckpt.h5";
        const Run r = run(QStringLiteral("/usr/bin/prlimit"),
                          {"--as=1500000000", QStringLiteral(ROUTESCOPE_CLI), "import",
                           QString::fromStdString(kData + "/bad/config_vocab_1e8"), "--out",
                           QString::fromStdString(out)});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("expected [100000000") != std::string::npos, r.err.c_str());
        QVERIFY(!fs::exists(out));
    }

    // A vocab.txt with fewer pieces than the embedding has rows (a vocabulary padded to a round
    // size) imports; the extra rows get placeholder pieces, said in a note, and the checkpoint's
    // tokenizer covers every row.
    void padded_vocabulary_imports() {
        const std::string out = kOut + "/padded.ckpt.h5";
        const Run r = import_cli({kData + "/padded_vocab", "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2((r.out + r.err).find("[routescope_unused_<id>]") != std::string::npos,
                 (r.out + r.err).c_str());
        const Checkpoint ck = read_checkpoint(out);
        const auto tok = train::checkpoint_tokenizer(ck, out);
        QCOMPARE(tok->vocab_size(), ck.config.model.vocab_size);
        QVERIFY(tok->is_special(ck.config.model.vocab_size - 1));
    }

    // A model directory under kOut named `name`: bigs_safetensors' config.json (vocab_size 16)
    // and weights, and `files` ({name, content}) as the tokenizer files.
    static fs::path tokenizer_dir(const std::string& name,
                                  const std::vector<std::pair<std::string, std::string>>& files) {
        const fs::path dir = kOut + "/" + name;
        fs::remove_all(dir);
        fs::create_directories(dir);
        for (const char* f : {"config.json", "model.safetensors"})
            fs::copy_file(kData + "/bigs_safetensors/" + f, dir / f);
        for (const auto& [file, content] : files)
            std::ofstream(dir / file, std::ios::binary) << content;
        return dir;
    }
    static std::string vocab_txt(std::size_t n) {
        static const char* const pieces[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",
                                             "cat",   "sat",   "on",    "mat",   "##s",    ".",
                                             "a",     "dog",   "ran",   "far"};
        std::string text;
        for (std::size_t i = 0; i < n; ++i)
            text += std::string(pieces[i]) + "\n";
        return text;
    }

    // A tokenizer.json piece holding a CR, an LF or a NUL, or a leading byte-order mark (which a
    // checkpoint's vocab.txt cannot keep): its row gets a placeholder and every other id is the
    // file's. It read the CR as a line end: every later id one higher (with vocab_size
    // leaving room), or "17 pieces, more than the model's vocab_size 16".
    void tokenizerJsonPiecesKeepTheirIds() {
        // vocab_size 16 pieces, four of them unrepresentable; the ids by hand from the table.
        const std::vector<std::string> pieces = {
            "\xEF\xBB\xBFzz", "[UNK]", "[CLS]", "[SEP]",
            "[MASK]",         "the",   "cat",   "sat",
            "o\nn",           "mat",   "##s",   ".",
            "x\ry",           "dog",   "ran",   std::string("f\0r", 3)};
        nlohmann::json vocab = nlohmann::json::object();
        for (std::size_t i = 0; i < pieces.size(); ++i)
            vocab[pieces[i]] = i;
        const nlohmann::json tj = {
            {"version", "1.0"},
            {"added_tokens", nlohmann::json::array()},
            {"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"vocab", vocab}}}};
        const fs::path dir = tokenizer_dir("tokenizer_json_cr", {{"tokenizer.json", tj.dump()}});
        const std::string out = kOut + "/tokenizer_json_cr.ckpt.h5";
        const Run r = import_cli({dir.string(), "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.err.find("\"x\\ry\" (id 12)") != std::string::npos &&
                     r.err.find("\"o\\nn\" (id 8)") != std::string::npos &&
                     r.err.find("[routescope_unused_<id>]") != std::string::npos,
                 r.err.c_str());
        const Checkpoint ck = read_checkpoint(out);
        const auto tok = train::checkpoint_tokenizer(ck, out);
        QCOMPARE(tok->vocab_size(), 16);
        QCOMPARE(tok->encode("the dog ran. cats"),
                 (std::vector<std::int32_t>{5, 13, 14, 11, 6, 10}));
        QCOMPARE(tok->encode("on a far"), (std::vector<std::int32_t>{1, 1, 1}));
        QCOMPARE(tok->piece(12), std::string("[routescope_unused_12]"));
        QCOMPARE(tok->piece(0), std::string("[routescope_unused_0]"));
        QCOMPARE(tok->piece(9), std::string("mat"));
    }

    // Tokens added to the vocabulary (tokenizer.add_tokens(["<e1>", "</e1>"]) then
    // resize_token_embeddings: ids 14 and 15 past vocab.txt's 14 pieces), which transformers
    // matches whole in the raw text, are refused naming the file that declares them: they
    // imported with placeholder rows and "<e1>" split into "<", "e", "##1", ">". The five
    // specials at their own ids, as every tokenizer.json lists them, are BERT's.
    void addedTokensAreRefusedNamingTheirFile() {
        const std::string out = kOut + "/added.ckpt.h5";
        const auto refused = [&](const std::string& name,
                                 const std::vector<std::pair<std::string, std::string>>& files,
                                 const std::vector<std::string>& needles) {
            fs::remove(out);
            const Run r = import_cli({tokenizer_dir(name, files).string(), "--out", out});
            QCOMPARE(r.code, 2);
            for (const auto& n : needles)
                QVERIFY2(r.err.find(n) != std::string::npos, (n + " not in: " + r.err).c_str());
            QVERIFY(!fs::exists(out));
        };
        refused(
            "added_json",
            {{"vocab.txt", vocab_txt(14)}, {"added_tokens.json", R"({"<e1>": 14, "</e1>": 15})"}},
            {"added_json/added_tokens.json: \"<e1>\" (id 14), \"</e1>\" (id 15): tokens added",
             "matches whole in the text"});
        const auto added = [](const std::string& content, int id, bool special) {
            return nlohmann::json{
                {"id", id},          {"content", content}, {"single_word", false},
                {"lstrip", false},   {"rstrip", false},    {"normalized", !special},
                {"special", special}};
        };
        nlohmann::json vocab = nlohmann::json::object();
        {
            std::istringstream in(vocab_txt(14));
            std::string p;
            for (int i = 0; std::getline(in, p); ++i)
                vocab[p] = i;
        }
        nlohmann::json specials = nlohmann::json::array();
        for (const char* p : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
            specials.push_back(added(p, vocab[p].get<int>(), true));
        const auto tokenizer_json = [&](nlohmann::json added_tokens) {
            return nlohmann::json{{"version", "1.0"},
                                  {"added_tokens", added_tokens},
                                  {"model", {{"type", "WordPiece"}, {"vocab", vocab}}}}
                .dump();
        };
        nlohmann::json with_e1 = specials;
        with_e1.push_back(added("<e1>", 14, false));
        with_e1.push_back(added("</e1>", 15, false));
        refused("added_tokenizer_json", {{"tokenizer.json", tokenizer_json(with_e1)}},
                {"added_tokenizer_json/tokenizer.json: added_tokens: \"<e1>\" (id 14)"});
        // A special at another id than the vocabulary's is another token too.
        nlohmann::json moved = specials;
        moved[4]["id"] = 15;
        refused("added_moved_mask", {{"tokenizer.json", tokenizer_json(moved)}},
                {"tokenizer.json: added_tokens: \"[MASK]\" (id 15): a token added"});
        // tokenizer_config.json's added_tokens_decoder (transformers >= 4.34) beside a vocab.txt.
        refused(
            "added_decoder",
            {{"vocab.txt", vocab_txt(14)},
             {"tokenizer_config.json",
              R"({"added_tokens_decoder": {"0": {"content": "[PAD]"}, "14": {"content": "<e1>"}}})"}},
            {"tokenizer_config.json: added_tokens_decoder: \"<e1>\" (id 14)"});
        // The specials alone import, from either file.
        const Run ok = import_cli(
            {tokenizer_dir("added_specials_only", {{"tokenizer.json", tokenizer_json(specials)}})
                 .string(),
             "--out", out});
        QVERIFY2(ok.code == 0, ok.err.c_str());
        const Run ok2 =
            import_cli({tokenizer_dir("added_decoder_specials",
                                      {{"vocab.txt", vocab_txt(14)},
                                       {"tokenizer_config.json",
                                        R"({"added_tokens_decoder": {"0": {"content": "[PAD]"},
                                 "4": {"content": "[MASK]", "special": true}}})"}})
                            .string(),
                        "--out", out});
        QVERIFY2(ok2.code == 0, ok2.err.c_str());
    }

    // special_tokens_map.json, where save_pretrained writes the special tokens and which
    // from_pretrained applies over tokenizer_config.json: its names follow the same rule (it was
    // not read: "<unk>" there imported, unknown words getting [UNK]'s id).
    void specialTokensMapFollowsTheTokenizerConfigRules() {
        const std::string out = kOut + "/stm.ckpt.h5";
        const auto import_with = [&](const std::string& name, const std::string& map,
                                     const std::string& config = "") {
            fs::remove(out);
            std::vector<std::pair<std::string, std::string>> files = {
                {"vocab.txt", vocab_txt(16)}, {"special_tokens_map.json", map}};
            if (!config.empty()) files.emplace_back("tokenizer_config.json", config);
            return import_cli({tokenizer_dir(name, files).string(), "--out", out});
        };
        for (const char* map : {R"({"unk_token": "<unk>"})",
                                R"({"unk_token": {"content": "<unk>", "lstrip": false}})"}) {
            const Run r = import_with("stm_unk", map);
            QCOMPARE(r.code, 2);
            QVERIFY2(
                r.err.find("stm_unk/special_tokens_map.json: unk_token: ") != std::string::npos &&
                    r.err.find("BERT's is \"[UNK]\"") != std::string::npos,
                r.err.c_str());
            QVERIFY(!fs::exists(out));
        }
        const Run extra = import_with("stm_extra", R"({"additional_special_tokens": ["<e1>"]})");
        QCOMPARE(extra.code, 2);
        QVERIFY2(extra.err.find("special_tokens_map.json: additional_special_tokens: \"<e1>\"") !=
                     std::string::npos,
                 extra.err.c_str());
        // The map's value wins over tokenizer_config.json's, either way.
        const Run over =
            import_with("stm_over", R"({"unk_token": "[UNK]", "cls_token": {"content": "[CLS]"}})",
                        R"({"unk_token": "<unk>"})");
        QVERIFY2(over.code == 0, over.err.c_str());
        const Run under =
            import_with("stm_under", R"({"mask_token": "<mask>"})", R"({"mask_token": "[MASK]"})");
        QCOMPARE(under.code, 2);
        QVERIFY2(under.err.find("stm_under/special_tokens_map.json: mask_token: \"<mask>\"") !=
                     std::string::npos,
                 under.err.c_str());
    }

    // tokenizer_config.json {"strip_accents": false} without do_lower_case: BertTokenizer's
    // do_lower_case defaults to true, so it lower-cases keeping accents, refused as when
    // do_lower_case: true is written (it imported uncased, accents stripped).
    void stripAccentsFalseWithDefaultLowerCaseIsRefused() {
        const std::string out = kOut + "/strip.ckpt.h5";
        fs::remove(out);
        const Run r =
            import_cli({tokenizer_dir("strip_default",
                                      {{"vocab.txt", vocab_txt(16)},
                                       {"tokenizer_config.json", R"({"strip_accents": false})"}})
                            .string(),
                        "--out", out});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("strip_default/tokenizer_config.json: strip_accents: false") !=
                         std::string::npos &&
                     r.err.find("no do_lower_case") != std::string::npos,
                 r.err.c_str());
        QVERIFY(!fs::exists(out));
        // strip_accents true with the default is BERT-uncased.
        const Run ok =
            import_cli({tokenizer_dir("strip_default_true",
                                      {{"vocab.txt", vocab_txt(16)},
                                       {"tokenizer_config.json", R"({"strip_accents": true})"}})
                            .string(),
                        "--out", out});
        QVERIFY2(ok.code == 0, ok.err.c_str());
        QCOMPARE(read_checkpoint(out).tokenizer.kind, std::string("wordpiece"));
    }

    // A tokenizer.json vocabulary reads the files transformers' BertTokenizerFast reads beside it
    // (nothing beside it was read). tokenizer_config.json's do_lower_case wins over the
    // normalizer's lowercase, as BertTokenizerFast rebuilds the normalizer from it, with a note
    // naming both files; without it the normalizer says, with a note that transformers (its
    // do_lower_case defaulting to true) would lower-case a cased one. special_tokens_map.json and
    // tokenizer_config.json names, added tokens and BertTokenizer's arguments are refused as
    // beside a vocab.txt.
    void tokenizerJsonReadsTheSettingsBesideIt() {
        // A cased vocabulary of 16 pieces (config.json's vocab_size): ids by hand below.
        const std::vector<std::string> pieces = {
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",         "The", "cat",
            "Cat",   "sat",   "##s",   ".",     "cafe",   "Caf\xC3\xA9", "dog", "Dog"};
        nlohmann::json vocab = nlohmann::json::object();
        for (std::size_t i = 0; i < pieces.size(); ++i)
            vocab[pieces[i]] = i;
        const auto tokenizer_json = [&](bool lowercase) {
            return nlohmann::json{{"version", "1.0"},
                                  {"normalizer",
                                   {{"type", "BertNormalizer"},
                                    {"clean_text", true},
                                    {"handle_chinese_chars", true},
                                    {"strip_accents", nullptr},
                                    {"lowercase", lowercase}}},
                                  {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
                                  {"model", {{"type", "WordPiece"}, {"vocab", vocab}}}}
                .dump();
        };
        // "The Cat sat. Café Dogs": BERT-uncased lower-cases and strips the accent ("the cat sat
        // . cafe dog ##s"), BERT-cased keeps both ("The Cat sat . Café Dog ##s").
        const std::string text = "The Cat sat. Caf\xC3\xA9 Dogs";
        const std::vector<std::int32_t> uncased = {5, 7, 9, 11, 12, 14, 10};
        const std::vector<std::int32_t> cased = {6, 8, 9, 11, 13, 15, 10};
        const std::string out = kOut + "/tj_settings.ckpt.h5";
        const auto import_with = [&](const std::string& name, bool lowercase,
                                     std::vector<std::pair<std::string, std::string>> files) {
            fs::remove(out);
            files.emplace_back("tokenizer.json", tokenizer_json(lowercase));
            return import_cli({tokenizer_dir(name, files).string(), "--out", out});
        };
        const auto ids = [&] {
            const Checkpoint ck = read_checkpoint(out);
            return train::checkpoint_tokenizer(ck, out)->encode(text);
        };
        const auto has = [](const Run& r, const std::string& needle) {
            return r.err.find(needle) != std::string::npos;
        };

        // The config's casing wins, either way, with a note naming both files.
        Run r = import_with("tj_config_lower", false,
                            {{"tokenizer_config.json", R"({"do_lower_case": true})"}});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(has(r, "tj_config_lower/tokenizer_config.json: do_lower_case: true overrides ") &&
                     has(r, "tj_config_lower/tokenizer.json's normalizer (lowercase: false)"),
                 r.err.c_str());
        QCOMPARE(read_checkpoint(out).tokenizer.kind, std::string("wordpiece"));
        QCOMPARE(ids(), uncased);
        r = import_with("tj_config_cased", true,
                        {{"tokenizer_config.json", R"({"do_lower_case": false})"}});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(has(r, "tj_config_cased/tokenizer_config.json: do_lower_case: false overrides ") &&
                     has(r, "tj_config_cased/tokenizer.json's normalizer (lowercase: true)"),
                 r.err.c_str());
        QCOMPARE(read_checkpoint(out).tokenizer.kind, std::string("wordpiece_cased"));
        QCOMPARE(ids(), cased);
        // Agreeing: no override note.
        r = import_with("tj_config_agrees", false,
                        {{"tokenizer_config.json", R"({"do_lower_case": false})"}});
        QVERIFY2(r.code == 0 && !has(r, "overrides"), r.err.c_str());
        QCOMPARE(ids(), cased);
        // No tokenizer_config.json, or one without do_lower_case: the normalizer says, and a
        // cased one is said to be lower-cased by transformers.
        r = import_with("tj_alone_cased", false, {});
        QVERIFY2(r.code == 0 && has(r, "would lower-case") &&
                     has(r, "there is no " + kOut + "/tj_alone_cased/tokenizer_config.json"),
                 r.err.c_str());
        QCOMPARE(ids(), cased);
        r = import_with("tj_config_silent", false,
                        {{"tokenizer_config.json", R"({"model_max_length": 512})"}});
        QVERIFY2(r.code == 0 && has(r, "tokenizer_config.json does not set it"), r.err.c_str());
        QCOMPARE(ids(), cased);
        r = import_with("tj_alone_uncased", true, {});
        QVERIFY2(r.code == 0 && !has(r, "would lower-case"), r.err.c_str());
        QCOMPARE(ids(), uncased);
        // --out never replaces a file read beside it.
        {
            const fs::path dir = kOut + "/tj_config_cased";
            const Run o =
                import_cli({dir.string(), "--out", (dir / "tokenizer_config.json").string()});
            QVERIFY2(o.code == 2 && has(o, "is the file import reads"), o.err.c_str());
            std::ifstream f(dir / "tokenizer_config.json");
            QCOMPARE(std::string(std::istreambuf_iterator<char>(f), {}),
                     std::string(R"({"do_lower_case": false})"));
        }

        // Refused as beside a vocab.txt, naming the file and the key or the tokens.
        const auto refused = [&](const std::string& name,
                                 const std::vector<std::pair<std::string, std::string>>& files,
                                 const std::vector<std::string>& needles) {
            const Run x = import_with(name, true, files);
            QCOMPARE(x.code, 2);
            for (const auto& n : needles)
                QVERIFY2(has(x, n), (n + " not in: " + x.err).c_str());
            QVERIFY(!fs::exists(out));
        };
        refused(
            "tj_stm_unk", {{"special_tokens_map.json", R"({"unk_token": "<unk>"})"}},
            {"tj_stm_unk/special_tokens_map.json: unk_token: \"<unk>\"", "BERT's is \"[UNK]\""});
        refused("tj_config_mask", {{"tokenizer_config.json", R"({"mask_token": "<mask>"})"}},
                {"tj_config_mask/tokenizer_config.json: mask_token: \"<mask>\""});
        refused("tj_added_json", {{"added_tokens.json", R"({"<e1>": 16})"}},
                {"tj_added_json/added_tokens.json: \"<e1>\" (id 16): a token added"});
        refused(
            "tj_added_decoder",
            {{"tokenizer_config.json", R"({"added_tokens_decoder": {"16": {"content": "<e1>"}}})"}},
            {"tj_added_decoder/tokenizer_config.json: added_tokens_decoder: \"<e1>\" (id 16)"});
        refused("tj_stm_extra",
                {{"special_tokens_map.json", R"({"additional_special_tokens": ["<e1>"]})"}},
                {"tj_stm_extra/special_tokens_map.json: additional_special_tokens: \"<e1>\""});
        refused("tj_no_cjk", {{"tokenizer_config.json", R"({"tokenize_chinese_chars": false})"}},
                {"tj_no_cjk/tokenizer_config.json: tokenize_chinese_chars: false"});
        refused("tj_no_basic", {{"tokenizer_config.json", R"({"do_basic_tokenize": false})"}},
                {"tj_no_basic/tokenizer_config.json: do_basic_tokenize: false"});
        refused("tj_strip",
                {{"tokenizer_config.json", R"({"do_lower_case": false, "strip_accents": true})"}},
                {"tj_strip/tokenizer_config.json: strip_accents: true",
                 "accents stripped while keeping case"});
        refused(
            "tj_strip_default", {{"tokenizer_config.json", R"({"strip_accents": false})"}},
            {"tj_strip_default/tokenizer_config.json: strip_accents: false", "no do_lower_case"});
        // BERT's own names, and the five specials at their ids, import.
        r = import_with(
            "tj_bert_names", true,
            {{"special_tokens_map.json",
              R"({"unk_token": "[UNK]", "mask_token": {"content": "[MASK]"}})"},
             {"tokenizer_config.json",
              R"({"do_lower_case": true, "added_tokens_decoder": {"0": {"content": "[PAD]"}}})"}});
        QVERIFY2(r.code == 0, r.err.c_str());
    }

    // A SentencePiece model given as import's vocabulary is said in import's terms: it reads
    // WordPiece only (the tokenizer's own message advised train's tokenizer.kind and naming the
    // file *.model, which it already was).
    void sentencepieceModelAsVocabIsSaidInImportsTerms() {
        // A SentencePiece ModelProto by hand: field 1 (a piece: "[PAD]", score -1.5f, type 3).
        const std::string spiece("\x0A\x0E\x0A\x05[PAD]\x15\x00\x00\xC0\xBF\x18\x03", 16);
        const fs::path dir = tokenizer_dir("spiece_vocab", {{"spiece.model", spiece}});
        const std::string out = kOut + "/spiece.ckpt.h5";
        fs::remove(out);
        const Run r =
            import_cli({dir.string(), "--out", out, "--vocab", (dir / "spiece.model").string()});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.find("spiece.model: a binary file (a SentencePiece .model") !=
                         std::string::npos &&
                     r.err.find("import reads BERT's WordPiece only") != std::string::npos &&
                     r.err.find("tokenizer.kind") == std::string::npos,
                 r.err.c_str());
        QVERIFY(!fs::exists(out));
    }

    // An adversarial sweep's findings (session 21): a pickle nested 300,000 deep crashed the
    // importer freeing its value tree (SIGSEGV, no message); a repeated state_dict key and an
    // unknown protocol were accepted.
    void hostile_pickles_are_refused() {
        const std::string b = kData + "/bad/";
        for (const char* deep : {"pickle_deep_tuples.bin", "pickle_deep_lists.bin"}) {
            const std::string e = read_error(b + deep, "pytorch");
            QVERIFY2(e.find("holds no state_dict") != std::string::npos, e.c_str());
        }
        const std::string dup = read_error(b + "pickle_duplicate_key.bin", "pytorch");
        QVERIFY2(dup.find("state_dict key 'a' appears twice") != std::string::npos, dup.c_str());
        const std::string proto = read_error(b + "pickle_protocol_9.bin", "pytorch");
        QVERIFY2(proto.find("pickle protocol 9") != std::string::npos, proto.c_str());
    }

    // A torch.save zip's storages are read only as far as its tensors use them, and the read's
    // memory (the tensors as float32 and the storage bytes held at once) is held against the read
    // limit before anything is allocated (docs/cli.md "import"): three deflated storages of
    // 256 MiB zeros in a 0.8 MB file, each holding an 8-element slice, ran out of memory
    // ("out of memory (std::bad_alloc)", naming no file).
    void torch_storages_are_read_within_the_read_limit() {
        struct Limit {  // ROUTESCOPE_READ_LIMIT_MB for this test only
            explicit Limit(const char* mb) { ::setenv("ROUTESCOPE_READ_LIMIT_MB", mb, 1); }
            ~Limit() { ::unsetenv("ROUTESCOPE_READ_LIMIT_MB"); }
        };
        const std::string dir = kData + "/storages/";
        {
            // Two 64 MiB storages whose tensors read 8 elements each: 64 bytes, not 128 MiB.
            const Limit limit("16");
            const TensorFile file = read_tensor_file(dir + "sparse.bin", "pytorch");
            std::ifstream in(dir + "sparse.expected.json");  // torch.load's values
            const auto expected = nlohmann::json::parse(in);
            QCOMPARE(file.tensors.size(), expected.size());
            for (const auto& [name, want] : expected.items()) {
                const NamedTensor* t = file.find(name);
                QVERIFY2(t, name.c_str());
                QCOMPARE(t->shape, want["shape"].get<std::vector<std::int64_t>>());
                const auto values = want["values"].get<std::vector<float>>();
                QCOMPARE(t->data, values);
            }
        }
        {
            // 16 MiB storages read whole by 4M-element tensors: the second makes 48 MiB.
            const Limit limit("40");
            const std::string e = read_error(dir + "over_limit.bin", "pytorch");
            QVERIFY2(e.find("over_limit.bin: w1 (its storage archive/data/big1, with the tensors "
                            "read before it) needs 50.3 MB of memory to read, more than the limit "
                            "of 41.9 MB (ROUTESCOPE_READ_LIMIT_MB)") != std::string::npos,
                     e.c_str());
            // The same through the command: exit 2, nothing written.
            const fs::path model = kOut + "/over_read_limit";
            fs::remove_all(model);
            fs::create_directories(model);
            fs::copy_file(dir + "over_limit.bin", model / "pytorch_model.bin");
            for (const char* f : {"config.json", "vocab.txt"})
                fs::copy_file(kData + "/bigs_pytorch/" + f, model / f);
            const std::string out = kOut + "/over_read_limit.ckpt.h5";
            fs::remove(out);
            const Run r = import_cli({model.string(), "--out", out});
            QCOMPARE(r.code, 2);
            QVERIFY2(r.err.find("pytorch_model.bin: w1 (its storage archive/data/big1") !=
                             std::string::npos &&
                         r.err.find("more than the limit of 41.9 MB") != std::string::npos,
                     r.err.c_str());
            QVERIFY(!fs::exists(out));
        }
        // Without the lowered limit the same file reads (48 MiB is far below half the memory of
        // any machine that runs the tests).
        const TensorFile whole = read_tensor_file(dir + "over_limit.bin", "pytorch");
        QCOMPARE(whole.tensors.size(), std::size_t{3});
        QCOMPARE(whole.tensors[2].data.size(), std::size_t{4} << 20);
    }
};

QTEST_GUILESS_MAIN(TestImporters)
#include "test_importers.moc"
