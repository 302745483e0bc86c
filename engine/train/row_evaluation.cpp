#include "engine/train/row_evaluation.hpp"

#include <algorithm>
#include <vector>

#include "engine/data/special_tokens.hpp"

namespace routescope::train {

MlmScore evaluate_rows(models::Model& model, std::int64_t n, const RowBuilder& build,
                       std::int64_t max_batches, dist::Communicator* comm, bool loss_only) {
    const int B = model.batch_size(), L = model.length();
    const int ranks = comm ? comm->size() : 1, rank = comm ? comm->rank() : 0;
    const std::int64_t G = static_cast<std::int64_t>(B) * ranks;
    std::int64_t batches = (n + G - 1) / G;
    if (max_batches > 0) batches = std::min(batches, max_batches);
    const auto size = static_cast<std::size_t>(B) * L;
    std::vector<std::int32_t> tokens(size), labels(size), reset(size), lengths(B);
    MlmTally tally;
    for (std::int64_t k = 0; k < batches; ++k) {
        int rows = 0;
        for (int b = 0; b < B; ++b) {
            const auto off = static_cast<std::size_t>(b) * L;
            RowView row{tokens.data() + off, labels.data() + off, reset.data() + off, L};
            const std::int64_t i = k * G + static_cast<std::int64_t>(rank) * B + b;
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
        models::Batch batch;
        batch.tokens = tokens.data();
        batch.lengths = lengths.data();
        batch.labels = labels.data();
        batch.reset_mask = reset.data();
        tally.add_batch(model, batch, rows, loss_only);
    }
    if (ranks > 1) tally.merge(*comm);
    return tally.score();
}

}  // namespace routescope::train
