// The Birdie objectives as sample transforms (TASKS.md "Objectives"): each target is recoverable
// from what the objective says (infilling: the sentinels filled with the target's spans give back
// the original; deshuffling: the input is a permutation of the target, which is the original;
// selective copying: every target span sits in the context between its query's tokens; prefix
// LM: input + target is the original), a sample is a pure function of its random stream, and the
// span sampler's corrupted fraction and mean span length match the closed form of TASKS.md's rule,
// computed here from the Poisson pmf (not from the sampler), over ~10^6 positions.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/data/objectives/birdie_objectives.hpp"

using namespace routescope;
using namespace routescope::data;

namespace {
// The sample a transform writes (every transform fills a caller's ObjectiveSample).
template <class Write>
ObjectiveSample out_of(Write&& write) {
    ObjectiveSample s;
    write(s);
    return s;
}

const BirdieVocabulary kVocab{300};  // a tokenizer of 300 ids: the Birdie specials are 300..341

// n distinct regular ids (5, 6, …), so a token identifies its position.
std::vector<std::int32_t> distinct(int n) {
    std::vector<std::int32_t> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 5);
    return v;
}

// Random regular ids below 300 (repeats allowed), from a stream of their own.
std::vector<std::int32_t> random_text(int n, std::uint32_t which) {
    RandomStream rng(777, 1, which);
    std::vector<std::int32_t> v(static_cast<std::size_t>(n));
    for (auto& x : v)
        x = static_cast<std::int32_t>(5 + rng.below(295));
    return v;
}

// The target of infilling split into its segments: each begins with a sentinel.
std::vector<std::vector<std::int32_t>> segments(const std::vector<std::int32_t>& target) {
    std::vector<std::vector<std::int32_t>> out;
    for (auto id : target) {
        if (kVocab.is_sentinel(id))
            out.push_back({id});
        else if (!out.empty())
            out.back().push_back(id);
    }
    return out;
}

// E[r'] / (1 + E[r'] − E[r']·E[1/ℓ]) and 1/E[1/ℓ] of the rule: the renewal-reward closed form of
// "per position draw r', ℓ; mask ℓ tokens with probability r'/ℓ, else keep one".
std::pair<double, double> closed_form(double r, double mu) {
    const double lo = std::max(1.0, std::ceil(mu / 3)), hi = std::max(lo, std::floor(3 * mu));
    double e_inv = 0;
    for (int k = 0; k < 400; ++k) {
        const double p = std::exp(-mu + k * std::log(mu) - std::lgamma(k + 1.0));
        e_inv += p / std::clamp(double(k), lo, hi);
    }
    const double e_r = (0.5 * r + std::min(0.95, 2 * r)) / 2;
    return {e_r / (1 + e_r - e_r * e_inv), 1 / e_inv};
}

}  // namespace

class TestBirdieObjectives : public QObject {
    Q_OBJECT

private slots:
    void special_ids_follow_the_tokenizer() {
        QCOMPARE(kVocab.paradigm(Paradigm::infilling), 300);
        QCOMPARE(kVocab.paradigm(Paradigm::next_token), 306);
        QCOMPARE(kVocab.start(), 307);
        QCOMPARE(kVocab.done(), 308);
        QCOMPARE(kVocab.query(), 309);
        QCOMPARE(kVocab.sentinel(0), 310);
        QCOMPARE(kVocab.sentinel(31), 341);
        QCOMPARE(kVocab.sentinel(32), 310);  // cyclic
        QCOMPARE(kVocab.size(), 342);
        QCOMPARE(birdie_piece(kVocab, 300), std::string("[infill]"));
        QCOMPARE(birdie_piece(kVocab, 313), std::string("[S3]"));
        QCOMPARE(birdie_piece(kVocab, 299), std::string());
    }

    void span_length_clip_is_tasks_interval() {
        QCOMPARE(span_length_bounds(3.0), (std::pair<std::int32_t, std::int32_t>{1, 9}));
        QCOMPARE(span_length_bounds(8.0), (std::pair<std::int32_t, std::int32_t>{3, 24}));
        QCOMPARE(span_length_bounds(1.0), (std::pair<std::int32_t, std::int32_t>{1, 3}));
    }

