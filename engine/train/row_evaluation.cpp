#include "engine/train/row_evaluation.hpp"

#include <algorithm>
#include <vector>

#include "engine/data/special_tokens.hpp"
#include "engine/train/host_batch.hpp"

namespace routescope::train {

MlmScore evaluate_rows(models::Model& model, std::int64_t n, const RowBuilder& build,
                       std::int64_t max_batches, dist::Communicator* comm, bool loss_only) {
    const int B = model.batch_size(), L = model.length();
    const int ranks = comm ? comm->size() : 1, rank = comm ? comm->rank() : 0;
    const std::int64_t G = static_cast<std::int64_t>(B) * ranks;
    std::int64_t batches = (n + G - 1) / G;
    if (max_batches > 0) batches = std::min(batches, max_batches);
    // The builder writes a row whole, padding it with the run's [PAD]; the id here fills only the
    // rows past the end, which are never scored and which no other row reads.
    HostBatch batch(B, L, data::kPadId);
    MlmTally tally;
    for (std::int64_t k = 0; k < batches; ++k) {
        int rows = 0;
        for (int b = 0; b < B; ++b) {
            const std::int64_t i = k * G + static_cast<std::int64_t>(rank) * B + b;
            if (i < n) {
                batch.length(b) = build(i, batch.row(b));
                ++rows;
            } else {
                batch.clear_row(b);  // never scored
            }
        }
        tally.add_batch(model, batch.view(HostBatch::Head::mlm, false, /*reset=*/true), rows,
                        loss_only);
    }
    if (ranks > 1) tally.merge(*comm);
    return tally.score();
}

}  // namespace routescope::train
