#pragma once
// Batches of packed sequences for training and evaluation.
//
// The held-out split: a Philox permutation of the sequence indices under (seed ⊕ kSplitSalt);
// its first round(fraction · n) entries (at least one when fraction > 0 and n ≥ 2, never all)
// are validation, the rest training; both lists sorted.
//
// The batcher walks an endless stream of the given indices: item k of the stream is
// order(epoch = k / n)[k mod n], where order(e) is a Fisher–Yates permutation drawn from
// Philox under (seed ⊕ kShuffleSalt, step = e) (or the identity when shuffling is off). A batch
// is the next B items, crossing epoch boundaries, so the whole state is one number, position()
// = items consumed: what a checkpoint stores as data_position, and seek() resumes.
#include <cstdint>
#include <vector>

#include "engine/data/sequence_set.hpp"

namespace routescope::data {

struct SplitIndices {
    std::vector<std::int64_t> train;
    std::vector<std::int64_t> valid;
};

/// Error when fraction is outside [0, 1).
SplitIndices split_validation(std::int64_t n, double fraction, std::uint64_t seed);

/// Order of n items in epoch `epoch` (a permutation of 0..n−1).
std::vector<std::int64_t> epoch_order(std::int64_t n, std::uint64_t seed, std::int64_t epoch);

/// A batch [B, L]: ids padded with [PAD], lengths of the real (framed) sequences, and which
/// sequence each row holds.
struct Batch {
    int batch = 0;
    int len = 0;
    std::vector<std::int32_t> ids;
    std::vector<std::int32_t> lengths;
    std::vector<std::int64_t> sequence;
};

class Batcher {
public:
    /// Error when `indices` is empty or a sequence is longer than len.
    Batcher(const SequenceSet& sequences, std::vector<std::int64_t> indices, int batch_size,
            int len, std::int32_t pad_id, std::uint64_t seed, bool shuffle);

    Batch next();
    std::int64_t position() const { return position_; }
    void seek(std::int64_t position);
    std::int64_t epoch() const { return position_ / static_cast<std::int64_t>(indices_.size()); }
    /// Batches in one pass over the indices (the last may borrow from the next epoch).
    std::int64_t batches_per_epoch() const;

private:
    std::int64_t item(std::int64_t k);

    const SequenceSet& sequences_;
    std::vector<std::int64_t> indices_;
    int batch_size_;
    int len_;
    std::int32_t pad_;
    std::uint64_t seed_;
    bool shuffle_;
    std::int64_t position_ = 0;
    std::int64_t order_epoch_ = -1;
    std::vector<std::int64_t> order_;
};

}  // namespace routescope::data
