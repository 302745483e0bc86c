#include "engine/train/row_evaluation.hpp"

#include <algorithm>
#include <vector>

#include "engine/data/special_tokens.hpp"

namespace routescope::train {

MlmScore evaluate_rows(models::Model& model, std::int64_t n, const RowBuilder& build,
                       std::int64_t max_batches) {
    const int B = model.batch_size(), L = model.length();
    const int V = model.config().model.vocab_size;
    std::int64_t batches = (n + B - 1) / B;
    if (max_batches > 0) batches = std::min(batches, max_batches);
    const auto size = static_cast<std::size_t>(B) * L;
    std::vector<std::int32_t> tokens(size), labels(size), reset(size), lengths(B);
    double loss_sum = 0;
    std::int64_t correct = 0;
    MlmScore score;
    for (std::int64_t k = 0; k < batches; ++k) {
        int rows = 0;
        for (int b = 0; b < B; ++b) {
            const auto off = static_cast<std::size_t>(b) * L;
            RowView row{tokens.data() + off, labels.data() + off, reset.data() + off, L};
            const std::int64_t i = k * B + b;
            if (i < n) {
                lengths[b] = build(i, row);
                ++rows;
            } else {
                std::fill_n(row.tokens, L, data::kPadId);
                std::fill_n(row.labels, L, data::kIgnoreLabel);
                std::fill_n(row.reset, L, 0);
                lengths[b] = 1;
            }
        }
        std::int64_t targets = 0;
        for (auto t : labels)
            targets += t != data::kIgnoreLabel;
        if (targets == 0) continue;
        models::Batch batch;
        batch.tokens = tokens.data();
        batch.lengths = lengths.data();
        batch.labels = labels.data();
        batch.reset_mask = reset.data();
        loss_sum += model.forward(batch, /*training=*/false) * static_cast<double>(targets);
        const float* logits = model.logits();
        for (std::size_t p = 0; p < size; ++p) {
            if (labels[p] == data::kIgnoreLabel) continue;
            const float* r = logits + p * static_cast<std::size_t>(V);
            correct += std::max_element(r, r + V) - r == labels[p];
        }
        score.targets += targets;
        score.sequences += rows;
    }
    if (score.targets > 0) {
        score.loss = loss_sum / static_cast<double>(score.targets);
        score.accuracy = static_cast<double>(correct) / static_cast<double>(score.targets);
    }
    return score;
}

}  // namespace routescope::train
