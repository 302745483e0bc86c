#pragma once
// Token sequences of varying length in one flat buffer (offsets into it), what packing a corpus
// produces and the batcher draws from. Sequences are stored framed ([CLS] … [SEP]) and unpadded.
#include <cstdint>
#include <span>
#include <vector>

namespace routescope::data {

class SequenceSet {
public:
    void add(std::span<const std::int32_t> tokens) {
        tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
        offsets_.push_back(static_cast<std::int64_t>(tokens_.size()));
    }
    std::int64_t size() const { return static_cast<std::int64_t>(offsets_.size()) - 1; }
    std::span<const std::int32_t> operator[](std::int64_t i) const {
        const auto b = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(i)]);
        const auto e = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(i) + 1]);
        return {tokens_.data() + b, e - b};
    }
    std::int64_t total_tokens() const { return static_cast<std::int64_t>(tokens_.size()); }

private:
    std::vector<std::int32_t> tokens_;
    std::vector<std::int64_t> offsets_{0};
};

}  // namespace routescope::data
