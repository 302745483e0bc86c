#include "engine/train/objective_rows.hpp"

#include <algorithm>

#include "engine/data/special_tokens.hpp"
#include "engine/models/birdie_block.hpp"

namespace routescope::train {

namespace {

using models::kResetCausal;
using models::kResetNewSample;

// Scores the next token at t ∈ [first, length − 1) and marks [causal_from, L) as causal region.
void targets_and_mask(RowView row, std::int32_t length, std::int32_t first,
                      std::int32_t causal_from) {
    for (int t = 0; t < row.L; ++t) {
        row.labels[t] = t >= first && t + 1 < length ? row.tokens[t + 1] : data::kIgnoreLabel;
        row.reset[t] = (t == 0 ? kResetNewSample : 0) | (t >= causal_from ? kResetCausal : 0);
    }
}

}  // namespace

std::int32_t clm_row(const std::int32_t* ids, std::int32_t length, std::int32_t pad, RowView row) {
    length = std::min<std::int32_t>(length, row.L);
    std::copy_n(ids, length, row.tokens);
    std::fill(row.tokens + length, row.tokens + row.L, pad);
    targets_and_mask(row, length, 0, 0);
    return length;
}

std::int32_t prefix_lm_row(const std::int32_t* ids, std::int32_t length, std::int32_t prefix,
                           std::int32_t pad, RowView row) {
    length = std::min<std::int32_t>(length, row.L);
    prefix = std::clamp<std::int32_t>(prefix, 1, length);
    std::copy_n(ids, length, row.tokens);
    std::fill(row.tokens + length, row.tokens + row.L, pad);
    targets_and_mask(row, length, prefix - 1, prefix);
    return length;
}

std::int32_t birdie_row(const data::ObjectiveSample& sample, std::int32_t paradigm,
                        std::int32_t start, std::int32_t pad, RowView row,
                        std::int32_t* start_position) {
    std::int32_t n = 0;
    const auto put = [&](std::int32_t id) {
        if (n < row.L) row.tokens[n] = id;
        ++n;
    };
    put(paradigm);
    for (auto id : sample.input)
        put(id);
    const std::int32_t s = n;
    put(start);
    for (auto id : sample.target)
        put(id);
    const std::int32_t length = std::min<std::int32_t>(n, row.L);
    std::fill(row.tokens + length, row.tokens + row.L, pad);
    targets_and_mask(row, length, s, s + 1);
    if (start_position) *start_position = s;
    return length;
}

}  // namespace routescope::train