    void span_statistics_match_the_closed_form_data() {
        QTest::addColumn<double>("r");
        QTest::addColumn<double>("mu");
        QTest::newRow("r=0.15 mu=3") << 0.15 << 3.0;
        QTest::newRow("r=0.5 mu=8") << 0.5 << 8.0;
        QTest::newRow("r=0.3 mu=5") << 0.3 << 5.0;
    }
    void span_statistics_match_the_closed_form() {
        QFETCH(double, r);
        QFETCH(double, mu);
        std::int64_t masked = 0, spans = 0, positions = 0;
        const auto [lo, hi] = span_length_bounds(mu);
        for (std::uint32_t s = 0; s < 100; ++s) {
            RandomStream rng(5, 0, s);
            const auto v = sample_spans(10000, {r, mu}, rng);
            std::int32_t end = 0;
            for (const auto& sp : v) {
                QVERIFY(sp.begin >= end);  // in order, disjoint
                QVERIFY(sp.length >= 1 && sp.length <= hi);
                end = sp.begin + sp.length;
                masked += sp.length;
            }
            QVERIFY(end <= 10000);
            spans += static_cast<std::int64_t>(v.size());
            positions += 10000;
        }
        const auto [fraction, mean_span] = closed_form(r, mu);
        const double f = double(masked) / double(positions), m = double(masked) / double(spans);
        // 10^6 positions: the standard error of both is under 0.5%; 2% leaves no flakiness.
        QVERIFY2(std::fabs(f / fraction - 1) < 0.02,
                 qPrintable(QStringLiteral("fraction %1, closed form %2").arg(f).arg(fraction)));
        QVERIFY2(std::fabs(m / mean_span - 1) < 0.02,
                 qPrintable(QStringLiteral("mean span %1, closed form %2").arg(m).arg(mean_span)));
        // The literal rule lands near r and below μ (docs/decisions.md), never far off.
        QVERIFY(f > 0.5 * r && f < 1.25 * r);
        QVERIFY(m >= lo && m <= mu);
    }

    void infilling_sentinels_filled_with_target_give_the_original() {
        for (std::uint32_t s = 0; s < 200; ++s) {
            const auto original = random_text(60 + static_cast<int>(s % 40), s);
            RandomStream rng(11, 3, s);
            const auto sample = out_of([&](ObjectiveSample& out) {
                infilling(original, {s % 2 ? 0.5 : 0.15, s % 2 ? 8.0 : 3.0}, kVocab, rng, out);
            });
            const auto segs = segments(sample.target);
            QVERIFY(sample.target.empty() || kVocab.is_sentinel(sample.target.front()));
            std::vector<std::int32_t> rebuilt;
            std::size_t k = 0;
            for (auto id : sample.input) {
                if (!kVocab.is_sentinel(id)) {
                    rebuilt.push_back(id);
                    continue;
                }
                QVERIFY(k < segs.size());
                QCOMPARE(segs[k].front(), id);  // the same sentinel opens the span
                QVERIFY(segs[k].size() >= 2);   // a span has at least one token
                rebuilt.insert(rebuilt.end(), segs[k].begin() + 1, segs[k].end());
                ++k;
            }
            QCOMPARE(k, segs.size());
            QCOMPARE(rebuilt, original);
        }
    }

    void autoencoding_targets_the_whole_original() {
        for (std::uint32_t s = 0; s < 50; ++s) {
            const auto original = random_text(80, s);
            RandomStream rng(12, 0, s);
            const auto sample = out_of([&](ObjectiveSample& out) {
                autoencoding(original, {0.3, 3.0}, kVocab, rng, out);
            });
            QCOMPARE(sample.target, original);
            // The input keeps the unmasked tokens in order around its sentinels.
            std::vector<std::int32_t> kept;
            for (auto id : sample.input)
                if (!kVocab.is_sentinel(id)) kept.push_back(id);
            std::size_t j = 0;
            for (auto id : original)
                if (j < kept.size() && kept[j] == id) ++j;
            QCOMPARE(j, kept.size());  // a subsequence
        }
    }

    void deshuffling_input_is_a_permutation_of_the_original_data() {
        QTest::addColumn<double>("fraction");
        QTest::newRow("50%") << 0.5;
        QTest::newRow("100%") << 1.0;
    }
    void deshuffling_input_is_a_permutation_of_the_original() {
        QFETCH(double, fraction);
        const int n = 200;
        const auto original = distinct(n);
        std::int64_t moved_total = 0;
        for (std::uint32_t s = 0; s < 50; ++s) {
            RandomStream rng(13, 0, s);
            const auto sample =
                out_of([&](ObjectiveSample& out) { deshuffling(original, fraction, rng, out); });
            QCOMPARE(sample.target, original);
            auto a = sample.input, b = original;
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            QCOMPARE(a, b);
            int moved = 0;
            for (int i = 0; i < n; ++i)
                moved += sample.input[static_cast<std::size_t>(i)] !=
                         original[static_cast<std::size_t>(i)];
            QVERIFY(moved <= std::lround(fraction * n));
            moved_total += moved;
        }
        // A uniform permutation of m items leaves one fixed point on average: m − 1 moved.
        const double mean_moved = double(moved_total) / 50;
        QVERIFY2(std::fabs(mean_moved - (fraction * n - 1)) < 2,
                 qPrintable(QString::number(mean_moved)));
    }

    void copying_targets_the_input() {
        const auto original = random_text(40, 1);
        const auto sample = out_of([&](ObjectiveSample& out) { copying(original, out); });
        QCOMPARE(sample.input, original);
        QCOMPARE(sample.target, original);
    }

