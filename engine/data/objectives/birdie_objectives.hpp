#pragma once
// The Birdie pre-training objectives as sample transforms (TASKS.md "Objectives"; Blouir et al.
// 2024). Each turns an original token sequence into an ObjectiveSample: the (corrupted) input the
// model reads after the objective's paradigm token, and the target it must produce after [start]
// (engine/train/objective_rows.hpp lays the two out in a training row). One file per objective:
//
//   infilling          spans (span_sampling.cpp) replaced by sentinels;
//                      target = S_k + span_k for every span, in order
//   autoencoding       the same corruption; target = the whole original
//   deshuffling        a fraction (0.5 or 1) of the positions permuted among themselves;
//                      target = the original
//   copying            input = target = the original
//   selective copying  input = the original as context, then k queries
//                      "[query] before S_i after" (the few tokens around span i);
//                      target = S_i + span_i for every query, in query order, then [done]
//   prefix LM          the original split at a random point (prefix_split); input = prefix,
//                      target = the rest
//   next token         input empty, target = the original
//
// Every draw comes from the RandomStream the caller passes, so a sample is a pure function of
// that stream's (seed, step, stream) and the original.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/data/objectives/birdie_vocabulary.hpp"
#include "engine/data/random_stream.hpp"

namespace routescope::data {

struct ObjectiveSample {
    std::vector<std::int32_t> input;
    std::vector<std::int32_t> target;
};

/// Corruption rate r and mean span length μ of TASKS.md's span sampling.
struct SpanParams {
    double rate = 0.15;
    double mean_span = 3.0;
};

struct Span {
    std::int32_t begin = 0;
    std::int32_t length = 0;
};

/// The clip of a span length: [max(1, ⌈μ/3⌉), max(that, ⌊3μ⌋)] (integers: TASKS.md's
/// [max(1, μ/3), 3μ] rounded inwards).
std::pair<std::int32_t, std::int32_t> span_length_bounds(double mean_span);

/// TASKS.md's span sampling over positions [0, n): at each position draw r' ~ U(0.5r,
/// min(0.95, 2r)) and ℓ ~ Poisson(μ) clipped by span_length_bounds (and to the positions left);
/// with probability r'/ℓ the next ℓ positions form a span, else one position is kept. Spans are
/// returned in order, disjoint (adjacent spans stay separate).
/// Into `spans` (cleared first; its capacity is reused).
void sample_spans(std::int32_t n, SpanParams p, RandomStream& rng, std::vector<Span>& spans);
inline std::vector<Span> sample_spans(std::int32_t n, SpanParams p, RandomStream& rng) {
    std::vector<Span> spans;
    sample_spans(n, p, rng, spans);
    return spans;
}

// Every transform writes into a caller's ObjectiveSample (both vectors replaced, their capacity
// reused: the Birdie objective's row builders allocate nothing once warm).
void infilling(std::span<const std::int32_t> original, SpanParams p, const BirdieVocabulary& vocab,
               RandomStream& rng, ObjectiveSample& out);
void autoencoding(std::span<const std::int32_t> original, SpanParams p,
                  const BirdieVocabulary& vocab, RandomStream& rng, ObjectiveSample& out);
/// `fraction` of the positions (rounded to the nearest count) are chosen uniformly and their
/// tokens permuted uniformly among them (a chosen position may keep its token by chance).
void deshuffling(std::span<const std::int32_t> original, double fraction, RandomStream& rng,
                 ObjectiveSample& out);
void copying(std::span<const std::int32_t> original, ObjectiveSample& out);

struct SelectiveCopyingParams {
    std::int32_t queries = 3;   ///< k
    std::int32_t context = 3;   ///< tokens shown before and after each span
    std::int32_t min_span = 2;  ///< span lengths uniform in [min_span, max_span]
    std::int32_t max_span = 6;
};
/// Input and target sizes: n + k·(2·context + 2) and at most k·(max_span + 1) + 1.
void selective_copying(std::span<const std::int32_t> original, SelectiveCopyingParams p,
                       const BirdieVocabulary& vocab, RandomStream& rng, ObjectiveSample& out);

/// The split point of a prefix-LM sample of n ≥ 2 tokens: φ ~ U(max(0, 2f − 1), min(1, 2f)) (mean
/// f = train.prefix_fraction), p = round(φ·n) clamped to [1, n − 1]; n < 2 gives n (no target).
std::int32_t prefix_split(std::int32_t n, double fraction, RandomStream& rng);
void prefix_lm(std::span<const std::int32_t> original, double fraction, RandomStream& rng,
               ObjectiveSample& out);
void next_token(std::span<const std::int32_t> original, ObjectiveSample& out);

}  // namespace routescope::data
