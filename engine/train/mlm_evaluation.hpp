#pragma once
// MLM evaluation of a model on packed sequences: loss (mean cross-entropy over every masked
// target, the training loss's definition) and accuracy (argmax of the logits equals the original
// token, over the same targets). The masks are drawn like training masks but from the evaluation
// seed and the batch's index, so the same sequences give the same masked set at every evaluation
// of a run and the eval-loss curve compares like with like.
#include <cstdint>
#include <limits>

#include "engine/data/mlm_masking.hpp"
#include "engine/dist/communicator.hpp"
#include "engine/models/model.hpp"
#include "engine/train/packed_sequences.hpp"

namespace routescope::train {

/// Salt of the evaluation masks' seed (ASCII "mlm_eval"), apart from the training masks' salt.
inline constexpr std::uint64_t kEvalMaskSalt = 0x6D6C6D5F6576616CULL;

/// With no target scored, loss and accuracy are NaN (a log record's null): nothing was measured.
/// They were 0, which a log reported as a perfect loss and Birdie's mixture controller learned from
/// (an arm whose validation rows of a short held-out text held no span).
struct MlmScore {
    double loss =
        std::numeric_limits<double>::quiet_NaN();  ///< mean cross-entropy per target (nats)
    double accuracy =
        std::numeric_limits<double>::quiet_NaN();  ///< fraction of targets predicted exactly
    std::int64_t targets = 0;
    std::int64_t sequences = 0;
};

/// Sums the scores of evaluation batches: shared by the MLM evaluation and the objective rows'
/// evaluation (row_evaluation), which differ only in how they build a batch.
class MlmTally {
public:
    /// One non-training forward of `batch` (labels kIgnoreLabel where a position is not scored);
    /// adds its loss, targets and argmax hits, and `rows` sequences. A batch without targets is
    /// skipped (no forward).
    /// loss_only: the loss alone (no argmax read-out; accuracy then counts no hit), what Birdie's
    /// mixture update needs: one scalar down per batch.
    void add_batch(models::Model& model, const models::Batch& batch, int rows,
                   bool loss_only = false);
    MlmScore score() const;
    /// Every rank's tally added in rank order (a collective), so each rank scores them all.
    void merge(dist::Communicator& comm);

private:
    double loss_sum_ = 0;
    std::int64_t correct_ = 0, targets_ = 0, sequences_ = 0;
};

/// Evaluates the first `max_batches` batches of `set` (0 = all of it) in batches of the model's
/// batch size (a last partial batch is filled with unscored rows). The model's length must equal
/// set.seq_len(). Dropout off; nothing is recorded for a backward pass. With a communicator of
/// N ranks a batch is N · B rows, rank r scoring rows r·B … r·B + B − 1 of each, and the tallies
/// are merged: the score of one process with batch N · B (within rounding), on every rank.
MlmScore evaluate_mlm(models::Model& model, const SequenceSet& set, const data::MlmMasker& masker,
                      std::uint64_t seed, std::int64_t max_batches = 0,
                      dist::Communicator* comm = nullptr);

}  // namespace routescope::train
