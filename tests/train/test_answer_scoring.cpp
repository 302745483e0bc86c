// Generative scoring of a task's answer by a causal checkpoint (engine/train/answer_scoring.hpp;
// issue 7, the phone-book experiment):
// - the rows of clm, prefix_lm and birdie for a hand-built example whose answer span is known:
//   tokens, labels at the answer positions only, reset mask (values written out by hand from the
//   documented layout);
// - causality of the score: changing the token after the answer (the closing [SEP]) leaves the
//   predictions and the loss of every example bit-identical, for Birdie in causal and in prefix
//   mode, while changing a prompt token does change them (so the check is not vacuous);
// - the task corpus: completed sequences, one per example, and a class-label task refused.
#include <QtTest>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/data/special_tokens.hpp"
#include "engine/data/task.hpp"
#include "engine/models/birdie_block.hpp"
#include "engine/models/model.hpp"
#include "engine/train/answer_scoring.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/task_corpus.hpp"

using namespace routescope;
using namespace routescope::train;

namespace {

constexpr std::int32_t kIgn = -100;
constexpr std::int32_t N = models::kResetNewSample, C = models::kResetCausal;

struct Row {
    std::vector<std::int32_t> tokens, labels, reset;
    explicit Row(int L) : tokens(L), labels(L), reset(L) {}
    RowView view() { return {tokens.data(), labels.data(), reset.data(), int(tokens.size())}; }
};

RunConfig birdie_config(const std::string& mode, const std::string& objective, int vocab) {
    nlohmann::json j = {{"model",
                         {{"arch", "birdie"},
                          {"d_model", 16},
                          {"n_layers", 2},
                          {"max_len", 128},
                          {"vocab_size", vocab},
                          {"dropout", 0.0},
                          {"birdie", {{"mode", mode}, {"layer_pattern", "uniform"}}}}},
                        {"train", {{"objective", objective}}}};
    return RunConfig::from_json(j);
}

}  // namespace

class TestAnswerScoring : public QObject {
    Q_OBJECT

private slots:
    void rowsOfAHandBuiltExample() {
        // [CLS] a b : d1 - d2 [SEP] with the answer d1 - d2 at positions 4..6.
        const std::vector<std::int32_t> seq = {2, 10, 11, 12, 20, 13, 21, 3};
        const std::vector<std::int32_t> targets = {kIgn, kIgn, kIgn, kIgn, 20, kIgn, 21, kIgn};
        const auto [first, last] = answer_span(targets);
        QCOMPARE(first, 4);
        QCOMPARE(last, 6);
        const data::BirdieVocabulary vocab{30};  // paradigm prefix_lm = 35, [start] = 37
        {
            Row r(10);
            std::int32_t at = -1;
            QCOMPARE(answer_row("clm", seq, first, last, vocab, r.view(), &at), 8);
            QCOMPARE(at, 3);
            QCOMPARE(r.tokens, (std::vector<std::int32_t>{2, 10, 11, 12, 20, 13, 21, 3, 0, 0}));
            QCOMPARE(r.labels, (std::vector<std::int32_t>{kIgn, kIgn, kIgn, 20, 13, 21, kIgn, kIgn,
                                                          kIgn, kIgn}));
            QCOMPARE(r.reset, (std::vector<std::int32_t>{N | C, C, C, C, C, C, C, C, C, C}));
        }
        {
            Row r(10);
            QCOMPARE(answer_row("prefix_lm", seq, first, last, vocab, r.view()), 8);
            QCOMPARE(r.labels, (std::vector<std::int32_t>{kIgn, kIgn, kIgn, 20, 13, 21, kIgn, kIgn,
                                                          kIgn, kIgn}));
            QCOMPARE(r.reset, (std::vector<std::int32_t>{N, 0, 0, 0, C, C, C, C, C, C}));
        }
        {
            Row r(10);
            std::int32_t at = -1;
            QCOMPARE(answer_row("birdie", seq, first, last, vocab, r.view(), &at), 9);
            QCOMPARE(at, 4);
            QCOMPARE(r.tokens, (std::vector<std::int32_t>{35, 10, 11, 12, 37, 20, 13, 21, 3, 0}));
            QCOMPARE(r.labels, (std::vector<std::int32_t>{kIgn, kIgn, kIgn, kIgn, 20, 13, 21, kIgn,
                                                          kIgn, kIgn}));
            QCOMPARE(r.reset, (std::vector<std::int32_t>{N, 0, 0, 0, 0, C, C, C, C, C}));
        }
        {
            // The next-token arm's layout: [next_token] [start] then the example without [CLS];
            // only the paradigm and [start] are prefix.
            Row r(10);
            std::int32_t at = -1;
            QCOMPARE(answer_row("birdie", seq, first, last, vocab, r.view(), &at,
                                data::Paradigm::next_token),
                     9);
            QCOMPARE(at, 4);
            const std::int32_t next_token = vocab.paradigm(data::Paradigm::next_token);
            QCOMPARE(r.tokens,
                     (std::vector<std::int32_t>{next_token, 37, 10, 11, 12, 20, 13, 21, 3, 0}));
            QCOMPARE(r.labels, (std::vector<std::int32_t>{kIgn, kIgn, kIgn, kIgn, 20, 13, 21, kIgn,
                                                          kIgn, kIgn}));
            QCOMPARE(r.reset, (std::vector<std::int32_t>{N, 0, C, C, C, C, C, C, C, C}));
            QVERIFY_THROWS_EXCEPTION(
                ConfigError, answer_row("birdie", seq, first, last, vocab, r.view(), nullptr,
                                        data::Paradigm::copying));
        }
        Row small(8);  // birdie needs 9 positions
        QVERIFY_THROWS_EXCEPTION(Error,
                                 answer_row("birdie", seq, first, last, vocab, small.view()));
    }

