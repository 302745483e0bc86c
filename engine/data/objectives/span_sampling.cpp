// TASKS.md's span sampling (birdie_objectives.hpp). The rule is taken literally: the decision at
// each position masks ℓ tokens with probability r'/ℓ, so the expected corrupted fraction is
// E[r'] / (1 + E[r'] − E[r']·E[1/ℓ]) and a masked span's mean length is 1 / E[1/ℓ] (spans are
// picked with weight 1/ℓ) — near r and below μ, not equal to them (docs/decisions.md,
// "Birdie objectives: span sampling taken literally").
#include <algorithm>
#include <cmath>

#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::data {

namespace {

// Poisson(μ) by inversion of the cumulative distribution (μ is a mean span length, at most a few
// dozen, so the walk is short and e^−μ does not underflow).
std::int32_t poisson(double mu, RandomStream& rng) {
    const double u = rng.uniform();
    double p = std::exp(-mu), cdf = p;
    std::int32_t k = 0;
    while (u >= cdf && k < 10000) {
        ++k;
        p *= mu / k;
        cdf += p;
    }
    return k;
}

}  // namespace

std::pair<std::int32_t, std::int32_t> span_length_bounds(double mean_span) {
    const auto lo = std::max<std::int32_t>(1, static_cast<std::int32_t>(std::ceil(mean_span / 3)));
    const auto hi = std::max(lo, static_cast<std::int32_t>(std::floor(3 * mean_span)));
    return {lo, hi};
}

void sample_spans(std::int32_t n, SpanParams p, RandomStream& rng, std::vector<Span>& spans) {
    const auto [lo, hi] = span_length_bounds(p.mean_span);
    const double r_lo = 0.5 * p.rate, r_hi = std::min(0.95, 2 * p.rate);
    spans.clear();
    std::int32_t pos = 0;
    while (pos < n) {
        const double r = r_lo + (r_hi - r_lo) * rng.uniform();
        const std::int32_t len = std::min(std::clamp(poisson(p.mean_span, rng), lo, hi), n - pos);
        if (rng.chance(r / len)) {
            spans.push_back({pos, len});
            pos += len;
        } else {
            ++pos;
        }
    }
}

}  // namespace routescope::data
