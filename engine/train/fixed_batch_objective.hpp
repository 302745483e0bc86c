#pragma once
// An Objective that trains on one host batch, repeated every micro-batch: what `bench train` times
// and what tests drive when they need the training loop's own step (zeroing, forward, backward,
// scaling, clipping, AdamW, frozen parameters, logging) on data they chose. Evaluation does
// nothing; the data position advances by the batch's rows as with any objective.
#include <cstdint>

#include "engine/models/model.hpp"
#include "engine/train/training_loop.hpp"

namespace routescope::train {

class FixedBatchObjective final : public Objective {
public:
    /// `batch` (host memory, `rows` rows of which `tokens` are counted as seen) must outlive the
    /// run.
    FixedBatchObjective(const models::Batch& batch, int rows, std::int64_t tokens)
        : batch_(batch), rows_(rows), tokens_(tokens) {}

    std::int64_t training_examples() const override { return rows_; }
    MicroBatch micro_batch(std::span<const std::int64_t> /*examples*/, std::int64_t /*step*/,
                           std::int64_t /*row_base*/) override {
        return {batch_, tokens_};
    }
    void evaluate(TrainingLoop& /*loop*/) override {}

private:
    models::Batch batch_;
    int rows_;
    std::int64_t tokens_;
};

}  // namespace routescope::train
