#pragma once
// The host arrays of one batch — B rows of L tokens: ids, segment ids, MLM targets, Birdie's reset
// mask, lengths, class labels — and the models::Batch that views them: the one place a batch's host
// side is kept, for the objectives (engine/train/host_batch.hpp adds the rows they write),
// evaluation, task scoring and dumps. Model::forward validates and uploads what the view points
// at; the arrays are reused from batch to batch, so filling one allocates nothing.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/data/special_tokens.hpp"
#include "engine/models/model.hpp"

namespace routescope::models {

class HostBatch {
public:
    /// `pad`: the id of the empty positions (the tokenizer's [PAD]). No default: a default of 0
    /// padded fine-tuning and evaluation with a SentencePiece model's <unk> where its [PAD] is 3.
    HostBatch(int B, int L, std::int32_t pad)
        : B_(B),
          L_(L),
          tokens_(std::size_t(B) * L),
          types_(tokens_.size()),
          labels_(tokens_.size()),
          reset_(tokens_.size()),
          lengths_(std::size_t(B)),
          classes_(std::size_t(B)),
          pad_(pad) {
        clear();
    }

    int rows() const { return B_; }
    int length() const { return L_; }

    /// Every row empty: [PAD] ids, segment 0, no target (−100), no reset bit, length 1, class 0.
    /// An empty row is never scored (no target) and costs the model nothing it reports.
    void clear() {
        for (int b = 0; b < B_; ++b)
            clear_row(b);
    }
    void clear_row(int b) {
        const auto off = offset(b);
        std::fill_n(tokens_.begin() + off, L_, pad_);
        std::fill_n(types_.begin() + off, L_, 0);
        std::fill_n(labels_.begin() + off, L_, data::kIgnoreLabel);
        std::fill_n(reset_.begin() + off, L_, 0);
        lengths_[std::size_t(b)] = 1;
        classes_[std::size_t(b)] = 0;
    }

    std::int32_t* tokens(int b) { return tokens_.data() + offset(b); }
    std::int32_t* types(int b) { return types_.data() + offset(b); }
    std::int32_t* labels(int b) { return labels_.data() + offset(b); }
    std::int32_t* reset(int b) { return reset_.data() + offset(b); }
    const std::int32_t* labels(int b) const { return labels_.data() + offset(b); }
    std::int32_t& length(int b) { return lengths_[std::size_t(b)]; }
    std::int32_t* lengths() { return lengths_.data(); }
    std::int32_t& class_label(int b) { return classes_[std::size_t(b)]; }

    /// The view: MLM targets (`labels`) or class labels; segments and the reset mask when asked.
    enum class Head { mlm, classification };
    models::Batch view(Head head, bool types = false, bool reset = false) const {
        models::Batch batch;
        batch.tokens = tokens_.data();
        batch.lengths = lengths_.data();
        batch.types = types ? types_.data() : nullptr;
        if (head == Head::mlm)
            batch.labels = labels_.data();
        else
            batch.class_labels = classes_.data();
        batch.reset_mask = reset ? reset_.data() : nullptr;
        return batch;
    }

protected:
    std::size_t offset(int b) const { return std::size_t(b) * std::size_t(L_); }

    int B_, L_;
    std::vector<std::int32_t> tokens_, types_, labels_, reset_, lengths_, classes_;
    std::int32_t pad_;
};

}  // namespace routescope::models
