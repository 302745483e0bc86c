#include "engine/data/batcher.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "engine/core/error.hpp"
#include "engine/data/random_stream.hpp"

namespace routescope::data {

SplitIndices split_validation(std::int64_t n, double fraction, std::uint64_t seed) {
    if (!(fraction >= 0.0 && fraction < 1.0)) {
        throw ConfigError("validation fraction " + std::to_string(fraction) + " is outside [0, 1)");
    }
    std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
    std::iota(perm.begin(), perm.end(), std::int64_t{0});
    RandomStream rng(seed ^ kSplitSalt, 0, 0);
    rng.shuffle(perm);
    auto n_valid = static_cast<std::int64_t>(std::llround(fraction * static_cast<double>(n)));
    if (fraction > 0.0 && n >= 2) n_valid = std::clamp<std::int64_t>(n_valid, 1, n - 1);
    SplitIndices s;
    s.valid.assign(perm.begin(), perm.begin() + n_valid);
    s.train.assign(perm.begin() + n_valid, perm.end());
    std::sort(s.valid.begin(), s.valid.end());
    std::sort(s.train.begin(), s.train.end());
    return s;
}

std::vector<std::int64_t> epoch_order(std::int64_t n, std::uint64_t seed, std::int64_t epoch) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), std::int64_t{0});
    RandomStream rng(seed ^ kShuffleSalt, static_cast<std::uint32_t>(epoch),
                     static_cast<std::uint32_t>(static_cast<std::uint64_t>(epoch) >> 32));
    rng.shuffle(order);
    return order;
}

Batcher::Batcher(const SequenceSet& sequences, std::vector<std::int64_t> indices, int batch_size,
                 int len, std::int32_t pad_id, std::uint64_t seed, bool shuffle)
    : sequences_(sequences),
      indices_(std::move(indices)),
      batch_size_(batch_size),
      len_(len),
      pad_(pad_id),
      seed_(seed),
      shuffle_(shuffle) {
    if (indices_.empty()) throw ConfigError("batcher: no sequences to draw batches from");
    if (batch_size_ < 1) {
        throw ConfigError("train.batch_size: " + std::to_string(batch_size_) + " is below 1");
    }
    for (const std::int64_t i : indices_) {
        if (i < 0 || i >= sequences_.size()) {
            throw Error("batcher: sequence index " + std::to_string(i) + " is outside [0, " +
                        std::to_string(sequences_.size()) + ")");
        }
        if (static_cast<std::int64_t>(sequences_[i].size()) > len_) {
            throw ConfigError("data.seq_len: sequence " + std::to_string(i) + " has " +
                              std::to_string(sequences_[i].size()) + " tokens, more than " +
                              std::to_string(len_));
        }
    }
}

std::int64_t Batcher::item(std::int64_t k) {
    const auto n = static_cast<std::int64_t>(indices_.size());
    const std::int64_t e = k / n;
    if (!shuffle_) return indices_[static_cast<std::size_t>(k % n)];
    if (e != order_epoch_) {
        order_ = epoch_order(n, seed_, e);
        order_epoch_ = e;
    }
    return indices_[static_cast<std::size_t>(order_[static_cast<std::size_t>(k % n)])];
}

Batch Batcher::next() {
    Batch b;
    b.batch = batch_size_;
    b.len = len_;
    b.ids.assign(static_cast<std::size_t>(batch_size_) * static_cast<std::size_t>(len_), pad_);
    for (int r = 0; r < batch_size_; ++r) {
        const std::int64_t s = item(position_++);
        const auto seq = sequences_[s];
        std::copy(seq.begin(), seq.end(), b.ids.begin() + static_cast<std::ptrdiff_t>(r) * len_);
        b.lengths.push_back(static_cast<std::int32_t>(seq.size()));
        b.sequence.push_back(s);
    }
    return b;
}

void Batcher::seek(std::int64_t position) {
    if (position < 0) throw Error("batcher: negative data position " + std::to_string(position));
    position_ = position;
}

std::int64_t Batcher::batches_per_epoch() const {
    const auto n = static_cast<std::int64_t>(indices_.size());
    return (n + batch_size_ - 1) / batch_size_;
}

}  // namespace routescope::data
