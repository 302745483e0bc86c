// Associative recall / phone book (the Birdie paper's retrieval task): entries
// "First Last : ddd - ddd - dddd ;" then the query "First Last : [MASK]×3 - [MASK]×3 - [MASK]×4";
// the targets are the queried entry's ten digits, scored by exact match. Names come from a
// generator (first names of two syllables, last names of three, one token each) and every full
// name appears once per book. Input: [CLS] entries [SEP] query [SEP].
// Attributes: "entries" (the book's size) and "query_position" (0-based index of the queried
// entry).
#include <set>

#include "engine/data/task_builder.hpp"

namespace routescope::data {

namespace {
const char* const kSyllables[] = {"ka", "lo", "mi",  "ren", "ta",  "vu", "pol", "se",
                                  "di", "an", "qui", "zo",  "bri", "ul", "fen", "go"};
constexpr int kFirstNames = 64, kLastNames = 64;

std::string make_name(int index, int syllables) {
    std::string name;
    for (int s = 0; s < syllables; ++s) {
        name += kSyllables[index % 16];
        index = index / 16 + 7 * s + 3;  // varies later syllables with the index
    }
    name[0] = static_cast<char>(name[0] - 'a' + 'A');
    return name;
}
}  // namespace

TaskData generate_phone_book(const TaskParams& p) {
    const int lo = or_default(p.min_entries, 4), hi = or_default(p.max_entries, 16);
    // max_entries against its own bound first: min_entries = max_entries = 2^31 − 1 was blamed on
    // max_entries with the empty range [2147483647, 512].
    require_range("phone-book", "max_entries", hi, 1, 512);
    require_range("phone-book", "min_entries", lo, 1, hi);
    TaskData data = make_task_data("phone-book", TaskMetric::ExactMatch);
    TaskVocab vocab;
    std::vector<std::int32_t> firsts, lasts, digits;
    std::set<std::string> used;
    for (int i = 0; firsts.size() < kFirstNames; ++i)
        if (used.insert(make_name(i, 2)).second) firsts.push_back(vocab.add(make_name(i, 2)));
    for (int i = 0; lasts.size() < kLastNames; ++i)
        if (used.insert(make_name(i * 5 + 1, 3)).second)
            lasts.push_back(vocab.add(make_name(i * 5 + 1, 3)));
    for (int d = 0; d < 10; ++d)
        digits.push_back(vocab.add(std::to_string(d)));
    const std::int32_t colon = vocab.add(":"), dash = vocab.add("-"), semicolon = vocab.add(";");
    data.vocab = vocab.pieces();
    generate_splits(data, p, [&](RandomStream& rng) {
        const auto n = static_cast<int>(rng.between(lo, hi));
        std::vector<std::pair<std::int32_t, std::int32_t>> names;
        std::set<std::pair<std::int32_t, std::int32_t>> seen;
        while (static_cast<int>(names.size()) < n) {
            const std::pair<std::int32_t, std::int32_t> name{firsts[rng.below(firsts.size())],
                                                             lasts[rng.below(lasts.size())]};
            if (seen.insert(name).second) names.push_back(name);
        }
        std::vector<std::vector<std::int32_t>> numbers(static_cast<std::size_t>(n));
        for (auto& number : numbers)
            for (int d = 0; d < 10; ++d)
                number.push_back(digits[rng.below(10)]);
        const auto q = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(n)));
        TaskExample e;
        e.input.push_back(kClsId);
        const auto number_tokens = [&](const std::vector<std::int32_t>& number, bool masked) {
            for (int d = 0; d < 10; ++d) {
                if (d == 3 || d == 6) {
                    e.input.push_back(dash);
                    e.targets.push_back(kIgnoreLabel);
                }
                e.input.push_back(masked ? kMaskId : number[static_cast<std::size_t>(d)]);
                e.targets.push_back(masked ? number[static_cast<std::size_t>(d)] : kIgnoreLabel);
            }
        };
        e.targets.push_back(kIgnoreLabel);
        const auto push = [&](std::int32_t t) {
            e.input.push_back(t);
            e.targets.push_back(kIgnoreLabel);
        };
        for (std::size_t i = 0; i < names.size(); ++i) {
            push(names[i].first);
            push(names[i].second);
            push(colon);
            number_tokens(numbers[i], false);
            push(semicolon);
        }
        push(kSepId);
        push(names[q].first);
        push(names[q].second);
        push(colon);
        number_tokens(numbers[q], true);
        push(kSepId);
        e.attributes["entries"] = n;
        e.attributes["query_position"] = static_cast<double>(q);
        return e;
    });
    return data;
}

}  // namespace routescope::data