    void selective_copying_spans_sit_between_their_query_tokens() {
        const auto original = distinct(100);
        for (std::uint32_t s = 0; s < 100; ++s) {
            RandomStream rng(14, 0, s);
            SelectiveCopyingParams p;
            const auto sample = out_of(
                [&](ObjectiveSample& out) { selective_copying(original, p, kVocab, rng, out); });
            QVERIFY(std::equal(original.begin(), original.end(), sample.input.begin()));
            QCOMPARE(sample.target.back(), kVocab.done());
            // Queries: [query] before S_q after; the target: S_q span, in query order.
            std::vector<std::int32_t> tail(sample.input.begin() + 100, sample.input.end());
            const auto segs =
                segments(std::vector<std::int32_t>(sample.target.begin(), sample.target.end() - 1));
            QCOMPARE(static_cast<int>(segs.size()), p.queries);
            std::size_t at = 0;
            for (int q = 0; q < p.queries; ++q) {
                QCOMPARE(tail[at], kVocab.query());
                ++at;
                std::vector<std::int32_t> before, after;
                while (tail[at] != kVocab.sentinel(q))
                    before.push_back(tail[at++]);
                ++at;
                while (at < tail.size() && tail[at] != kVocab.query())
                    after.push_back(tail[at++]);
                QCOMPARE(segs[static_cast<std::size_t>(q)].front(), kVocab.sentinel(q));
                std::vector<std::int32_t> whole = before;
                whole.insert(whole.end(), segs[static_cast<std::size_t>(q)].begin() + 1,
                             segs[static_cast<std::size_t>(q)].end());
                whole.insert(whole.end(), after.begin(), after.end());
                const int span = static_cast<int>(segs[static_cast<std::size_t>(q)].size()) - 1;
                QVERIFY(span >= p.min_span && span <= p.max_span);
                QVERIFY(before.size() <= std::size_t(p.context));
                QVERIFY(after.size() <= std::size_t(p.context));
                QVERIFY(std::search(original.begin(), original.end(), whole.begin(), whole.end()) !=
                        original.end());
            }
            QCOMPARE(at, tail.size());
        }
    }

    void prefix_lm_splits_the_original_around_the_fraction() {
        const auto original = distinct(1000);
        double sum = 0;
        double lowest = 1, highest = 0;
        const int draws = 20000;
        for (int s = 0; s < draws; ++s) {
            RandomStream rng(15, 0, static_cast<std::uint32_t>(s));
            const auto sample =
                out_of([&](ObjectiveSample& out) { prefix_lm(original, 0.75, rng, out); });
            auto joined = sample.input;
            joined.insert(joined.end(), sample.target.begin(), sample.target.end());
            if (s < 100) QCOMPARE(joined, original);
            QVERIFY(!sample.input.empty() && !sample.target.empty());
            const double phi = double(sample.input.size()) / 1000;
            sum += phi;
            lowest = std::min(lowest, phi);
            highest = std::max(highest, phi);
        }
        // φ ~ U(0.5, 1): mean 0.75 (standard error 0.001 over 20000 draws), range [0.5, 1).
        QVERIFY(std::fabs(sum / draws - 0.75) < 0.005);
        QVERIFY(lowest >= 0.5 && lowest < 0.51);
        QVERIFY(highest > 0.99 && highest <= 0.999);
        // Short rows still have a prefix and a suffix.
        RandomStream rng(15, 1, 0);
        QCOMPARE(prefix_split(2, 0.75, rng), 1);
        QCOMPARE(prefix_split(1, 0.75, rng), 1);
    }

    void next_token_targets_everything() {
        const auto original = random_text(30, 2);
        const auto sample = out_of([&](ObjectiveSample& out) { next_token(original, out); });
        QVERIFY(sample.input.empty());
        QCOMPARE(sample.target, original);
    }

    void samples_are_a_pure_function_of_the_stream() {
        const auto original = random_text(120, 3);
        const auto run = [&](std::uint32_t stream) {
            RandomStream a(21, 4, stream);
            auto x = out_of([&](ObjectiveSample& out) {
                infilling(original, {0.15, 3.0}, kVocab, a, out);
            });
            RandomStream b(21, 4, stream);
            auto y = out_of([&](ObjectiveSample& out) { deshuffling(original, 0.5, b, out); });
            RandomStream c(21, 4, stream);
            auto z = out_of(
                [&](ObjectiveSample& out) { selective_copying(original, {}, kVocab, c, out); });
            return std::vector<std::vector<std::int32_t>>{x.input, x.target, y.input, z.input,
                                                          z.target};
        };
        QCOMPARE(run(0), run(0));
        QVERIFY(run(0) != run(1));
    }
};

QTEST_APPLESS_MAIN(TestBirdieObjectives)
#include "test_birdie_objectives.moc"
