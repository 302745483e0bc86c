#include "analysis/sentence_sample.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "engine/core/error.hpp"

namespace routescope::analysis {

std::int64_t sentences_wanted(std::int64_t max_sentences, std::int64_t available) {
    if (max_sentences < 0)
        throw ConfigError("max_sentences must be 0 (every sentence) or more, got " +
                          std::to_string(max_sentences));
    return max_sentences > 0 ? max_sentences : available;
}

SentenceSample sample_sentences(const std::vector<std::int64_t>& row_lengths, std::int64_t m,
                                std::uint64_t seed) {
    if (m < 1)
        throw ConfigError("sample size M must be at least 1 (got " + std::to_string(m) + ")");
    SentenceSample sample;
    sample.requested = m;
    const auto n = static_cast<std::int64_t>(row_lengths.size());
    sample.available = n;
    std::mt19937_64 rng(seed);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
    std::iota(rows.begin(), rows.end(), std::int64_t{0});
    const std::int64_t take = std::min(m, n);
    if (take < n) {
        for (std::int64_t i = 0; i < take; ++i) {
            const auto j = i + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n - i));
            std::swap(rows[static_cast<std::size_t>(i)], rows[static_cast<std::size_t>(j)]);
        }
        rows.resize(static_cast<std::size_t>(take));
        std::sort(rows.begin(), rows.end());
    }
    sample.rows = rows;
    sample.tokens.reserve(rows.size());
    for (std::int64_t row : rows) {
        const auto length = static_cast<std::uint64_t>(row_lengths[static_cast<std::size_t>(row)]);
        sample.tokens.push_back(static_cast<std::int64_t>(rng() % length));
    }
    return sample;
}

}  // namespace routescope::analysis