    void changingTheTokenAfterTheAnswerChangesNothing() {
        data::TaskParams p;
        p.seed = 5;
        p.n_train = 0;
        p.n_valid = 0;
        p.n_test = 6;
        p.min_entries = 2;
        p.max_entries = 5;
        const data::TaskData task = data::generate_task("phone-book", p);
        const LabelledSet set = task_examples(task, 2);
        const auto V = static_cast<int>(task.vocab.size());
        using data::Paradigm;
        const std::vector<std::pair<std::string, Paradigm>> scorings = {
            {"clm", Paradigm::prefix_lm},
            {"birdie", Paradigm::prefix_lm},
            {"birdie", Paradigm::next_token}};
        for (const auto& [objective, layout] : scorings) {
            for (const std::string mode : {"causal", "prefix"}) {
                const RunConfig config =
                    birdie_config(mode, objective, V + data::objective_extra_ids(objective));
                models::Model model(config, 4, set.max_length() + 1, 1);
                model.init(11);
                const data::BirdieVocabulary vocab{V};
                const auto base = predict_answers(model, set, objective, vocab, layout);
                LabelledSet after = set, prompt = set;
                for (auto& e : after.examples) {
                    QCOMPARE(e.tokens.back(), data::kSepId);
                    QCOMPARE(e.targets.back(), kIgn);
                    e.tokens.back() = 7;  // a name piece where the closing [SEP] was
                }
                for (auto& e : prompt.examples) {  // the query's first name, 3 before the answer
                    const auto q = static_cast<std::size_t>(answer_span(e.targets).first - 3);
                    e.tokens[q] = e.tokens[q] == 5 ? 6 : 5;
                }
                const auto changed_after = predict_answers(model, after, objective, vocab, layout);
                const auto changed_prompt =
                    predict_answers(model, prompt, objective, vocab, layout);
                bool prompt_mattered = false;
                for (std::size_t i = 0; i < base.size(); ++i) {
                    QVERIFY(base[i].scored);
                    QCOMPARE(base[i].expected.size(), std::size_t{12});  // ddd-ddd-dddd
                    QCOMPARE(changed_after[i].predicted, base[i].predicted);
                    QCOMPARE(changed_after[i].loss, base[i].loss);
                    prompt_mattered = prompt_mattered || changed_prompt[i].loss != base[i].loss;
                }
                QVERIFY2(prompt_mattered,
                         qPrintable(QString::fromStdString(objective + " " + mode + " layout " +
                                                           std::to_string(int(layout)))));
            }
        }
    }

    void taskCorpusHoldsCompletedExamples() {
        data::TaskParams p;
        p.seed = 2;
        p.n_train = 3;
        p.n_valid = 0;
        p.n_test = 1;
        const data::TaskData task = data::generate_task("phone-book", p);
        const int L = task_sequence_length(task, "birdie");
        std::size_t longest = 0;
        for (const auto* s : {&task.train, &task.test})
            for (const auto& e : *s)
                longest = std::max(longest, e.input.size());
        QCOMPARE(L, static_cast<int>(longest) + 1);
        const PackedCorpus c = task_corpus(task, L);
        QCOMPARE(c.train.size(), std::int64_t{3});
        QVERIFY(c.valid_is_train);
        for (std::int64_t i = 0; i < 3; ++i) {
            const auto& e = task.train[static_cast<std::size_t>(i)];
            QCOMPARE(c.train.length(i), static_cast<std::int32_t>(e.input.size()));
            for (std::size_t t = 0; t < e.input.size(); ++t) {
                const std::int32_t want = e.targets[t] != kIgn ? e.targets[t] : e.input[t];
                QCOMPARE(c.train.ids(i)[t], want);
                QVERIFY(c.train.ids(i)[t] != data::kMaskId);
            }
        }
        data::TaskParams g;
        g.n_train = 2;
        g.n_valid = 0;
        g.n_test = 0;
        QVERIFY_THROWS_EXCEPTION(ConfigError,
                                 task_corpus(data::generate_task("gap-matching", g), 64));
    }
};

QTEST_APPLESS_MAIN(TestAnswerScoring)
#include "test_answer_scoring.moc"
