// Fine-tuning (engine/train/finetuner.hpp), through the library and the CLI:
// - a TSV this test writes, label = whether the keyword "zebra" occurs, reaches ≥ 95% validation
//   accuracy in a few seconds (a tiny BiGS from scratch, byte tokenizer); its best checkpoint
//   passes `routescope-cli validate` and stores the label names;
// - JSON Lines pairs: integer labels in numeric order, [CLS] a [SEP] b [SEP] with segments;
// - pairs: label = whether the keyword occurs in the SECOND sentence (the first carries it as a
//   distractor half of the time), so the model must tell the segments apart: well above chance;
// - train.freeze_ssm: every *.ssm_forward.* / *.ssm_backward.* parameter is bit-identical after
//   training while every other parameter group moved;
// - train.init_from: the encoder is the pretrained checkpoint's, the classifier is fresh;
// - bad input: a malformed row (file and line in the message), a missing label column, an unknown
//   task name — errors naming the culprit;
// - resume (the shared training loop, training_loop.hpp): 12 steps straight, and 6 steps, a
//   checkpoint and 6 resumed steps, give the same logged losses (steps and evaluations), the same
//   best checkpoint and the same final parameters bit for bit — with dropout and gradient
//   accumulation on, the stop in the middle of an epoch; through the library and through
//   `routescope-cli train --until` / `--resume`; the resumed run's best so far is the log's, and
//   a resume whose log is missing beside a best.ckpt.h5 is refused (the best is kept); a
//   best.ckpt.h5 of a step past the resumed checkpoint (its run's next save was lost) is kept
//   until a better model comes (scored with `routescope-cli eval`), with or without the score
//   it carries.
#include <H5Cpp.h>
#include <sys/stat.h>

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

#include "engine/core/error.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/train/finetuner.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/trainer.hpp"
#include "train_test_support.hpp"

using namespace routescope;

namespace {

const char* const kWords[] = {"alpha", "bravo",   "charlie", "delta",
                              "echo",  "foxtrot", "golf",    "hotel"};

std::string sentence(std::mt19937& rng, bool keyword) {
    const unsigned n = 2 + rng() % 3;
    std::vector<std::string> ws;
    for (unsigned i = 0; i < n; ++i)
        ws.push_back(kWords[rng() % 8]);
    if (keyword) ws[rng() % n] = "zebra";
    std::string s;
    for (const auto& w : ws)
        s += (s.empty() ? "" : " ") + w;
    return s;
}

// label yes ⇔ "zebra" occurs (about half of the rows).
std::string keyword_tsv(int rows, unsigned seed) {
    std::mt19937 rng(seed);
    std::string text = "sentence\tlabel\n";
    for (int i = 0; i < rows; ++i) {
        const bool k = rng() % 2;
        text += sentence(rng, k) + "\t" + (k ? "yes" : "no") + "\n";
    }
    return text;
}

// label entailment ⇔ "zebra" occurs in sentence2; sentence1 carries it independently.
std::string pair_tsv(int rows, unsigned seed) {
    std::mt19937 rng(seed);
    std::string text = "idx\tsentence1\tsentence2\tlabel\n";
    for (int i = 0; i < rows; ++i) {
        const bool a = rng() % 2, b = rng() % 2;
        text += std::to_string(i) + "\t" + sentence(rng, a) + "\t" + sentence(rng, b) + "\t" +
                (b ? "entailment" : "not_entailment") + "\n";
    }
    return text;
}

RunConfig tiny_classifier(const std::string& train, const std::string& valid, int epochs) {
    nlohmann::json j = {{"model",
                         {{"arch", "bigs"},
                          {"d_model", 32},
                          {"n_layers", 2},
                          {"max_len", 64},
                          {"dropout", 0.0},
                          {"ssm", {{"n_modes", 16}}}}},
                        {"tokenizer", {{"kind", "bytes"}}},
                        {"data", {{"train", train}, {"valid", valid}, {"seq_len", 64}}},
                        {"train",
                         {{"objective", "classify"},
                          {"batch_size", 8},
                          {"epochs", epochs},
                          {"lr", 3e-3},
                          {"warmup_steps", 5},
                          {"eval_every", 0},
                          {"checkpoint_every", 0},
                          {"threads", 2}}}};
    return RunConfig::from_json(j);
}

// Every record of `type` in a log, keyed by step, as its JSON text (losses have 17 digits).
std::map<std::int64_t, std::string> records(const std::string& log, const std::string& type,
                                            const std::vector<std::string>& fields) {
    std::map<std::int64_t, std::string> out;
    for (const auto& j : train_test::read_lines(log)) {
        if (j.value("type", "") != type) continue;
        nlohmann::json kept;
        for (const auto& f : fields)
            if (j.contains(f)) kept[f] = j[f];
        out[j["step"].get<std::int64_t>()] = kept.dump();
    }
    return out;
}

bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double best_accuracy(const std::string& log) {
    double best = -1;
    std::ifstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line);
        if (j.value("type", "") == "eval") best = std::max(best, j["accuracy"].get<double>());
    }
    return best;
}

}  // namespace

