#include "engine/train/mlm_evaluation.hpp"

#include <algorithm>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/data/special_tokens.hpp"
#include "engine/train/host_batch.hpp"

namespace routescope::train {

MlmScore evaluate_mlm(models::Model& model, const SequenceSet& set, const data::MlmMasker& masker,
                      std::uint64_t seed, std::int64_t max_batches, dist::Communicator* comm) {
    const int B = model.batch_size(), L = model.length();
    const int ranks = comm ? comm->size() : 1, rank = comm ? comm->rank() : 0;
    const std::int64_t G = static_cast<std::int64_t>(B) * ranks;  // rows of a batch, all ranks
    if (set.seq_len() != L)
        throw Error("evaluate_mlm: sequences of " + std::to_string(set.seq_len()) +
                    " tokens for a model built for " + std::to_string(L));
    std::int64_t batches = (set.size() + G - 1) / G;
    if (max_batches > 0) batches = std::min(batches, max_batches);

    std::vector<std::int32_t> ids(static_cast<std::size_t>(B) * L);
    HostBatch batch(B, L, set.pad());  // the masked inputs and their targets
    MlmTally tally;
    for (std::int64_t k = 0; k < batches; ++k) {
        int rows = 0;
        for (int b = 0; b < B; ++b) {
            const std::int64_t i = k * G + static_cast<std::int64_t>(rank) * B + b;
            auto* row = ids.data() + static_cast<std::size_t>(b) * L;
            if (i < set.size()) {
                std::copy_n(set.ids(i), L, row);
                batch.length(b) = set.length(i);
                ++rows;
            } else {  // filler row: one [PAD], never chosen (a special), hence never scored
                std::fill_n(row, L, set.pad());
                batch.length(b) = 1;
            }
        }
        masker.apply_batch(ids.data(), batch.lengths(), B, L, batch.tokens(0), batch.labels(0),
                           seed ^ kEvalMaskSalt, static_cast<std::uint32_t>(k),
                           static_cast<std::uint32_t>(rank * B));
        for (int b = rows; b < B; ++b)
            std::fill_n(batch.labels(b), L, data::kIgnoreLabel);
        tally.add_batch(model, batch.view(HostBatch::Head::mlm), rows);
    }
    if (ranks > 1) tally.merge(*comm);
    return tally.score();
}

void MlmTally::merge(dist::Communicator& comm) {
    struct Part {
        double loss_sum;
        std::int64_t correct, targets, sequences;
    };
    const std::vector<Part> all =
        dist::gather_all(comm, Part{loss_sum_, correct_, targets_, sequences_});
    *this = MlmTally();
    for (const Part& p : all) {
        loss_sum_ += p.loss_sum;
        correct_ += p.correct;
        targets_ += p.targets;
        sequences_ += p.sequences;
    }
}

void MlmTally::add_batch(models::Model& model, const models::Batch& batch, int rows,
                         bool loss_only) {
    const auto positions =
        static_cast<std::size_t>(model.batch_size()) * static_cast<std::size_t>(model.length());
    std::int64_t targets = 0;
    for (std::size_t p = 0; p < positions; ++p)
        targets += batch.labels[p] != data::kIgnoreLabel;
    if (targets == 0) return;
    loss_sum_ += model.forward(batch, /*training=*/false) * static_cast<double>(targets);
    if (!loss_only) {
        // The argmax of every row, computed where the logits live (Model::readout).
        const std::vector<std::int32_t>& predicted = model.readout().argmax;
        for (std::size_t p = 0; p < positions; ++p) {
            if (batch.labels[p] == data::kIgnoreLabel) continue;
            correct_ += predicted[p] == batch.labels[p];
        }
    }
    targets_ += targets;
    sequences_ += rows;
}

MlmScore MlmTally::score() const {
    MlmScore s;
    s.targets = targets_;
    s.sequences = sequences_;
    if (targets_ > 0) {
        s.loss = loss_sum_ / static_cast<double>(targets_);
        s.accuracy = static_cast<double>(correct_) / static_cast<double>(targets_);
    }
    return s;
}

}  // namespace routescope::train
