// Gap matching (the BiGS talk's "matching across gaps", QNLI-like): a question of q distinct
// content words, then a passage of sentences (each `sentence_len` words and "."). Label 1 iff one
// passage sentence contains all q question words. Every example has one target sentence t: for
// label 1 it holds all q words, for label 0 exactly q − 1 of them (a near miss, so the answer needs
// the whole question); no other sentence holds all q (such sentences are redrawn).
// Input: [CLS] question [SEP] sentence₁ . sentence₂ . … [SEP].
// Attribute "distance": tokens strictly between the question's last word and sentence t's first
// word (1 for the first sentence: the [SEP]); the talk's H P (adjacent) vs H ~ P (separated).
#include <algorithm>
#include <cmath>

#include "engine/data/task_builder.hpp"

namespace routescope::data {

namespace {
// A draw is one sentence of at most 256 words: a thousand a sentence cost little, and beyond that
// the rarest settings need 10^45 (below).
constexpr double kMaxDraws = 1000;

// The expected draws of the rarest sentence (file comment in generate_gap_matching): m words
// uniform over w, q of them question words.
double expected_draws(int w, int q, int m) {
    const double miss = 1.0 - 1.0 / w;
    // A label-0 target: q − 1 planted, the last question word absent from the m − q + 1 others.
    const double target = std::pow(miss, m - q + 1);
    // Another sentence: not all q question words among its m (inclusion–exclusion).
    double all = 0, choose = 1;
    for (int j = 0; j <= q; ++j) {
        all += (j % 2 ? -choose : choose) * std::pow(1.0 - static_cast<double>(j) / w, m);
        choose = choose * (q - j) / (j + 1);
    }
    const double other = 1.0 - all;
    return 1.0 / std::max(std::min(target, other), 1e-300);
}
}  // namespace

TaskData generate_gap_matching(const TaskParams& p) {
    const int w = or_default(p.n_symbols, 32), q = or_default(p.question_len, 3);
    const int m = or_default(p.sentence_len, 6);
    const int lo = or_default(p.min_entries, 4), hi = or_default(p.max_entries, 8);
    require_range("gap-matching", "question_len", q, 1, 16);
    require_range("gap-matching", "n_symbols", w, q + 2, 100000);
    require_range("gap-matching", "sentence_len", m, q, 256);
    // A sentence is redrawn until it holds the question words it should: a label-0 target all but
    // one (absent from its other m − q + 1 words), any other sentence not all q. With long
    // sentences of few words that is rare (q = 1, 3 words, m = 256: one draw in 10^45), and
    // drawing never ended: refused beyond kMaxDraws expected draws a sentence.
    if (const double draws = expected_draws(w, q, m); draws > kMaxDraws) {
        int longest = q;
        while (longest < m && expected_draws(w, q, longest + 1) <= kMaxDraws)
            ++longest;
        throw ConfigError("task gap-matching: data.task_params.sentence_len = " +
                          std::to_string(m) + " is too long for n_symbols = " + std::to_string(w) +
                          " words and question_len = " + std::to_string(q) +
                          ": a sentence would be drawn about " +
                          std::to_string(static_cast<long long>(std::min(draws, 1e18))) +
                          " times before it holds the question words it should; give "
                          "sentence_len of at most " +
                          std::to_string(longest) + " or more n_symbols");
    }
    // The example, [CLS] question [SEP] (sentence .)×n [SEP], within kMaxTaskLength tokens:
    // max_entries before min_entries and before any product (2^31 − 1 sentences was a bare
    // out-of-memory error).
    require_range("gap-matching", "max_entries", hi, 1, (kMaxTaskLength - q - 3) / (m + 1));
    require_range("gap-matching", "min_entries", lo, 1, hi);
    TaskData data = make_task_data("gap-matching", TaskMetric::Accuracy, 2);
    TaskVocab vocab;
    std::vector<std::int32_t> words;
    for (int i = 0; i < w; ++i)
        words.push_back(vocab.add(numbered_piece("w", i)));
    const std::int32_t stop = vocab.add(".");
    data.vocab = vocab.pieces();
    generate_splits(data, p, [&](RandomStream& rng) {
        // q distinct question words (a partial Fisher–Yates over the word list).
        std::vector<std::int32_t> pool = words, question;
        for (int i = 0; i < q; ++i) {
            const auto j =
                static_cast<std::size_t>(i) +
                static_cast<std::size_t>(rng.below(pool.size() - static_cast<std::size_t>(i)));
            std::swap(pool[static_cast<std::size_t>(i)], pool[j]);
            question.push_back(pool[static_cast<std::size_t>(i)]);
        }
        const auto count_question_words = [&](const std::vector<std::int32_t>& s) {
            int c = 0;
            for (const auto qw : question)
                c += std::find(s.begin(), s.end(), qw) != s.end();
            return c;
        };
        const auto n_sent = static_cast<int>(rng.between(lo, hi));
        const auto target = static_cast<int>(rng.below(static_cast<std::uint64_t>(n_sent)));
        const std::int32_t label = rng.chance(0.5) ? 1 : 0;
        std::vector<std::vector<std::int32_t>> sentences(static_cast<std::size_t>(n_sent));
        for (int si = 0; si < n_sent; ++si) {
            auto& s = sentences[static_cast<std::size_t>(si)];
            const int plant = si == target ? q - (label == 1 ? 0 : 1) : 0;
            for (;;) {
                s.assign(static_cast<std::size_t>(m), 0);
                for (auto& t : s)
                    t = words[rng.below(words.size())];
                // Plant the first `plant` question words at distinct positions.
                std::vector<std::size_t> pos(static_cast<std::size_t>(m));
                for (std::size_t i = 0; i < pos.size(); ++i)
                    pos[i] = i;
                rng.shuffle(pos);
                for (int i = 0; i < plant; ++i)
                    s[pos[static_cast<std::size_t>(i)]] = question[static_cast<std::size_t>(i)];
                const int have = count_question_words(s);
                if (si == target ? have == plant : have < q) break;
            }
        }
        TaskExample e;
        e.label = label;
        e.input.push_back(kClsId);
        e.input.insert(e.input.end(), question.begin(), question.end());
        const auto last_question = static_cast<int>(e.input.size()) - 1;
        e.input.push_back(kSepId);
        int target_start = 0;
        for (int si = 0; si < n_sent; ++si) {
            if (si == target) target_start = static_cast<int>(e.input.size());
            const auto& s = sentences[static_cast<std::size_t>(si)];
            e.input.insert(e.input.end(), s.begin(), s.end());
            e.input.push_back(stop);
        }
        e.input.push_back(kSepId);
        e.attributes["distance"] = target_start - last_question - 1;
        return e;
    });
    return data;
}

}  // namespace routescope::data
