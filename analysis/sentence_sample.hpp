#pragma once
// The deterministic sample behind anisotropy and the global PCA: M stored rows of a layer, each
// with one random real (non-pad) token, so every token comes from a different context (ANALYSES.md
// §3). The rows and tokens are written into the result so an independent reference can use them.
#include <cstdint>
#include <vector>

namespace routescope::analysis {

struct SentenceSample {
    std::vector<std::int64_t> rows;    ///< ascending
    std::vector<std::int64_t> tokens;  ///< one per row, in 0..length−1
    std::int64_t requested = 0;
    std::int64_t available = 0;
};

/// Draws min(m, rows) distinct rows (partial Fisher–Yates on 0..n−1, then sorted) and a token per
/// row (uniform in 0..length−1), from std::mt19937_64 seeded with `seed`. Draws use `rng() % n`
/// rather than std::uniform_int_distribution, whose algorithm differs between standard libraries;
/// the modulo bias (n / 2^64) is negligible. m larger than the rows available takes every row.
/// The number of sentences an analysis samples: `max_sentences`, or every one of `available` when
/// it is 0. ConfigError for a negative value (a project's setting; the CLI refuses it at parsing).
std::int64_t sentences_wanted(std::int64_t max_sentences, std::int64_t available);

SentenceSample sample_sentences(const std::vector<std::int64_t>& row_lengths, std::int64_t m,
                                std::uint64_t seed);

}  // namespace routescope::analysis