class TestFinetune : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    void write_text_jsonl() {
        train_test::write_text(path("j.jsonl"),
                               "{\"text_a\": \"ab\", \"text_b\": \"cde\", \"label\": 10}\n"
                               "{\"text_a\": \"x\", \"text_b\": \"y\", \"label\": 2}\n");
    }
    std::string path(const std::string& name) {
        return dir_.filePath(QString::fromStdString(name)).toStdString();
    }

private slots:
    void pairTruncationIsLongestFirstAndPopsTheSecondOnATie() {
        // BERT's _truncate_seq_pair (run_classifier.py): while the pair is too long, pop from the
        // longer, from the second when they are equal. A = 8, B = 4 tokens in 10 − 3 = 7 places:
        // 8/4 → … → 4/4 → 4/3, so A keeps a1..a4 and B keeps b1..b3.
        routescope::data::WordPieceTokenizer t(
            "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na1\na2\na3\na4\na5\na6\na7\na8\nb1\nb2\nb3\nb4\n");
        routescope::data::ClassificationSet set;
        set.path = "pairs.tsv";
        set.pairs = true;
        set.labels = {"0"};
        routescope::data::ClassificationExample e;
        e.text_a = "a1 a2 a3 a4 a5 a6 a7 a8";
        e.text_b = "b1 b2 b3 b4";
        e.label = "0";
        e.label_id = 0;
        set.examples.push_back(e);
        const auto out = routescope::train::classification_examples(set, t, 10);
        QCOMPARE(out.examples.size(), std::size_t{1});
        // [CLS]=2 a1..a4=5..8 [SEP]=3 b1..b3=13..15 [SEP]=3
        QCOMPARE(out.examples[0].tokens,
                 (std::vector<std::int32_t>{2, 5, 6, 7, 8, 3, 13, 14, 15, 3}));
    }

    void keywordRuleReachesHighValidationAccuracy() {
        train_test::write_text(path("kw_train.tsv"), keyword_tsv(240, 1));
        train_test::write_text(path("kw_valid.tsv"), keyword_tsv(100, 2));
        train::Finetuner tuner(tiny_classifier(path("kw_train.tsv"), path("kw_valid.tsv"), 5),
                               {path("kw"), 0, nullptr});
        QCOMPARE(tuner.config().model.n_labels, 2);
        QVERIFY(tuner.config().data.labels == std::vector<std::string>({"no", "yes"}));
        const train::FinetuneResult r = tuner.run();
        QVERIFY2(r.best_metric >= 0.95, qPrintable(QString::number(r.best_metric)));
        QCOMPARE(best_accuracy(path("kw/log.jsonl")), r.best_metric);
        const auto v = train_test::run_cli({"validate", QString::fromStdString(r.best_checkpoint)});
        QVERIFY2(v.exit_code == 0, qPrintable(v.out + v.err));
        const Checkpoint ck = read_checkpoint(r.best_checkpoint);
        QVERIFY(ck.config.data.labels == std::vector<std::string>({"no", "yes"}));
        QCOMPARE(ck.config.train.objective, std::string("classify"));
    }

    void pairsAreLearned() {
        train_test::write_text(path("p_train.tsv"), pair_tsv(240, 3));
        train_test::write_text(path("p_valid.tsv"), pair_tsv(100, 4));
        RunConfig c = tiny_classifier(path("p_train.tsv"), path("p_valid.tsv"), 6);
        c.model.type_embeddings = true;
        train::Finetuner tuner(c, {path("pairs"), 0, nullptr});
        QVERIFY(tuner.train_set().examples[0].types.back() == 1);  // segment b
        const train::FinetuneResult r = tuner.run();
        // Chance is 0.5; the rule needs the second segment only (measured 0.93 after 6 epochs).
        QVERIFY2(r.best_metric >= 0.85, qPrintable(QString::number(r.best_metric)));
    }

    // SNLI-style gold_label "-" rows (no annotator consensus) are left out of training and
    // validation, and the start record says how many.
    void noConsensusRowsAreLeftOutAndCounted() {
        train_test::write_text(path("snli_train.tsv"),
                               "gold_label\tsentence1\tsentence2\nneutral\ta b\tc\n-\td\te\n"
                               "entailment\tf\tg\ncontradiction\th\ti\n");
        train_test::write_text(path("snli_valid.tsv"),
                               "gold_label\tsentence1\tsentence2\n-\tj\tk\nneutral\tl\tm\n");
        RunConfig c = tiny_classifier(path("snli_train.tsv"), path("snli_valid.tsv"), 1);
        train::Finetuner tuner(c, {path("snli"), 0, nullptr});
        QCOMPARE(tuner.train_set().examples.size(), std::size_t(3));
        QVERIFY(tuner.config().data.labels ==
                std::vector<std::string>({"contradiction", "entailment", "neutral"}));
        tuner.run();
        const auto start = records(path("snli/log.jsonl"), "start",
                                   {"left_out_no_consensus", "train_sequences", "valid_sequences"});
        QCOMPARE(
            start.begin()->second,
            std::string(R"({"left_out_no_consensus":2,"train_sequences":3,"valid_sequences":1})"));
    }

    // A tokenizer that does not cover the text: the share of [UNK] tokens in the start record
    // (counted here by hand: the framing [CLS]/[SEP] left out), and a file that is [UNK] alone
    // refused naming it (the classifier learnt from lengths alone before).
    void aTokenizerThatDoesNotCoverTheTextIsSaid() {
        train_test::write_text(path("wp_vocab.txt"),
                               "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ngood\nbad\nfilm\n");
        // good movie (1 of 2 unknown) | bad film here (1 of 3) | a good film (1 of 3): 3 of 8.
        train_test::write_text(path("wp_train.tsv"),
                               "sentence\tlabel\ngood movie\t1\nbad film here\t0\n"
                               "a good film\t1\n");
        RunConfig c = tiny_classifier(path("wp_train.tsv"), path("wp_train.tsv"), 1);
        c.tokenizer.kind = "wordpiece";
        c.tokenizer.model = path("wp_vocab.txt");
        {
            train::Finetuner tuner(c, {path("wp"), 0, nullptr});
            tuner.run();
        }
        const auto start = records(path("wp/log.jsonl"), "start", {"unk_fraction"});
        QCOMPARE(start.begin()->second, std::string(R"({"unk_fraction":0.375})"));

        train_test::write_text(path("wp_unknown.tsv"),
                               "sentence\tlabel\nquite dull\t0\nsuperb\t1\n");
        RunConfig u = tiny_classifier(path("wp_unknown.tsv"), path("wp_unknown.tsv"), 1);
        u.tokenizer = c.tokenizer;
        try {
            train::Finetuner tuner(u, {path("wp_unknown"), 0, nullptr});
            QFAIL("a file the tokenizer reads as [UNK] alone was accepted");
        } catch (const ConfigError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find(path("wp_unknown.tsv")) != std::string::npos &&
                         what.find("every token is [UNK]") != std::string::npos,
                     what.c_str());
        }
    }

    void jsonLinesPairsAreFramedWithSegments() {
        // {"text_a","text_b","label"} with integer labels: numeric label order, [CLS] a [SEP] b
        // [SEP] with segment 1 from b on (bytes: one id per character, plus 5 specials offset).
        write_text_jsonl();
        RunConfig c = tiny_classifier(path("j.jsonl"), path("j.jsonl"), 1);
        train::Finetuner tuner(c, {path("jsonl"), 0, nullptr});
        QVERIFY(tuner.config().data.labels == std::vector<std::string>({"2", "10"}));
        const auto& e = tuner.train_set().examples[0];
        QCOMPARE(e.tokens.size(), std::size_t(1 + 2 + 1 + 3 + 1));  // "ab", "cde"
        QCOMPARE(e.tokens.front(), 2);                              // [CLS]
        QCOMPARE(e.tokens[3], 3);                                   // [SEP]
        QCOMPARE(e.tokens.back(), 3);
        QVERIFY(e.types == std::vector<std::int32_t>({0, 0, 0, 0, 1, 1, 1, 1}));
        QCOMPARE(e.label, 1);                                   // "10" sorts after "2" numerically
        QCOMPARE(tuner.config().train.steps, std::int64_t(1));  // 1 epoch of 2 rows, batch 8
        tuner.run();
    }

    void freezeSsmKeepsSsmParametersBitIdentical() {
        train_test::write_text(path("f_train.tsv"), keyword_tsv(64, 5));
        RunConfig c = tiny_classifier(path("f_train.tsv"), path("f_train.tsv"), 2);
        c.train.freeze_ssm = true;
        train::Finetuner tuner(c, {path("freeze"), 0, nullptr});
        const ParamStore& p = tuner.model().params();
        const std::vector<float> before(p.data(), p.data() + p.size());
        tuner.run();
        int ssm = 0, moved = 0, others = 0;
        for (const auto& e : p.entries()) {
            const bool same = std::memcmp(before.data() + e.offset, p.data() + e.offset,
                                          e.size * sizeof(float)) == 0;
            if (e.name.find(".ssm_forward.") != std::string::npos ||
                e.name.find(".ssm_backward.") != std::string::npos) {
                ++ssm;
                QVERIFY2(same, e.name.c_str());
            } else if (e.name.ends_with(".weight") && !e.name.starts_with("mlm.")) {
                ++others;
                moved += same ? 0 : 1;
            }
        }
        QCOMPARE(ssm, 2 * 2 * 5);  // 2 layers × 2 directions × {A_re, A_im, C, D, log_step}
        QCOMPARE(moved, others);   // every trained weight changed
        // The start record counts the frozen values as `parameters` counts values (session 34:
        // it gave the number of tensors, 20, beside parameters in numbers).
        std::size_t frozen = 0;
        for (const auto& e : p.entries())
            if (e.name.find(".ssm_forward.") != std::string::npos ||
                e.name.find(".ssm_backward.") != std::string::npos)
                frozen += e.size;
        QFile log(QString::fromStdString(path("freeze") + "/log.jsonl"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        const QJsonObject start = QJsonDocument::fromJson(log.readLine()).object();
        QCOMPARE(start.value("type").toString(), QString("start"));
        QCOMPARE(start.value("frozen_parameters").toInteger(), qint64(frozen));
        QCOMPARE(start.value("parameters").toInteger(), qint64(p.size()));
    }

    void initFromPretrainedCopiesEncoderAndFreshHead() {
        // A pretrained MLM checkpoint of 5 steps on a word corpus (same byte tokenizer).
        train_test::write_text(path("corpus.txt"), train_test::word_corpus(60, 7));
        auto pre = RunConfig::from_json(train_test::tiny_bigs(path("corpus.txt")));
        pre.train.steps = 5;
        pre.train.threads = 2;
        train::Trainer trainer(pre, {path("pre"), 0, nullptr, 0});  // RunOptions
        trainer.run();
        const Checkpoint ck = read_checkpoint(path("pre/model.ckpt.h5"));

        train_test::write_text(path("i_train.tsv"), keyword_tsv(32, 6));
        RunConfig c = tiny_classifier(path("i_train.tsv"), path("i_train.tsv"), 1);
        c.model.d_model = 64;  // ignored: the architecture is the checkpoint's
        c.train.init_from = path("pre/model.ckpt.h5");
        train::Finetuner tuner(c, {path("init"), 0, nullptr});
        QCOMPARE(tuner.config().model.d_model, 32);
        const ParamStore& p = tuner.model().params();
        for (const auto& e : ck.layout) {
            QVERIFY2(p.contains(e.name), e.name.c_str());
            QVERIFY2(std::memcmp(ck.params.data() + e.offset, p.param(e.name),
                                 e.size * sizeof(float)) == 0,
                     e.name.c_str());
        }
        QVERIFY(p.contains("classifier.out.weight"));
        QCOMPARE(p.entry("classifier.out.weight").shape, (std::vector<std::int64_t>{2, 32}));
        tuner.run();
    }

    // 64 rows, batch 8 × accumulation 2: 4 steps an epoch, 3 epochs; dropout on.
    RunConfig resumable_config() {
        train_test::write_text(path("r_train.tsv"), keyword_tsv(64, 8));
        train_test::write_text(path("r_valid.tsv"), keyword_tsv(40, 9));
        RunConfig c = tiny_classifier(path("r_train.tsv"), path("r_valid.tsv"), 3);
        c.model.dropout = 0.1;
        c.train.grad_accum = 2;
        c.train.clip_grad_norm = 0.5;
        c.train.threads = 2;
        return c;
    }

    void compare_runs(const std::string& straight, const std::string& split) {
        const std::string a = straight + "/log.jsonl", b = split + "/log.jsonl";
        const auto steps_a = train_test::step_losses(a), steps_b = train_test::step_losses(b);
        QCOMPARE(steps_a.size(), std::size_t(12));
        QCOMPARE(steps_b.size(), std::size_t(12));
        for (std::size_t k = 0; k < steps_a.size(); ++k)
            QVERIFY2(steps_a[k] == steps_b[k], qPrintable(QStringLiteral("step %1: %2 vs %3")
                                                              .arg(k + 1)
                                                              .arg(steps_a[k], 0, 'g', 17)
                                                              .arg(steps_b[k], 0, 'g', 17)));
        const std::vector<std::string> step_fields = {"loss", "lr", "grad_norm"};
        QCOMPARE(records(b, "step", step_fields), records(a, "step", step_fields));
        const std::vector<std::string> eval_fields = {"loss", "accuracy", "macro_f1", "examples"};
        const auto evals = records(a, "eval", eval_fields);
        QCOMPARE(evals.size(), std::size_t(3));  // after each epoch: steps 4, 8, 12
        QCOMPARE(records(b, "eval", eval_fields), evals);
        QCOMPARE(records(b, "best", {"accuracy"}), records(a, "best", {"accuracy"}));

        const Checkpoint ma = read_checkpoint(straight + "/model.ckpt.h5");
        const Checkpoint mb = read_checkpoint(split + "/model.ckpt.h5");
        QCOMPARE(mb.train->step, std::int64_t(12));
        QVERIFY(same_floats(ma.params, mb.params));
        QVERIFY(same_floats(ma.train->adam_m, mb.train->adam_m));
        QVERIFY(same_floats(ma.train->adam_v, mb.train->adam_v));
        QCOMPARE(mb.train->data_position, ma.train->data_position);
        QVERIFY(same_floats(read_checkpoint(straight + "/best.ckpt.h5").params,
                            read_checkpoint(split + "/best.ckpt.h5").params));
    }

    void resumeInTheMiddleOfAnEpochRepeatsTheStraightRunBitForBit() {
        const RunConfig c = resumable_config();
        train::Finetuner straight(c, {path("r_straight"), 0, nullptr});
        const train::FinetuneResult ra = straight.run();
        QCOMPARE(ra.step, std::int64_t(12));
        QVERIFY(ra.status == train::TrainResult::Status::finished);

        {
            train::Finetuner first(c, {path("r_split"), 0, nullptr, /*until=*/6});
            const train::FinetuneResult r = first.run();
            QVERIFY(r.status == train::TrainResult::Status::until);
            QCOMPARE(r.step, std::int64_t(6));
            QCOMPARE(read_checkpoint(path("r_split/model.ckpt.h5")).train->step, std::int64_t(6));
        }
        auto second = train::Finetuner::resume(path("r_split/model.ckpt.h5"), {},
                                               {path("r_split"), 0, nullptr});
        QCOMPARE(second->step(), std::int64_t(6));
        const train::FinetuneResult rb = second->run();
        QVERIFY(rb.status == train::TrainResult::Status::finished);
        QCOMPARE(rb.step, std::int64_t(12));
        QCOMPARE(rb.best_metric, ra.best_metric);
        QCOMPARE(rb.best_step, ra.best_step);
        compare_runs(path("r_straight"), path("r_split"));
        const ParamStore& pa = straight.model().params();
        const ParamStore& pb = second->model().params();
        QCOMPARE(pa.size(), pb.size());
        QVERIFY(std::memcmp(pa.data(), pb.data(), pa.size() * sizeof(float)) == 0);
    }

    void resumedRunTakesTheBestSoFarFromItsLog() {
        // The log says step 5 scored 1.0 (no later evaluation can beat it): the resumed run keeps
        // that best and writes no new best checkpoint.
        const RunConfig c = resumable_config();
        train::Finetuner(c, {path("r_best"), 0, nullptr, /*until=*/6}).run();
        std::ofstream(path("r_best/log.jsonl"), std::ios::app)
            << R"({"type":"eval","step":5,"loss":0.1,"accuracy":1.0})"
            << "\n";
        std::filesystem::remove(path("r_best/best.ckpt.h5"));
        auto resumed = train::Finetuner::resume(path("r_best/model.ckpt.h5"), {},
                                                {path("r_best"), 0, nullptr});
        const train::FinetuneResult r = resumed->run();
        QCOMPARE(r.best_metric, 1.0);
        QCOMPARE(r.best_step, std::int64_t(5));
        QVERIFY(records(path("r_best/log.jsonl"), "best", {"accuracy"}).rbegin()->first < 6);
        QVERIFY(!std::filesystem::exists(path("r_best/best.ckpt.h5")));
    }

    // docs/cli.md: the best metric so far comes from DIR/log.jsonl, "so DIR/best.ckpt.h5 is
    // replaced only by a better model". With the log missing, that metric is unknown: the resume
    // is refused naming the log and best.ckpt.h5, which keeps every byte (it was replaced by the
    // next, worse, evaluation). A named pipe for the log is refused at once (it blocked the
    // resume for ever). Without a best.ckpt.h5 there is no best to keep: the resume runs.
    void aResumeWhoseLogIsMissingKeepsTheBestCheckpoint() {
        const RunConfig c = resumable_config();
        train::Finetuner(c, {path("r_nolog"), 0, nullptr, /*until=*/6}).run();
        const std::string log = path("r_nolog/log.jsonl"), best = path("r_nolog/best.ckpt.h5");
        const auto bytes = [](const std::string& f) {
            std::ifstream in(f, std::ios::binary);
            return std::string(std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>());
        };
        const std::string best_bytes = bytes(best);
        QVERIFY(!best_bytes.empty());
        std::filesystem::rename(log, path("r_nolog.log.jsonl"));
        const auto resume = [&] {
            return train::Finetuner::resume(path("r_nolog/model.ckpt.h5"), {},
                                            {path("r_nolog"), 0, nullptr});
        };
        try {
            resume();
            QFAIL("a resume without its log was accepted beside best.ckpt.h5");
        } catch (const ConfigError& e) {
            const std::string m = e.what();
            QVERIFY2(m.find(log + ": missing") == 0 && m.find(best) != std::string::npos, e.what());
        }
        QVERIFY(bytes(best) == best_bytes);
        QVERIFY(!std::filesystem::exists(log));

        QVERIFY(::mkfifo(log.c_str(), 0600) == 0);
        try {
            resume();
            QFAIL("a named pipe was taken for the log");
        } catch (const FormatError& e) {
            QVERIFY2(std::string(e.what()).find(log + ": not a regular file") == 0, e.what());
        }
        std::filesystem::remove(log);

        std::filesystem::rename(best, path("r_nolog.best.ckpt.h5"));
        const train::FinetuneResult r = resume()->run();
        QVERIFY(r.status == train::TrainResult::Status::finished);
        QVERIFY(r.best_step > 6);  // the first evaluation after the resume
        QVERIFY(std::filesystem::exists(best));
    }

    // Each step's validation accuracy in a log ("eval" records), by step.
    static std::map<std::int64_t, double> eval_accuracy(const std::string& log) {
        std::map<std::int64_t, double> out;
        for (const auto& j : train_test::read_lines(log))
            if (j.value("type", "") == "eval")
                out[j["step"].get<std::int64_t>()] = j["accuracy"].get<double>();
        return out;
    }

    // A checkpoint's accuracy on `data`, computed by `routescope-cli eval` (not the run's log).
    double eval_score(const std::string& checkpoint, const std::string& data) {
        const auto r =
            train_test::run_cli({"eval", "--checkpoint", QString::fromStdString(checkpoint),
                                 "--data", QString::fromStdString(data), "--out",
                                 QString::fromStdString(path("lost_preds.jsonl"))});
        if (r.exit_code != 0) return -1;
        return nlohmann::json::parse(r.out.toStdString())["accuracy"].get<double>();
    }

    // docs/cli.md: a resumed fine-tuning run replaces DIR/best.ckpt.h5 "only by a better model".
    // A run that went on past its checkpoint and then lost its next save of model.ckpt.h5 (a full
    // disk, kill -9: model.ckpt.h5 stays the earlier one, put back here) left a best.ckpt.h5 of a
    // later, better step; resumed from the earlier checkpoint, the next evaluation replaced it
    // though worse (it beat only the log's records up to that checkpoint). Each best.ckpt.h5 is
    // scored with `routescope-cli eval` on the validation file. The same holds for a best.ckpt.h5
    // without its score (written before it carried one: its root attributes removed here): the
    // log's later "best" records say what it holds, and the resumed run's "start" record carries
    // that on past the log's cut, to the resume after.
    void aBestCheckpointOfALaterStepOutlivesALostSave() {
        RunConfig c = resumable_config();
        c.train.eval_every = 1;
        c.train.epochs = 0;
        c.train.steps = 40;
        const std::string valid = path("r_valid.tsv");
        // The accuracy stays at 0.6 to step 17, then climbs: 0.825 at 19, 0.875 at 20, 0.95 at
        // 21, and 1 at 31.
        constexpr std::int64_t kStop = 19;  // the checkpoint whose successor was lost
        for (const bool legacy : {false, true}) {
            const std::string dir = path(legacy ? "r_lost_old" : "r_lost");
            const std::string model = dir + "/model.ckpt.h5", best = dir + "/best.ckpt.h5",
                              log = dir + "/log.jsonl", kept_model = dir + ".step.ckpt.h5";
            train::Finetuner(c, {dir, 0, nullptr, /*until=*/kStop}).run();
            std::filesystem::copy_file(model, kept_model);
            train::Finetuner::resume(model, {}, {dir, 0, nullptr})->run();  // on to train.steps
            std::filesystem::copy_file(kept_model, model,
                                       std::filesystem::copy_options::overwrite_existing);
            const double kept = eval_score(best, valid);
            const auto acc = eval_accuracy(log);
            double before = -1;  // the best evaluation up to the checkpoint
            for (const auto& [step, a] : acc)
                if (step <= kStop) before = std::max(before, a);
            // The case: steps kStop + 1 and kStop + 2 each beat every evaluation before them,
            // not best.ckpt.h5.
            QVERIFY2(acc.at(kStop + 1) > before && acc.at(kStop + 2) > acc.at(kStop + 1) &&
                         acc.at(kStop + 2) < kept,
                     qPrintable(QStringLiteral("accuracy up to step %1: %2, then %3 and %4; "
                                               "best.ckpt.h5: %5")
                                    .arg(kStop)
                                    .arg(before)
                                    .arg(acc.at(kStop + 1))
                                    .arg(acc.at(kStop + 2))
                                    .arg(kept)));
            {
                H5::H5File f(best, legacy ? H5F_ACC_RDWR : H5F_ACC_RDONLY);
                if (legacy) {
                    for (const char* a : {"best_step", "best_metric", "best_value"})
                        f.removeAttr(a);
                } else {
                    // docs/formats/checkpoint.md: the file says what it holds.
                    double value = -1;
                    std::int64_t step = -1;
                    f.openAttribute("best_value").read(H5::PredType::NATIVE_DOUBLE, &value);
                    f.openAttribute("best_step").read(H5::PredType::NATIVE_INT64, &step);
                    QCOMPARE(value, kept);
                    QVERIFY(step > kStop);
                    QCOMPARE(acc.at(step), kept);
                }
            }
            auto resumed =
                train::Finetuner::resume(model, {}, {dir, 0, nullptr, /*until=*/kStop + 1});
            const train::FinetuneResult r = resumed->run();
            QCOMPARE(r.step, kStop + 1);
            QVERIFY2(eval_score(best, valid) >= kept,
                     qPrintable(QStringLiteral("best.ckpt.h5 (accuracy %1) replaced by a model "
                                               "of accuracy %2")
                                    .arg(kept)
                                    .arg(eval_score(best, valid))));
            QCOMPARE(r.best_metric, kept);
            // And once more from that checkpoint, the log now cut back to step kStop + 1: its
            // start record says what best.ckpt.h5 holds.
            for (const auto& j : train_test::read_lines(log))
                QVERIFY2(j["step"].get<std::int64_t>() <= kStop + 1, j.dump().c_str());
            train::Finetuner::resume(model, {}, {dir, 0, nullptr, /*until=*/kStop + 2})->run();
            QVERIFY(eval_score(best, valid) >= kept);
        }
    }

    void cliUntilAndResumeRepeatTheStraightRun() {
        const RunConfig c = resumable_config();
        const std::string config = path("r_cli.json");
        train_test::write_text(config, c.to_json().dump(2));
        auto r = train_test::run_cli({"train", "--config", QString::fromStdString(config), "--out",
                                      QString::fromStdString(path("r_cli_straight")), "--json"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        r = train_test::run_cli({"train", "--config", QString::fromStdString(config), "--out",
                                 QString::fromStdString(path("r_cli_split")), "--until", "6",
                                 "--json"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        QCOMPARE(read_checkpoint(path("r_cli_split/model.ckpt.h5")).train->step, std::int64_t(6));
        r = train_test::run_cli(
            {"train", "--resume", QString::fromStdString(path("r_cli_split")), "--json"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        compare_runs(path("r_cli_straight"), path("r_cli_split"));
    }

    // data.pair_gap through the CLI (docs/config.md): a pair file trains with 3 filler tokens
    // between the sentences, the checkpoint records the key and eval frames its pairs alike; a
    // file of single sentences, a gap that leaves the pair no room at data.seq_len, and a
    // negative gap are exit 2 naming the keys.
    void cliTrainsWithAPairGap() {
        train_test::write_text(path("gap_train.tsv"), pair_tsv(16, 7));
        RunConfig c = tiny_classifier(path("gap_train.tsv"), path("gap_train.tsv"), 0);
        c.train.steps = 2;
        const std::string config = path("gap.json");
        train_test::write_text(config, c.to_json().dump(2));
        const auto cfg = QString::fromStdString(config);
        auto r = train_test::run_cli({"train", "--config", cfg, "--out",
                                      QString::fromStdString(path("gap_run")), "--set",
                                      "data.pair_gap=3", "--json"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
        const Checkpoint ck = read_checkpoint(path("gap_run/model.ckpt.h5"));
        QCOMPARE(ck.config.data.pair_gap, 3);
        QCOMPARE(ck.config.data.pairs, std::optional<bool>(true));
        {  // and the log's start record names the gap beside the data
            QFile log(QString::fromStdString(path("gap_run/log.jsonl")));
            QVERIFY(log.open(QIODevice::ReadOnly));
            const auto start = nlohmann::json::parse(log.readLine().toStdString());
            QCOMPARE(start.value("type", ""), std::string("start"));
            QCOMPARE(start.value("pair_gap", -1), 3);
        }
        r = train_test::run_cli({"eval", "--checkpoint",
                                 QString::fromStdString(path("gap_run/model.ckpt.h5")), "--data",
                                 QString::fromStdString(path("gap_train.tsv")), "--out",
                                 QString::fromStdString(path("gap_preds.jsonl"))});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
        QCOMPARE(train_test::read_lines(path("gap_preds.jsonl")).size(), std::size_t{16});

        // Single sentences: no place for a gap.
        train_test::write_text(path("gap_single.tsv"), "sentence\tlabel\nalpha\tyes\nbravo\tno\n");
        r = train_test::run_cli(
            {"train", "--config", cfg, "--out", QString::fromStdString(path("gap_single")), "--set",
             "data.train=" + QString::fromStdString(path("gap_single.tsv")), "--set",
             "data.valid=" + QString::fromStdString(path("gap_single.tsv")), "--set",
             "data.pair_gap=3"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("data.pair_gap") && r.err.contains("gap_single.tsv"),
                 qPrintable(r.err));
        // 60 filler tokens at data.seq_len 64 leave 1 place for the pair's 2 sentences.
        r = train_test::run_cli({"train", "--config", cfg, "--out",
                                 QString::fromStdString(path("gap_long")), "--set",
                                 "data.pair_gap=60"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("data.pair_gap") && r.err.contains("data.seq_len"),
                 qPrintable(r.err));
        QVERIFY(!std::filesystem::exists(path("gap_long/model.ckpt.h5")));
        r = train_test::run_cli({"train", "--config", cfg, "--out",
                                 QString::fromStdString(path("gap_neg")), "--set",
                                 "data.pair_gap=-1"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("data.pair_gap"), qPrintable(r.err));
    }

    void badInputNamesTheCulprit() {
        // A row with a missing field: the file and its line number.
        train_test::write_text(path("bad_row.tsv"), "sentence\tlabel\nalpha\tyes\nbravo\n");
        try {
            train::Finetuner t(tiny_classifier(path("bad_row.tsv"), path("bad_row.tsv"), 1),
                               {path("bad1"), 0, nullptr});
            QFAIL("malformed row accepted");
        } catch (const FormatError& e) {
            QVERIFY2(std::string(e.what()).find("bad_row.tsv:3") != std::string::npos, e.what());
        }
        train_test::write_text(path("no_label.tsv"), "sentence\tidx\nalpha\t1\n");
        try {
            train::Finetuner t(tiny_classifier(path("no_label.tsv"), path("no_label.tsv"), 1),
                               {path("bad2"), 0, nullptr});
            QFAIL("missing label column accepted");
        } catch (const FormatError& e) {
            QVERIFY2(std::string(e.what()).find("label") != std::string::npos, e.what());
        }
        RunConfig c = tiny_classifier(path("no_label.tsv"), path("no_label.tsv"), 1);
        c.data.task = "no-such-task";
        try {
            train::Finetuner t(c, {path("bad3"), 0, nullptr});
            QFAIL("unknown task accepted");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).find("no-such-task") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestFinetune)
#include "test_finetune.moc"
